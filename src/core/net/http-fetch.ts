// The part of fetch that server-side JSON clients use (a request with a
// text or byte body; the answer's status and its text or JSON), over
// node:http(s) with keep-alive sockets. The platform fetch (undici) builds a
// Request, Headers, web streams and several abort signals per call, which
// costs more CPU than the exchange itself with a service on the same host or
// network (the chain RPC node, the pin daemon): in the end-to-end bench it
// was the largest CPU cost of a delivery after garbage collection.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpFetchOptions {
  /** Bound on each whole exchange (none when absent; a caller's signal still applies). */
  timeoutMs?: number;
  /** Sockets kept per host (default 32). */
  maxSockets?: number;
}

/** What the answer offers: status, headers, and the body once, as text or JSON. */
export interface HttpFetchResponse {
  ok: boolean;
  status: number;
  statusText: string;
  headers: Headers;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

function readBody(res: IncomingMessage, signal: AbortSignal | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const abort = () => res.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', abort, { once: true });
    const done = () => signal?.removeEventListener('abort', abort);
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      done();
      resolve(Buffer.concat(chunks));
    });
    res.on('error', (err) => {
      done();
      reject(err);
    });
    res.on('close', () => {
      done();
      if (!res.complete)
        reject(signal?.reason ?? new Error('the connection closed before the answer was complete'));
    });
  });
}

function bodyBytes(body: unknown): string | Uint8Array {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('httpFetch sends a string or bytes only');
}

/** A fetch for server-side clients (see the header); typed as fetch so it can stand in for it. */
export function httpFetch(opts: HttpFetchOptions = {}): typeof fetch {
  const maxSockets = opts.maxSockets ?? 32;
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets }),
    https: new HttpsAgent({ keepAlive: true, maxSockets }),
  };
  const call = (input: string | URL | Request, init: RequestInit = {}): Promise<HttpFetchResponse> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const https = url.protocol === 'https:';
    if (!https && url.protocol !== 'http:')
      return Promise.reject(new TypeError(`unsupported URL ${url.protocol}`));
    const signals = [init.signal, opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined].filter(
      (s): s is AbortSignal => s instanceof AbortSignal,
    );
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const body = bodyBytes(init.body);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    return new Promise<HttpFetchResponse>((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
        url,
        { method: init.method ?? 'GET', headers, agent: https ? agents.https : agents.http, signal },
        (res) => {
          const status = res.statusCode ?? 0;
          const bytes = readBody(res, signal);
          // Read at once; a failure is seen by whoever asks for the body.
          bytes.catch(() => undefined);
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') answerHeaders.set(name, value);
            else if (Array.isArray(value)) for (const v of value) answerHeaders.append(name, v);
          }
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: res.statusMessage ?? '',
            headers: answerHeaders,
            text: async () => (await bytes).toString('utf8'),
            json: async () => JSON.parse((await bytes).toString('utf8')) as unknown,
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  return call as unknown as typeof fetch;
}
