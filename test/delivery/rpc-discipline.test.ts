// The RPC discipline of src/core/net/rpc-discipline.ts, against real HTTP servers
// on loopback: Retry-After is waited out and nothing is sent inside it, the
// per-endpoint limiter holds its rate under many concurrent callers, 5xx /
// HTML / garbage answers back off and end in a retryable error, oversized
// batches are split, the WebSocket URL is derived like web3.js, and
// `[chain] max_rps` is checked by the config.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Connection } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { cliConnection } from '../../src/cli/common.ts';
import { createConnection } from '../../src/core/chain-rpc.ts';
import { ConfigError, parseConfig } from '../../src/core/config/index.ts';
import { deriveWsUrl } from '../../src/core/config/sections/chain.ts';
import { httpFetch } from '../../src/core/net/http-fetch.ts';
import {
  AGAVE_MAX_REQUEST_BODY_BYTES,
  defaultMaxRps,
  parseRetryAfter,
  RpcRequestTooLargeError,
  RpcUnavailableError,
  rpcDisciplinedFetch,
} from '../../src/core/net/rpc-discipline.ts';

interface Hit {
  at: number;
  body: string;
  calls: number;
}

type Answer = (req: IncomingMessage, body: string, res: ServerResponse, hit: Hit) => void;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  );
});

/** A JSON-RPC endpoint on a random loopback port; `answer` decides each response, every arrival is recorded. */
async function rpcServer(answer: Answer): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let calls = 1;
      try {
        const parsed = JSON.parse(body) as unknown;
        if (Array.isArray(parsed)) calls = parsed.length;
      } catch {
        calls = 1;
      }
      const hit = { at: Date.now(), body, calls };
      hits.push(hit);
      answer(req, body, res, hit);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/** Answers every call of a single or batch request with `result` (ids echoed). */
function ok(res: ServerResponse, body: string, result: (call: { id: unknown; method: string }) => unknown) {
  const parsed = JSON.parse(body) as { id: unknown; method: string } | { id: unknown; method: string }[];
  const one = (c: { id: unknown; method: string }) => ({ jsonrpc: '2.0', id: c.id, result: result(c) });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(one) : one(parsed)));
}

const post = (f: typeof fetch, url: string, body: unknown) =>
  f(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const call = (id: number, method = 'getSlot', params: unknown[] = []) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

/** The most arrivals (counting each call) inside any window of `ms`. */
function peak(hits: Hit[], ms: number): number {
  const times = hits.flatMap((h) => Array<number>(h.calls).fill(h.at)).sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while ((times[j] as number) - (times[i] as number) >= ms) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

describe('HTTP 429 and Retry-After', () => {
  it('waits out Retry-After (seconds) and sends nothing to the endpoint inside the window, for any caller', async () => {
    let closedUntil = 0;
    let inside = 0;
    const { url, hits } = await rpcServer((_req, body, res, hit) => {
      if (hits.length === 1) {
        closedUntil = hit.at + 1000;
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' });
        res.end('Too many requests');
        return;
      }
      if (hit.at < closedUntil) inside++;
      ok(res, body, () => 7);
    });
    const conn = createConnection(url, { maxRps: 0 });
    const started = Date.now();
    const first = conn.getSlot();
    // Others ask while the first waits: they wait with it.
    await new Promise((r) => setTimeout(r, 150));
    const others = Array.from({ length: 8 }, () => conn.getSlot());
    expect(await first).toBe(7);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(await Promise.all(others)).toEqual(Array(8).fill(7));
    expect(inside).toBe(0);
    expect(hits.length).toBe(10);
    expect(Math.min(...hits.slice(1).map((h) => h.at))).toBeGreaterThanOrEqual(closedUntil);
  });

  it('waits out Retry-After as an HTTP date', async () => {
    let until = 0;
    const { url, hits } = await rpcServer((_req, body, res) => {
      if (hits.length === 1) {
        // HTTP dates have whole seconds: two seconds on, at least one second away.
        const date = new Date(Math.floor(Date.now() / 1000) * 1000 + 2000);
        until = date.getTime();
        res.writeHead(429, { 'retry-after': date.toUTCString() });
        res.end();
        return;
      }
      ok(res, body, () => 'ok');
    });
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: 0 });
    const res = await post(f, url, call(1, 'getHealth'));
    expect(await res.json()).toMatchObject({ result: 'ok' });
    expect(hits.length).toBe(2);
    expect((hits[1] as Hit).at).toBeGreaterThanOrEqual(until);
  });

  it('backs off without Retry-After, and past the bound fails as a retryable error naming the cause', async () => {
    const { url, hits } = await rpcServer((_req, _body, res) => {
      res.writeHead(429);
      res.end();
    });
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const f = rpcDisciplinedFetch(httpFetch(), {
      maxRps: 0,
      maxWaitMs: 1500,
      baseBackoffMs: 100,
      log: { warn: (obj, msg) => lines.push({ obj, msg }) },
    });
    const started = Date.now();
    const err = await post(f, url, call(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcUnavailableError);
    expect((err as RpcUnavailableError).retryable).toBe(true);
    expect((err as RpcUnavailableError).trouble).toBe('rate-limited');
    expect((err as Error).message).toMatch(/rate limiting us \(HTTP 429\).*retryable/);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(hits.length).toBeGreaterThan(1);
    // Consecutive tries are spaced by a growing backoff.
    const gaps = hits.slice(1).map((h, i) => h.at - (hits[i] as Hit).at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(240);
    // One log line for the cause, not one per 429.
    expect(lines.length).toBe(1);
    expect(lines[0]?.obj).toMatchObject({ cause: 'rate-limited', rpc: url });
  });

  it('parses Retry-After forms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(now + 3000);
    expect(parseRetryAfter('0', now)).toBe(now);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(now + 5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(now);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});

describe('the per-process rate limit', () => {
  it('holds max_rps in every one-second window under many concurrent callers, counting batch calls', async () => {
    const { url, hits } = await rpcServer((_req, body, res) => ok(res, body, () => 1));
    const rps = 40;
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: rps });
    const started = Date.now();
    // 30 callers: 100 single calls and 10 batches of 4 calls, 140 calls in all.
    const work = [
      ...Array.from({ length: 100 }, (_, i) => post(f, url, call(i))),
      ...Array.from({ length: 10 }, (_, i) => post(f, url, [call(i), call(i + 1), call(i + 2), call(i + 3)])),
    ];
    const answers = await Promise.all(work);
    expect(answers.every((a) => a.ok)).toBe(true);
    const calls = hits.reduce((n, h) => n + h.calls, 0);
    expect(calls).toBe(140);
    expect(peak(hits, 1000)).toBeLessThanOrEqual(rps);
    // 140 calls at 40/s: the first 40 at once, the rest over at least 2.5 s more.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
  });

  it('splits a batch of more calls than max_rps into batches of at most max_rps', async () => {
    const { url, hits } = await rpcServer((_req, body, res) => ok(res, body, (c) => c.id));
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: 10 });
    const res = await post(
      f,
      url,
      Array.from({ length: 25 }, (_, i) => call(i)),
    );
    const answers = (await res.json()) as { id: number; result: number }[];
    expect(answers.map((a) => a.result)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(hits.map((h) => h.calls)).toEqual([10, 10, 5]);
    expect(peak(hits, 1000)).toBeLessThanOrEqual(10);
  });

  it('defaults to no limit for a node on this host and 10/s for any other', () => {
    expect(defaultMaxRps('http://127.0.0.1:8899')).toBe(0);
    expect(defaultMaxRps('http://localhost:8899')).toBe(0);
    expect(defaultMaxRps('http://[::1]:8899')).toBe(0);
    expect(defaultMaxRps('https://api.mainnet-beta.solana.com')).toBe(10);
  });
});

describe('5xx, HTML pages and garbage', () => {
  for (const [name, answer] of [
    [
      '503',
      (res: ServerResponse) => {
        res.writeHead(503);
        res.end('busy');
      },
    ],
    [
      'an HTML page',
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>502 Bad Gateway</body></html>');
      },
    ],
    [
      'garbage',
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('\u0000\u0001 not json');
      },
    ],
  ] as const) {
    it(`${name}: bounded backoff, then a retryable error`, async () => {
      const { url, hits } = await rpcServer((_req, _body, res) => answer(res));
      const lines: string[] = [];
      const f = rpcDisciplinedFetch(httpFetch(), {
        maxRps: 0,
        maxErrorTries: 4,
        baseBackoffMs: 80,
        log: { warn: (_obj, msg) => lines.push(msg) },
      });
      const started = Date.now();
      const errs = await Promise.all(
        Array.from({ length: 5 }, () => post(f, url, call(1)).catch((e: unknown) => e)),
      );
      for (const err of errs) {
        expect(err).toBeInstanceOf(RpcUnavailableError);
        expect((err as RpcUnavailableError).retryable).toBe(true);
      }
      // 4 tries each, waiting at least 40 + 80 + 160 ms in between.
      expect(hits.length).toBe(20);
      expect(Date.now() - started).toBeGreaterThanOrEqual(280);
      expect(lines.length).toBe(1);
    });
  }

  it('a Connection rides out two 503s and answers', async () => {
    const { url, hits } = await rpcServer((_req, body, res) => {
      if (hits.length <= 2) {
        res.writeHead(503);
        res.end();
        return;
      }
      ok(res, body, () => 42);
    });
    const conn = createConnection(url);
    expect(await conn.getSlot()).toBe(42);
    expect(hits.length).toBe(3);
  });

  it('a Connection fails with the retryable error once the endpoint never recovers', async () => {
    const { url } = await rpcServer((_req, _body, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    });
    const conn = createConnection(url, { maxWaitMs: 1000 });
    const err = await conn.getSlot().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcUnavailableError);
    expect((err as Error).message).toMatch(/server errors \(HTTP 502/);
  });
});

describe("Agave's 50 kB request limit", () => {
  it('splits a batch over the limit into batches under it and joins the answers in order', async () => {
    const { url, hits } = await rpcServer((_req, body, res) => ok(res, body, (c) => c.id));
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: 0 });
    const sig = '5'.repeat(88);
    // 40 getSignatureStatuses calls of 20 signatures: about 75 kB.
    const batch = Array.from({ length: 40 }, (_, i) =>
      call(i, 'getSignatureStatuses', [Array(20).fill(sig)]),
    );
    expect(JSON.stringify(batch).length).toBeGreaterThan(AGAVE_MAX_REQUEST_BODY_BYTES);
    const res = await post(f, url, batch);
    const answers = (await res.json()) as { result: number }[];
    expect(answers.map((a) => a.result)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(hits.length).toBeGreaterThan(1);
    for (const h of hits) expect(Buffer.byteLength(h.body)).toBeLessThanOrEqual(AGAVE_MAX_REQUEST_BODY_BYTES);
  });

  it('refuses a single call over the limit without sending it', async () => {
    const { url, hits } = await rpcServer((_req, body, res) => ok(res, body, () => null));
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: 0 });
    const err = await post(f, url, call(1, 'sendTransaction', ['A'.repeat(60_000)])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcRequestTooLargeError);
    expect((err as RpcRequestTooLargeError).retryable).toBe(false);
    expect((err as Error).message).toMatch(
      /sendTransaction request of \d+ bytes is over the node's 51200-byte/,
    );
    expect(hits.length).toBe(0);
  });
});

describe("Agave's per-call key caps", () => {
  it('a getMultipleAccounts of 250 keys goes as calls of 100, answered as one: values in order, the oldest slot', async () => {
    const seen: number[] = [];
    const { url } = await rpcServer((_req, body, res) => {
      const calls = JSON.parse(body) as { id: unknown; params: [string[]] }[];
      res.writeHead(200, { 'content-type': 'application/json' });
      // Answered out of order, as JSON-RPC allows: matched by id.
      const answers = calls.map((c, i) => {
        seen.push(c.params[0].length);
        return { jsonrpc: '2.0', id: c.id, result: { context: { slot: 100 - i }, value: c.params[0] } };
      });
      res.end(JSON.stringify(answers.reverse()));
    });
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: 0 });
    const keys = Array.from({ length: 250 }, (_, i) => `key${i}`);
    const res = await post(f, url, call(7, 'getMultipleAccounts', [keys, { encoding: 'base64' }]));
    const answer = (await res.json()) as {
      id: number;
      result: { context: { slot: number }; value: string[] };
    };
    expect(seen).toEqual([100, 100, 50]);
    expect(answer.id).toBe(7);
    expect(answer.result.value).toEqual(keys);
    expect(answer.result.context.slot).toBe(98);
  });

  it('an error in any part is the error of the call; the other calls of the batch keep their answers', async () => {
    const { url } = await rpcServer((_req, body, res) => {
      const calls = JSON.parse(body) as { id: unknown; method: string; params: [string[]] }[];
      const one = (c: (typeof calls)[number]) => {
        if (c.method === 'getSlot') return { jsonrpc: '2.0', id: c.id, result: 5 };
        if (c.params[0][0] === 's256')
          return { jsonrpc: '2.0', id: c.id, error: { code: -32005, message: 'node is behind' } };
        return { jsonrpc: '2.0', id: c.id, result: { context: { slot: 1 }, value: [] } };
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(calls.map(one)));
    });
    const f = rpcDisciplinedFetch(httpFetch(), { maxRps: 0 });
    const sigs = Array.from({ length: 300 }, (_, i) => `s${i}`);
    const res = await post(f, url, [call(1, 'getSlot'), call(2, 'getSignatureStatuses', [sigs])]);
    expect(await res.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: 5 },
      { jsonrpc: '2.0', id: 2, error: { code: -32005, message: 'node is behind' } },
    ]);
  });
});

describe('the WebSocket URL', () => {
  const table: [string, string][] = [
    ['http://127.0.0.1:8899', 'ws://127.0.0.1:8900'],
    ['https://api.mainnet-beta.solana.com', 'wss://api.mainnet-beta.solana.com'],
    ['https://api.mainnet-beta.solana.com/', 'wss://api.mainnet-beta.solana.com'],
    ['http://rpc.example.org', 'ws://rpc.example.org'],
    ['https://rpc.example.org:8443', 'wss://rpc.example.org:8444'],
    ['http://rpc.example.org:80', 'ws://rpc.example.org:81'],
    ['https://rpc.example.org/v2/key123', 'wss://rpc.example.org/v2/key123'],
    ['https://rpc.example.org:9000/?api-key=abc', 'wss://rpc.example.org:9001/?api-key=abc'],
    ['http://[::1]:8899', 'ws://[::1]:8900'],
  ];
  it.each(table)('%s → %s', (rpc, ws) => {
    expect(deriveWsUrl(rpc)).toBe(ws);
  });
  it('agrees with @solana/web3.js for every row (up to a trailing slash)', () => {
    for (const [rpc] of table) {
      const theirs = (new Connection(rpc) as unknown as { _rpcWsEndpoint: string })._rpcWsEndpoint;
      expect(deriveWsUrl(rpc)).toBe(theirs.replace(/\/$/, ''));
    }
  });
  it('the config derives it when ws_url is unset', () => {
    const c = parseConfig('[chain]\nrpc_url = "https://rpc.example.org"\n', { env: {}, source: 'test.toml' });
    expect(c.chain.ws_url).toBe('wss://rpc.example.org');
  });
});

describe('[chain] max_rps in the config', () => {
  const parse = (text: string) => parseConfig(text, { env: {}, source: 'test.toml' });
  const errorsOf = (text: string): string[] => {
    try {
      parse(text);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).lines();
    }
    throw new Error('expected a ConfigError');
  };
  it('names an out-of-range max_rps or rpc_max_wait_secs', () => {
    expect(errorsOf('[chain]\nmax_rps = -1\n')).toEqual(['chain.max_rps: expected integer 0-100000, got -1']);
    expect(errorsOf('[chain]\nmax_rps = 2.5\n')).toEqual([
      'chain.max_rps: expected integer 0-100000, got 2.5',
    ]);
    expect(errorsOf('[chain]\nmax_rps = "fast"\n')).toEqual([
      'chain.max_rps: expected integer 0-100000, got "fast"',
    ]);
    expect(errorsOf('[chain]\nrpc_max_wait_secs = 0\n')).toEqual([
      'chain.rpc_max_wait_secs: expected integer 1-600, got 0',
    ]);
  });
  it('defaults by endpoint and keeps an explicit value', () => {
    expect(parse('').chain.max_rps).toBe(0);
    expect(parse('[chain]\nrpc_url = "https://rpc.example.org"\n').chain.max_rps).toBe(10);
    expect(parse('[chain]\nrpc_url = "https://rpc.example.org"\nmax_rps = 50\n').chain.max_rps).toBe(50);
    expect(parse('[chain]\nmax_rps = 0\n').chain.max_rps).toBe(0);
  });
});

describe('the CLI connection', () => {
  it('waits out a 429 by its Retry-After and prints nothing while it does', async () => {
    const { url, hits } = await rpcServer((_req, body, res) => {
      if (hits.length === 1) {
        res.writeHead(429, { 'retry-after': '1' });
        res.end();
        return;
      }
      ok(res, body, () => 3);
    });
    const printed: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => {
      printed.push(args.map(String).join(' '));
    };
    try {
      const conn = cliConnection(url);
      const started = Date.now();
      expect(await conn.getSlot()).toBe(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    } finally {
      console.error = original;
    }
    // web3.js's own retry prints "Server responded with 429 Too Many Requests. Retrying after …";
    // other files' tests share this process (vitest isolate: false), so only that kind of line counts.
    expect(printed.filter((l) => /429|too many requests|retrying/i.test(l))).toEqual([]);
    expect((hits[1] as Hit).at - (hits[0] as Hit).at).toBeGreaterThanOrEqual(1000);
  });
});
