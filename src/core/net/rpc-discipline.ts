// How Sealpost talks to a Solana JSON-RPC endpoint, whoever asks: a fetch
// wrapper that every Connection made by src/core/chain-rpc.ts goes through, so
// the servers and the CLI keep the same manners on a provider's endpoint.
//
// - A per-process limiter per endpoint: at most `maxRps` JSON-RPC calls in
//   any one-second window (a batch counts as its number of calls, as
//   providers count); callers beyond it wait their turn in order.
// - HTTP 429 is honoured: `Retry-After` (seconds or an HTTP date) closes the
//   endpoint for everyone in the process until then, without it exponential
//   backoff with jitter; the request is then sent again.
// - 5xx, an HTML page or a body that is not JSON: exponential backoff with
//   jitter, a bounded number of tries.
// - Past the bound the call fails with RpcUnavailableError (retryable: the
//   endpoint, not the request, is at fault).
// - Agave refuses request bodies over 50 kB: a batch over it is split into
//   batches under it (answers joined back in order); a single call over it is
//   refused here with RpcRequestTooLargeError instead of being sent.
// - Trouble is logged once a minute per endpoint and cause, with a count,
//   never once per request; without a logger (the CLI) nothing is printed
//   and only the final error speaks.
// Network errors and timeouts are passed through as they come.
import type { HttpFetchResponse } from './http-fetch.ts';

/** Agave's MAX_REQUEST_BODY_SIZE (rpc_service.rs): 50 KiB. */
export const AGAVE_MAX_REQUEST_BODY_BYTES = 50 * 1024;
/** `[chain] max_rps` when unset and the endpoint is not on this host: a public endpoint's rate. */
export const DEFAULT_MAX_RPS = 10;
/** How long one call may wait out 429s and errors before failing (`[chain] rpc_max_wait_secs`). */
export const DEFAULT_MAX_WAIT_MS = 30_000;

export type RpcTrouble = 'rate-limited' | 'server-error' | 'html' | 'garbage';

/** The endpoint would not answer usefully within the bound; try again later. */
export class RpcUnavailableError extends Error {
  readonly retryable = true;
  constructor(
    readonly endpoint: string,
    readonly trouble: RpcTrouble,
    message: string,
    /** When the endpoint said to come back (ms since the epoch), if it did. */
    readonly retryAt?: number,
  ) {
    super(message);
    this.name = 'RpcUnavailableError';
  }
}

/** What RpcUnavailableError's message looks like, also when a wrapper (web3.js) copied it into its own. */
const UNAVAILABLE_TEXT = /RpcUnavailableError|the chain RPC at \S+ .*; gave up after \d+ s \(retryable\)/;

/**
 * The RpcUnavailableError behind `err`, if any: `err` itself, one of its
 * `cause`s, or an error whose message quotes one (web3.js's
 * `failed to get info about account …: ${e}` keeps the text, not the error;
 * then `retryAt` is unknown). Null when the endpoint is not what failed.
 */
export function rpcUnavailableIn(err: unknown): { retryAt?: number } | null {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e instanceof Error; depth++) {
    if (e instanceof RpcUnavailableError) return e.retryAt !== undefined ? { retryAt: e.retryAt } : {};
    if (UNAVAILABLE_TEXT.test(e.message)) return {};
    e = e.cause;
  }
  return null;
}

/** A call this layer will not send: its body is over the node's limit. Not retryable. */
export class RpcRequestTooLargeError extends Error {
  readonly retryable = false;
  constructor(
    readonly bytes: number,
    readonly limit: number,
    readonly method: string,
  ) {
    super(`a JSON-RPC ${method} request of ${bytes} bytes is over the node's ${limit}-byte body limit`);
    this.name = 'RpcRequestTooLargeError';
  }
}

export interface RpcLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface RpcDisciplineOptions {
  /** JSON-RPC calls per second to this endpoint from this process; 0 = no limit. Default: auto (see defaultMaxRps). */
  maxRps?: number;
  /** Longest one call waits out 429s and errors, in total, before RpcUnavailableError. */
  maxWaitMs?: number;
  /** Tries of one call on 5xx / HTML / garbage answers (default 6). */
  maxErrorTries?: number;
  /** First backoff step (default 250 ms), doubled per try, capped at maxBackoffMs (default 8 s). */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Largest request body sent (default Agave's 50 KiB). */
  maxBodyBytes?: number;
  /** Where the once-a-minute trouble lines go; none = silent. */
  log?: RpcLog;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i;

/** Whether `rpcUrl` names a node on this host (a devnet, a local validator); false for anything unparsable. */
export function isLoopbackEndpoint(rpcUrl: string): boolean {
  try {
    return LOOPBACK.test(new URL(rpcUrl).hostname);
  } catch {
    return false;
  }
}

/** The rate when `[chain] max_rps` is unset: none for a node on this host (a devnet, a local validator), else DEFAULT_MAX_RPS. */
export function defaultMaxRps(rpcUrl: string): number {
  return isLoopbackEndpoint(rpcUrl) ? 0 : DEFAULT_MAX_RPS;
}

/** `[chain] status_poll_ms` when unset and the endpoint is not on this host: one slot of a real cluster. */
export const DEFAULT_STATUS_POLL_MS = 400;
/** … and for a node on this host: the status poller's own fast cadence (a devnet confirms in tens of ms). */
export const LOOPBACK_STATUS_POLL_MS = 10;

/** The shortest time between two status polls when `[chain] status_poll_ms` is unset. */
export function defaultStatusPollMs(rpcUrl: string): number {
  return isLoopbackEndpoint(rpcUrl) ? LOOPBACK_STATUS_POLL_MS : DEFAULT_STATUS_POLL_MS;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

// A call occupies its slot from when it is sent until a second after its
// answer began to arrive (the far end saw it by then), so however long
// requests wait in a socket queue or on the wire, no one-second window at the
// far end holds more than maxRps of them.
const WINDOW_MS = 1000;

interface Slot {
  /** When the answer began to arrive; null while in flight. */
  answeredAt: number | null;
}

/**
 * One endpoint's share of the process: the calls sent within the last
 * window or still in flight, and the time a 429 closed it until.
 */
export class EndpointGate {
  private slots: Slot[] = [];
  private wake: (() => void)[] = [];
  private queue: object[] = [];
  closedUntil = 0;
  constructor(public maxRps: number) {}

  /**
   * Resolves when `calls` calls (at most maxRps) may be sent, to the function
   * to call once their answer arrives. Callers are admitted in the order they
   * asked (first come, first served), so a batch is never overtaken by smaller
   * requests that happen to fit sooner.
   */
  async acquire(calls: number): Promise<() => void> {
    const ticket = {};
    this.queue.push(ticket);
    try {
      for (;;) {
        if (this.queue[0] !== ticket) {
          await new Promise<void>((resolve) => this.wake.push(resolve));
          continue;
        }
        const now = Date.now();
        if (this.closedUntil > now) {
          await sleep(this.closedUntil - now);
          continue;
        }
        if (this.maxRps <= 0) return () => {};
        const n = Math.min(calls, this.maxRps);
        this.slots = this.slots.filter((s) => s.answeredAt === null || s.answeredAt + WINDOW_MS > now);
        const over = this.slots.length + n - this.maxRps;
        if (over <= 0) {
          const mine: Slot[] = Array.from({ length: n }, () => ({ answeredAt: null }));
          this.slots.push(...mine);
          return () => {
            const at = Date.now();
            for (const s of mine) s.answeredAt = at;
            this.wakeAll();
          };
        }
        // Wait for the `over`-th slot to leave the window, or for an answer that may free one sooner.
        const leaving = this.slots
          .filter((s) => s.answeredAt !== null)
          .map((s) => (s.answeredAt as number) + WINDOW_MS)
          .sort((a, b) => a - b);
        const at = leaving[over - 1];
        await new Promise<void>((resolve) => {
          const timer = at === undefined ? null : setTimeout(resolve, Math.max(1, at - now));
          this.wake.push(() => {
            if (timer) clearTimeout(timer);
            resolve();
          });
        });
      }
    } finally {
      const i = this.queue.indexOf(ticket);
      if (i >= 0) this.queue.splice(i, 1);
      if (i === 0) this.wakeAll();
    }
  }

  private wakeAll(): void {
    for (const w of this.wake.splice(0)) w();
  }

  /** A 429: nobody in this process sends to the endpoint before `until`. */
  close(until: number): void {
    if (until > this.closedUntil) this.closedUntil = until;
  }
}

const gates = new Map<string, EndpointGate>();

/** The process's gate for an endpoint (its URL without the fragment); the latest maxRps given wins. */
export function gateFor(endpoint: string, maxRps: number): EndpointGate {
  let gate = gates.get(endpoint);
  if (!gate) {
    gate = new EndpointGate(maxRps);
    gates.set(endpoint, gate);
  } else gate.maxRps = maxRps;
  return gate;
}

// Once a minute per endpoint and cause: the first occurrence is logged at
// once, later ones counted and logged with the count a minute on.
const LOG_EVERY_MS = 60_000;
const logged = new Map<string, { at: number; suppressed: number }>();

function report(log: RpcLog | undefined, endpoint: string, trouble: RpcTrouble, detail: string): void {
  if (!log) return;
  const key = `${endpoint} ${trouble}`;
  const now = Date.now();
  const last = logged.get(key);
  if (last && now - last.at < LOG_EVERY_MS) {
    last.suppressed++;
    return;
  }
  const since = last ? last.suppressed + 1 : 1;
  logged.set(key, { at: now, suppressed: 0 });
  const words: Record<RpcTrouble, string> = {
    'rate-limited': 'the chain RPC is rate limiting us (HTTP 429); requests wait and are retried',
    'server-error': 'the chain RPC answers with server errors; requests back off and are retried',
    html: 'the chain RPC answers with an HTML page instead of JSON; requests back off and are retried',
    garbage: 'the chain RPC answers with a body that is not JSON; requests back off and are retried',
  };
  log.warn({ rpc: redactEndpoint(endpoint), cause: trouble, count: since, detail }, words[trouble]);
}

/** The endpoint without its path and query, where providers put API keys. */
export function redactEndpoint(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return '(unparsable URL)';
  }
}

/** `Retry-After`: delay-seconds or an HTTP date; the time it names (ms since the epoch), or null. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return now + Math.ceil(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(now, at);
}

function backoffMs(attempt: number, base: number, cap: number): number {
  const step = Math.min(cap, base * 2 ** attempt);
  return Math.round(step / 2 + Math.random() * (step / 2));
}

function bodyText(body: unknown): string | null {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return null;
}

function methodOf(call: unknown): string {
  const m = (call as { method?: unknown } | null)?.method;
  return typeof m === 'string' ? m : 'unknown';
}

const SPACE = new Set([' ', '\t', '\n', '\r']);

/** The first (dir 1) or last (dir -1) character that is not JSON whitespace, without copying the text. */
function edgeChar(text: string, dir: 1 | -1): string | undefined {
  for (let i = dir === 1 ? 0 : text.length - 1; i >= 0 && i < text.length; i += dir) {
    const c = text[i] as string;
    if (!SPACE.has(c)) return c;
  }
  return undefined;
}

/** The calls of a JSON-RPC body: its length for a batch, else 1. */
function callCount(text: string): { calls: number; batch: unknown[] | null } {
  if (edgeChar(text, 1) !== '[') return { calls: 1, batch: null };
  try {
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed)) return { calls: Math.max(1, parsed.length), batch: parsed };
  } catch {
    // not ours to judge; the node answers it
  }
  return { calls: 1, batch: null };
}

/** An answer whose body was already read. */
function answered(status: number, statusText: string, headers: Headers, text: string): HttpFetchResponse {
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText,
    headers,
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
  };
}

/** What a body looks like: JSON (by its first and last characters), an HTML page, or neither. */
function bodyKind(text: string, contentType: string | null): 'json' | 'html' | 'garbage' {
  const first = edgeChar(text, 1);
  const last = edgeChar(text, -1);
  if ((first === '{' && last === '}') || (first === '[' && last === ']')) return 'json';
  if (first === '<' || /text\/html/i.test(contentType ?? '')) return 'html';
  return 'garbage';
}

/** Agave's per-call caps on the keys of a call (getMultipleAccounts 100, getSignatureStatuses 256). */
export const AGAVE_KEYS_PER_CALL: Readonly<Record<string, number>> = {
  getMultipleAccounts: 100,
  getSignatureStatuses: 256,
};
const KEYED_METHOD = /"(getMultipleAccounts|getSignatureStatuses)"/;

interface WireCall {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

interface WireAnswer {
  jsonrpc?: string;
  id?: unknown;
  result?: { context?: { slot?: number }; value?: unknown[] };
  error?: unknown;
}

let splitIds = 0;

/**
 * Calls over a per-call key cap, each made several calls of at most the cap
 * (sent together in one batch, split further by size and rate as any
 * batch); `reassemble` makes the node's answers the answers to the calls as
 * asked: values joined in order, the lowest context slot of the parts (the
 * oldest bank any part was read from), the first error of a part as the
 * call's error. Null when nothing is over a cap.
 */
export function splitKeyedCalls(
  text: string,
): { body: string; reassemble(answers: unknown): unknown } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const single = !Array.isArray(parsed);
  const calls = (single ? [parsed] : parsed) as WireCall[];
  const over = (c: WireCall) => {
    const cap = typeof c?.method === 'string' ? AGAVE_KEYS_PER_CALL[c.method] : undefined;
    const keys = Array.isArray(c?.params) ? (c.params as unknown[])[0] : undefined;
    return cap !== undefined && Array.isArray(keys) && keys.length > cap ? cap : 0;
  };
  if (!calls.some((c) => over(c) > 0)) return null;
  const out: WireCall[] = [];
  const plan: { call: WireCall; ids: unknown[] }[] = [];
  for (const c of calls) {
    const cap = over(c);
    if (!cap) {
      out.push(c);
      plan.push({ call: c, ids: [] });
      continue;
    }
    const [keys, ...rest] = c.params as [unknown[], ...unknown[]];
    const ids: unknown[] = [];
    for (let i = 0; i < keys.length; i += cap) {
      const id = `sealpost-split-${++splitIds}`;
      ids.push(id);
      out.push({
        jsonrpc: c.jsonrpc ?? '2.0',
        id,
        method: c.method,
        params: [keys.slice(i, i + cap), ...rest],
      });
    }
    plan.push({ call: c, ids });
  }
  const reassemble = (answers: unknown): unknown => {
    if (!Array.isArray(answers)) return answers;
    const byId = new Map<unknown, WireAnswer>();
    for (const a of answers as WireAnswer[]) byId.set(a?.id, a);
    const joined = plan.map(({ call, ids }): WireAnswer => {
      if (ids.length === 0)
        return (
          byId.get(call.id) ?? { jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'no answer' } }
        );
      const parts = ids.map((id) => byId.get(id));
      const bad = parts.findIndex((p) => !p || p.error !== undefined || !p.result);
      if (bad !== -1)
        return {
          jsonrpc: '2.0',
          id: call.id,
          error: parts[bad]?.error ?? { code: -32603, message: 'no answer to a part of a split call' },
        };
      const results = parts.map((p) => (p as WireAnswer).result as NonNullable<WireAnswer['result']>);
      const slots = results.map((r) => r.context?.slot).filter((x): x is number => typeof x === 'number');
      const first = results[0] as NonNullable<WireAnswer['result']>;
      return {
        jsonrpc: '2.0',
        id: call.id,
        result: {
          ...first,
          ...(first.context ? { context: { ...first.context, slot: Math.min(...slots) } } : {}),
          value: results.flatMap((r) => r.value ?? []),
        },
      };
    });
    return single ? joined[0] : joined;
  };
  return { body: JSON.stringify(out), reassemble };
}

/** Wraps a fetch (src/core/net/http-fetch.ts) in the discipline above, for one endpoint's JSON-RPC. */
export function rpcDisciplinedFetch(inner: typeof fetch, opts: RpcDisciplineOptions = {}): typeof fetch {
  const maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const maxErrorTries = Math.max(1, opts.maxErrorTries ?? 6);
  const base = opts.baseBackoffMs ?? 250;
  const cap = opts.maxBackoffMs ?? 8_000;
  const maxBody = opts.maxBodyBytes ?? AGAVE_MAX_REQUEST_BODY_BYTES;

  // One HTTP exchange of `calls` calls, waited out and retried within the bounds.
  const exchange = async (
    url: string,
    gate: EndpointGate,
    init: RequestInit,
    calls: number,
  ): Promise<HttpFetchResponse> => {
    const started = Date.now();
    let errorTries = 0;
    let limitedTries = 0;
    const giveUp = (trouble: RpcTrouble, what: string, retryAt?: number): never => {
      throw new RpcUnavailableError(
        url,
        trouble,
        `the chain RPC at ${redactEndpoint(url)} ${what}; gave up after ${Math.round((Date.now() - started) / 1000)} s (retryable)`,
        retryAt,
      );
    };
    for (;;) {
      const release = await gate.acquire(calls);
      let res: HttpFetchResponse;
      try {
        res = (await inner(url, init)) as unknown as HttpFetchResponse;
      } finally {
        release();
      }
      if (res.status === 429) {
        await res.text().catch(() => '');
        const now = Date.now();
        const named = parseRetryAfter(res.headers.get('retry-after'), now);
        const until = named ?? now + backoffMs(limitedTries, Math.max(base, 500), cap);
        limitedTries++;
        gate.close(until);
        report(
          opts.log,
          url,
          'rate-limited',
          named ? `Retry-After ${res.headers.get('retry-after')}` : 'no Retry-After',
        );
        if (until - started > maxWaitMs)
          giveUp(
            'rate-limited',
            `is rate limiting us (HTTP 429${named ? `, Retry-After ${res.headers.get('retry-after')}` : ''})`,
            until,
          );
        continue;
      }
      let trouble: RpcTrouble | null = null;
      let detail = '';
      let text: string | null = null;
      if (res.status >= 500) {
        trouble = 'server-error';
        detail = `HTTP ${res.status} ${res.statusText}`.trim();
        await res.text().catch(() => '');
      } else if (res.ok) {
        text = await res.text();
        const kind = bodyKind(text, res.headers.get('content-type'));
        if (kind !== 'json') {
          trouble = kind;
          detail = `HTTP ${res.status}, ${text.length} bytes: ${JSON.stringify(text.slice(0, 80))}`;
        }
      } else {
        return res; // other 4xx: the request's fault, web3.js words it
      }
      if (trouble === null) return answered(res.status, res.statusText, res.headers, text ?? '');
      report(opts.log, url, trouble, detail);
      errorTries++;
      const wait = backoffMs(errorTries - 1, base, cap);
      if (errorTries >= maxErrorTries || Date.now() + wait - started > maxWaitMs) {
        const what: Record<RpcTrouble, string> = {
          'rate-limited': 'is rate limiting us',
          'server-error': `answers with server errors (${detail})`,
          html: 'answers with an HTML page instead of JSON',
          garbage: 'answers with a body that is not JSON',
        };
        giveUp(trouble, `${what[trouble]} after ${errorTries} tries`);
      }
      await sleep(wait);
    }
  };

  const call = async (input: string | URL | Request, init: RequestInit = {}): Promise<HttpFetchResponse> => {
    const url = input instanceof Request ? input.url : String(input);
    const text = bodyText(init.body);
    const gate = gateFor(url.split('#')[0] as string, opts.maxRps ?? defaultMaxRps(url));
    if (text === null) return exchange(url, gate, init, 1);
    const split = KEYED_METHOD.test(text) ? splitKeyedCalls(text) : null;
    if (!split) return send(url, gate, init, text);
    const res = await send(url, gate, init, split.body);
    if (!res.ok) return res;
    const joined = split.reassemble(JSON.parse(await res.text()) as unknown);
    return answered(res.status, res.statusText, res.headers, JSON.stringify(joined));
  };

  // One body, sent as it is or as several batches under the body limit and the rate.
  const send = async (
    url: string,
    gate: EndpointGate,
    init: RequestInit,
    text: string,
  ): Promise<HttpFetchResponse> => {
    const bytes = Buffer.byteLength(text);
    const { calls, batch } = callCount(text);
    const perBatch = gate.maxRps > 0 ? gate.maxRps : Number.POSITIVE_INFINITY;
    if (bytes <= maxBody && calls <= perBatch) return exchange(url, gate, { ...init, body: text }, calls);
    if (!batch) {
      let method = 'unknown';
      try {
        method = methodOf(JSON.parse(text));
      } catch {
        // keep 'unknown'
      }
      throw new RpcRequestTooLargeError(bytes, maxBody, method);
    }
    // Split: batches of whole calls, each under the body limit and the rate.
    const chunks: string[][] = [];
    let current: string[] = [];
    let size = 2;
    for (const c of batch) {
      const one = JSON.stringify(c);
      const len = Buffer.byteLength(one);
      if (len + 2 > maxBody) throw new RpcRequestTooLargeError(len, maxBody, methodOf(c));
      if (current.length > 0 && (size + len + 1 > maxBody || current.length >= perBatch)) {
        chunks.push(current);
        current = [];
        size = 2;
      }
      current.push(one);
      size += len + 1;
    }
    if (current.length > 0) chunks.push(current);
    const answers = await Promise.all(
      chunks.map((c) => exchange(url, gate, { ...init, body: `[${c.join(',')}]` }, c.length)),
    );
    const joined: unknown[] = [];
    for (const a of answers) {
      if (!a.ok) return a;
      const parsed = JSON.parse(await a.text()) as unknown;
      if (!Array.isArray(parsed)) return answered(a.status, a.statusText, a.headers, JSON.stringify(parsed));
      joined.push(...parsed);
    }
    const first = answers[0] as HttpFetchResponse;
    return answered(first.status, first.statusText, first.headers, JSON.stringify(joined));
  };
  return call as unknown as typeof fetch;
}
