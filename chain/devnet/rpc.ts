// JSON-RPC 2.0 over HTTP: single and batch requests, the error codes of a
// real node, CORS for the browser webmail, a request body limit. Handlers are
// synchronous against the bank, so a batch sees one consistent state.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { BankHaltedError } from './bank.ts';
import { toJsonText } from './json-text.ts';
import type { RpcContext, RpcMethod } from './rpc-context.ts';
import { RpcCode, RpcError } from './rpc-errors.ts';
import { accountMethods } from './rpc-methods-accounts.ts';
import { chainMethods } from './rpc-methods-chain.ts';
import { txMethods } from './rpc-methods-tx.ts';

export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
const MAX_BATCH = 1000;

const METHODS = new Map<string, RpcMethod>(
  Object.entries({ ...chainMethods, ...accountMethods, ...txMethods }),
);

export function rpcMethodNames(): string[] {
  return [...METHODS.keys()].sort();
}

type Id = string | number | null;
type Response = { jsonrpc: '2.0'; result?: unknown; error?: unknown; id: Id };

const errorResponse = (id: Id, err: RpcError): Response => ({ jsonrpc: '2.0', error: err.toJson(), id });

function isId(v: unknown): v is Id {
  return v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** Runs one request object; null for a notification (no id), which gets no response. */
function handleOne(request: unknown, ctx: RpcContext): Response | null {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return errorResponse(null, new RpcError(RpcCode.InvalidRequest, 'Invalid request'));
  }
  const req = request as Record<string, unknown>;
  const hasId = 'id' in req;
  const id = hasId && isId(req.id) ? req.id : null;
  if (req.jsonrpc !== '2.0' || typeof req.method !== 'string' || (hasId && !isId(req.id))) {
    return errorResponse(id, new RpcError(RpcCode.InvalidRequest, 'Invalid request'));
  }
  const method = METHODS.get(req.method);
  let response: Response;
  if (!method) {
    response = errorResponse(id, new RpcError(RpcCode.MethodNotFound, 'Method not found'));
  } else if (req.params !== undefined && req.params !== null && !Array.isArray(req.params)) {
    response = errorResponse(
      id,
      new RpcError(RpcCode.InvalidParams, 'Invalid params: expected an array of parameters'),
    );
  } else {
    try {
      const params = (req.params as unknown[] | undefined) ?? [];
      ctx.fidelity?.checkCall(req.method, params);
      const result = method(params, ctx);
      response = { jsonrpc: '2.0', result, id };
    } catch (err) {
      if (err instanceof RpcError) response = errorResponse(id, err);
      else if (err instanceof BankHaltedError) {
        response = errorResponse(
          id,
          new RpcError(RpcCode.NodeUnhealthy, 'Node is unhealthy', { reason: err.message }),
        );
      } else {
        ctx.logger.error({ err, method: req.method }, 'devnet RPC handler failed');
        response = errorResponse(id, new RpcError(RpcCode.Internal, 'Internal error'));
      }
    }
  }
  return hasId ? response : null;
}

/** The JSON-RPC layer without HTTP: request text in, response text out ('' = nothing to send). */
export function handleRpcText(text: string, ctx: RpcContext): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return toJsonText(errorResponse(null, new RpcError(RpcCode.ParseError, 'Parse error')));
  }
  return handleRpcBody(body, ctx);
}

/** The JSON-RPC layer on a parsed body. */
function handleRpcBody(body: unknown, ctx: RpcContext): string {
  if (!Array.isArray(body)) {
    const response = handleOne(body, ctx);
    return response ? toJsonText(response) : '';
  }
  if (body.length === 0)
    return toJsonText(errorResponse(null, new RpcError(RpcCode.InvalidRequest, 'Invalid request')));
  if (body.length > MAX_BATCH) {
    return toJsonText(
      errorResponse(
        null,
        new RpcError(RpcCode.InvalidRequest, `Invalid request: batch larger than ${MAX_BATCH}`),
      ),
    );
  }
  const responses = body.map((r) => handleOne(r, ctx)).filter((r): r is Response => r !== null);
  return responses.length > 0 ? toJsonText(responses) : '';
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-max-age': '86400',
};

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { ...CORS_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** A provider's 429 body, JSON-RPC shaped (the first call's id). */
function rateLimited(calls: unknown[]): Response {
  const first = calls[0] as { id?: unknown } | undefined;
  return {
    jsonrpc: '2.0',
    error: { code: 429, message: 'Too many requests for a specific RPC call, contact your app developer.' },
    id: first && isId(first.id) ? first.id : null,
  };
}

/** Agave answers an oversized body with jsonrpc-http-server's plain-text 413. */
function tooLarge(res: ServerResponse, ctx: RpcContext): void {
  if (ctx.fidelity?.agaveLimits) {
    ctx.fidelity.noteAgaveRefusal();
    send(res, 413, 'request body size exceeds allowed maximum', 'text/plain; charset=utf-8');
    return;
  }
  send(
    res,
    413,
    toJsonText(errorResponse(null, new RpcError(RpcCode.InvalidRequest, 'Request body too large'))),
  );
}

export function createRpcListener(ctx: RpcContext, configuredMax = DEFAULT_MAX_BODY_BYTES): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const maxBodyBytes = ctx.fidelity ? ctx.fidelity.maxBodyBytes(configuredMax) : configuredMax;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...CORS_HEADERS,
        'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'content-type',
      });
      res.end();
      return;
    }
    if (req.method === 'GET' && req.url?.split('?')[0] === '/health') {
      send(res, 200, ctx.bank.halted ? 'unknown' : 'ok', 'text/plain');
      return;
    }
    if (req.method !== 'POST') {
      send(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain');
      return;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      tooLarge(res, ctx);
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let aborted = false;
    req.on('data', (chunk: Buffer) => {
      if (aborted) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        aborted = true;
        tooLarge(res, ctx);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (aborted) return;
      const text = Buffer.concat(chunks).toString('utf8');
      const fidelity = ctx.fidelity;
      if (!fidelity) {
        send(res, 200, handleRpcText(text, ctx));
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const calls = Array.isArray(body) ? body : [body];
      const retryAfter = fidelity.admit(Math.max(1, calls.length));
      if (retryAfter !== null) {
        res.writeHead(429, {
          ...CORS_HEADERS,
          'content-type': 'application/json',
          'retry-after': String(retryAfter),
        });
        res.end(toJsonText(rateLimited(calls)));
        return;
      }
      const out =
        body === undefined
          ? toJsonText(errorResponse(null, new RpcError(RpcCode.ParseError, 'Parse error')))
          : handleRpcBody(body, ctx);
      const methods = calls.map((c) => (c as { method?: unknown } | null)?.method).filter(isString);
      const delay = fidelity.programAccountsDelay(methods);
      if (delay > 0) setTimeout(() => send(res, 200, out), delay).unref();
      else send(res, 200, out);
    });
    req.on('error', () => {
      aborted = true;
    });
  };
}
