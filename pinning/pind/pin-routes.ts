// pind's pin surface: `POST /pins` (raw bytes → 201 {cid, size}) and
// `GET /pins/{cid}` (status). Optional bearer token. Pins are never released
// over HTTP: removal is the local `sealpost pind rm` command.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../src/core/log.ts';
import { InvalidCidError, normalizeCid } from '../../src/mail/cid.ts';
import { bearerMatches, methodNotAllowed, sendError, sendJson } from './http.ts';
import type { PindStore, PinRecord } from './store.ts';

export interface PindContext {
  store: PindStore;
  maxPinBytes: number;
  /** sha256 of the bearer token, or null when the pin surface is open. */
  tokenDigest: Buffer | null;
  logger: Logger;
}

// An over-cap upload is read to its end (and thrown away) so the client gets
// to see the 413 instead of a reset connection; past this much extra, the
// connection is closed instead.
const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;

/** The client closed the connection before its upload ended; nothing to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('client went away before the upload ended');
    this.name = 'ClientGoneError';
  }
}

type Body = { kind: 'ok'; chunks: Uint8Array[]; size: number } | { kind: 'too_large'; drained: boolean };

function readBody(req: IncomingMessage, max: number): Promise<Body> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > max) {
        over = true;
        chunks.length = 0;
        if (size > max + DRAIN_LIMIT_BYTES) {
          req.pause();
          resolve({ kind: 'too_large', drained: false });
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? { kind: 'too_large', drained: true } : { kind: 'ok', chunks, size }));
    req.on('error', () => reject(new ClientGoneError()));
    req.on('close', () => {
      if (!req.complete) reject(new ClientGoneError());
    });
  });
}

/** The answer for an upload over the cap; closes the connection when the body was not drained. */
export function sendTooLarge(res: ServerResponse, max: number, drained: boolean): void {
  sendError(
    res,
    413,
    'payload_too_large',
    `body exceeds max_pin_bytes (${max} bytes)`,
    drained ? {} : { connection: 'close' },
  );
}

export function declaredLength(req: IncomingMessage): number | null {
  const v = req.headers['content-length'];
  if (v === undefined) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

export function statusBody(record: PinRecord): Record<string, unknown> {
  return { cid: record.cid, size: record.size, pinned: true, pinned_at: record.pinned_at };
}

export async function handlePins(
  ctx: PindContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (ctx.tokenDigest && !bearerMatches(req, ctx.tokenDigest)) {
    req.resume();
    sendError(res, 401, 'unauthorized', 'missing or wrong bearer token', {
      'www-authenticate': 'Bearer realm="pind"',
    });
    return;
  }
  if (path === '/pins' || path === '/pins/') {
    if (req.method !== 'POST') return methodNotAllowed(res, 'POST, OPTIONS');
    return postPin(ctx, req, res);
  }
  const rest = path.slice('/pins/'.length);
  if (rest.includes('/')) return sendError(res, 404, 'not_found', `no route ${path}`);
  let cid: string;
  try {
    cid = normalizeCid(decodeURIComponent(rest));
  } catch (err) {
    if (err instanceof InvalidCidError || err instanceof URIError) {
      return sendError(res, 400, 'invalid_cid', `${JSON.stringify(rest)} is not a CID`);
    }
    throw err;
  }
  if (req.method === 'DELETE') {
    return methodNotAllowed(
      res,
      'GET, HEAD, OPTIONS',
      'pind never releases pins over HTTP; the operator removes them on the host with `sealpost pind rm`',
    );
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD, OPTIONS');
  const record = await ctx.store.getPin(cid);
  if (!record) return sendError(res, 404, 'not_found', `${cid} is not pinned here`);
  sendJson(res, 200, statusBody(record));
}

async function postPin(ctx: PindContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('multipart/')) {
    req.resume();
    return sendError(
      res,
      415,
      'unsupported_media_type',
      'send the raw bytes as the request body (application/octet-stream), not a multipart form',
    );
  }
  const declared = declaredLength(req);
  if (declared !== null && declared > ctx.maxPinBytes + DRAIN_LIMIT_BYTES) {
    return sendTooLarge(res, ctx.maxPinBytes, false);
  }
  const body = await readBody(req, ctx.maxPinBytes);
  if (body.kind === 'too_large') return sendTooLarge(res, ctx.maxPinBytes, body.drained);
  if (body.size === 0)
    return sendError(res, 400, 'empty_body', 'the request body is empty; send the bytes to pin');
  const { record, created } = await ctx.store.pin(body.chunks);
  ctx.logger.info({ cid: record.cid, size: record.size, created }, 'pinned');
  sendJson(res, 201, { cid: record.cid, size: record.size }, { location: `/pins/${record.cid}` });
}
