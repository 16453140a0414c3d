// A web3.js Connection for server processes: every RPC call has a timeout,
// so a hung node turns into a retryable error instead of a stuck job.
// web3.js's RPC client only POSTs a JSON text and reads the answer's status
// and text, so it is given that much of fetch over node:http(s) with
// keep-alive sockets: the platform fetch (undici) builds a Request, a
// Headers, web streams and abort signals per call, which cost more CPU than
// the RPC itself when the node is local (about a third of a delivery's RPC
// time in the end-to-end bench).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type Commitment, Connection, type FetchFn } from '@solana/web3.js';

/** Sockets kept open per RPC host (a delivery worker has up to 128 deliveries in flight). */
const MAX_SOCKETS = 32;

/** The part of a fetch Response web3.js's RPC client reads. */
interface TextResponse {
  ok: boolean;
  status: number;
  statusText: string;
  text(): Promise<string>;
}

function bodyOf(res: IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const abort = () => res.destroy(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      signal.removeEventListener('abort', abort);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    res.on('error', (err) => {
      signal.removeEventListener('abort', abort);
      reject(err);
    });
  });
}

/** POST-and-read-text fetch over node:http(s); the whole exchange is bounded by `timeoutMs`. */
export function textFetch(timeoutMs: number): FetchFn {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  };
  const post = (input: Parameters<FetchFn>[0], init: Parameters<FetchFn>[1]): Promise<TextResponse> => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const https = url.protocol === 'https:';
    if (!https && url.protocol !== 'http:') throw new TypeError(`unsupported RPC URL ${url.protocol}`);
    const signal = init?.signal
      ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)])
      : AbortSignal.timeout(timeoutMs);
    const body = typeof init?.body === 'string' ? init.body : '';
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    headers['content-length'] = String(Buffer.byteLength(body));
    return new Promise<TextResponse>((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
        url,
        { method: init?.method ?? 'POST', headers, agent: agents[https ? 'https:' : 'http:'], signal },
        (res) => {
          const status = res.statusCode ?? 0;
          const text = bodyOf(res, signal);
          // Read at once (a rejected text() is only seen if web3.js asks for it).
          text.catch(() => undefined);
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: res.statusMessage ?? '',
            text: () => text,
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  return post as unknown as FetchFn;
}

export function createConnection(
  rpcUrl: string,
  opts: { commitment?: Commitment; wsUrl?: string; timeoutMs?: number } = {},
): Connection {
  return new Connection(rpcUrl, {
    commitment: opts.commitment ?? 'confirmed',
    wsEndpoint: opts.wsUrl,
    disableRetryOnRateLimit: true,
    fetch: textFetch(opts.timeoutMs ?? 15_000),
  });
}
