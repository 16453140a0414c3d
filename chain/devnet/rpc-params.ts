// Parameter parsing for the RPC methods: positional params as real nodes
// take them, with Invalid params (-32602) for anything malformed.
import bs58 from 'bs58';
import type { Address } from './account-store.ts';
import type { Commitment } from './bank.ts';
import { invalidParam, invalidParams, RpcCode, RpcError, rpcInvalid } from './rpc-errors.ts';

export type Config = Record<string, unknown>;

export function param(params: unknown[], index: number, what: string): unknown {
  if (index >= params.length || params[index] === undefined) {
    throw invalidParams(`missing ${what} (parameter ${index + 1})`);
  }
  return params[index];
}

export function stringParam(value: unknown, what: string): string {
  if (typeof value !== 'string') throw invalidParams(`${what}: expected a string`);
  return value;
}

export function decodeBase58(text: string, length: number): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(text);
  } catch {
    throw invalidParam('Invalid');
  }
  if (bytes.length !== length) throw invalidParam('WrongSize');
  return bytes;
}

export function pubkeyParam(value: unknown, what = 'pubkey'): Address {
  const text = stringParam(value, what);
  // Quick length screen: 32 bytes are 32–44 base58 characters.
  if (text.length > 44) throw invalidParam('WrongSize');
  decodeBase58(text, 32);
  return text;
}

export function signatureParam(value: unknown): string {
  const text = stringParam(value, 'signature');
  if (text.length > 88) throw invalidParam('WrongSize');
  decodeBase58(text, 64);
  return text;
}

export function configParam(params: unknown[], index: number): Config {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalidParams(`expected a config object at parameter ${index + 1}`);
  return value as Config;
}

export function optionalBool(config: Config, key: string): boolean {
  const v = config[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalidParams(`${key}: expected a boolean`);
  return v;
}

export function optionalString(config: Config, key: string): string | undefined {
  const v = config[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidParams(`${key}: expected a string`);
  return v;
}

export function integer(value: unknown, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidParams(`${what}: expected an integer in ${min}..${max}`);
  }
  return value;
}

export function optionalInteger(config: Config, key: string): number | undefined {
  const v = config[key];
  return v === undefined || v === null ? undefined : integer(v, key);
}

const COMMITMENTS: Record<string, Commitment> = {
  processed: 'processed',
  recent: 'processed',
  confirmed: 'confirmed',
  single: 'confirmed',
  singleGossip: 'confirmed',
  finalized: 'finalized',
  max: 'finalized',
  root: 'finalized',
};

/** A real node's default commitment is finalized. */
export function commitmentParam(config: Config): Commitment {
  const v = config.commitment;
  if (v === undefined || v === null) return 'finalized';
  const c = typeof v === 'string' ? COMMITMENTS[v] : undefined;
  if (!c) throw invalidParams(`unknown commitment ${JSON.stringify(v)}`);
  return c;
}

/** Refuses `minContextSlot` beyond what the node has reached. */
export function checkMinContextSlot(config: Config, contextSlot: number): void {
  const min = optionalInteger(config, 'minContextSlot');
  if (min !== undefined && min > contextSlot) {
    throw new RpcError(RpcCode.MinContextSlotNotReached, 'Minimum context slot has not been reached', {
      contextSlot,
    });
  }
}

export function atLeastConfirmed(config: Config): 'confirmed' | 'finalized' {
  const c = commitmentParam(config);
  if (c === 'processed') throw rpcInvalid('Method does not support commitment below `confirmed`');
  return c;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict (padded, no stray characters) base64, as real nodes decode it. */
export function decodeBase64Strict(text: string): Uint8Array | null {
  if (!BASE64.test(text)) return null;
  return new Uint8Array(Buffer.from(text, 'base64'));
}
