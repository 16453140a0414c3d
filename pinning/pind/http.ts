// HTTP plumbing shared by pind's routes: JSON errors, CORS, bearer auth.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';

/** Stable error codes of pind's JSON error bodies `{error, message}`. */
export type PindErrorCode =
  | 'bad_request'
  | 'empty_body'
  | 'invalid_cid'
  | 'method_not_allowed'
  | 'not_found'
  | 'payload_too_large'
  | 'unauthorized'
  | 'unsupported_format'
  | 'unsupported_media_type'
  | 'internal';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  error: PindErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, message }, headers);
}

export function methodNotAllowed(res: ServerResponse, allow: string, message?: string): void {
  sendError(res, 405, 'method_not_allowed', message ?? `use ${allow}`, { allow });
}

// Browsers (trustless webmail) call pind cross-origin, with a bearer token
// on the pin surface and conditional requests on the gateway.
const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, If-None-Match, Accept, Range',
  'access-control-expose-headers': 'Content-Length, Content-Type, ETag, Location, X-Ipfs-Path, X-Ipfs-Roots',
  'access-control-max-age': '86400',
};

export function setCors(res: ServerResponse): void {
  for (const [k, v] of Object.entries(CORS_HEADERS)) res.setHeader(k, v);
}

/** Answers a CORS preflight. */
export function preflight(res: ServerResponse): void {
  res.writeHead(204, { 'content-length': '0' });
  res.end();
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Checks `Authorization: Bearer <token>` in constant time (hashing both
 * sides first makes the comparison independent of the token's length too).
 */
export function bearerMatches(req: IncomingMessage, tokenDigest: Buffer): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  const given = digest(match?.[1] ?? '');
  return timingSafeEqual(given, tokenDigest) && match !== null;
}

export function tokenDigest(token: string): Buffer {
  return digest(token);
}

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h === '::1') return true;
  if (h.startsWith('::ffff:')) return isLoopbackHost(h.slice(7));
  return false;
}

export function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
