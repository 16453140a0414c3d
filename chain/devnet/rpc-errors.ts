// JSON-RPC errors with the codes and texts a Solana node uses.

export const RpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  Internal: -32603,
  PreflightFailure: -32002,
  SignatureVerificationFailure: -32003,
  BlockNotAvailable: -32004,
  NodeUnhealthy: -32005,
  UnsupportedTransactionVersion: -32015,
  MinContextSlotNotReached: -32016,
} as const;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  toJson(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** -32602 with a node-specific message as is ("invalid transaction: …", "Too many inputs provided; max 256"). */
export function rpcInvalid(message: string): RpcError {
  return new RpcError(RpcCode.InvalidParams, message);
}

/** -32602 for a parameter of the wrong type or shape, prefixed as jsonrpc-core does. */
export function invalidParams(detail: string): RpcError {
  return new RpcError(RpcCode.InvalidParams, `Invalid params: ${detail}`);
}

/** The texts real nodes use for a bad single parameter ("Invalid param: WrongSize"). */
export function invalidParam(detail: string): RpcError {
  return new RpcError(RpcCode.InvalidParams, `Invalid param: ${detail}`);
}
