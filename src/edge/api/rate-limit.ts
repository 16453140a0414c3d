// Fixed one-minute windows counted in Redis and spent in process. A process
// takes tokens of a window in leases (one Redis round trip grants up to
// `leaseSize(limit)` of them, never more than the window has left) and hands
// them out locally until they run out, so the hot path needs no round trip.
// Bounds, with N API processes on one Redis:
//   - never more than `limit` requests per window in total: Redis grants at
//     most what is left;
//   - at most (N - 1) × leaseSize(limit) of a window can sit unused in other
//     processes' leases, so a client sticking to one process may be refused
//     that much early (leaseSize is 1 up to a limit of 99: exact there).
// Counters are plain keys named by src/core/limits/redis-keys.ts (their value is
// the tokens granted so far), so the admin sweep finds a wallet's windows by
// pattern. Several limits of one request are leased in one round trip.
import type { Redis } from 'ioredis';
import { type RateScope, rateWindowKey } from '../../core/limits/redis-keys.ts';
import { ApiError } from './errors.ts';

export const WINDOW_MS = 60_000;

export interface RateCheck {
  scope: RateScope;
  subject: string;
  bucket: string;
  /** Requests allowed per window; 0 means unlimited (not counted). */
  limit: number;
}

/** Tokens one lease takes: 1 below a limit of 100, then 1 % of the limit, at most 1000. */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(1000, Math.floor(limit / 100)));
}

// KEYS: the windows; ARGV: TTL ms, then (lease, limit) per key. Grants
// min(lease, limit - granted) per key (0 when the window is full) and gives
// a new key its TTL (twice the window, so it outlives it under clock skew).
const LEASE_SCRIPT = `
local grants = {}
for i, key in ipairs(KEYS) do
  local want = tonumber(ARGV[2 * i])
  local limit = tonumber(ARGV[2 * i + 1])
  local used = tonumber(redis.call('GET', key) or '0')
  local grant = math.min(want, limit - used)
  if grant > 0 then
    if redis.call('INCRBY', key, grant) == grant then redis.call('PEXPIRE', key, ARGV[1]) end
  else
    grant = 0
  end
  grants[i] = grant
end
return grants`;

const COMMAND = 'sealpostRateLease';
/** Buckets kept per window before the map is emptied (unused tokens are then given up). */
const MAX_BUCKETS = 100_000;

type LeaseFn = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

interface Bucket {
  key: string;
  check: RateCheck;
  tokens: number;
  /** Redis granted nothing: the window is full for every process. */
  full: boolean;
  pending: Promise<void> | null;
}

export class RateLimiter {
  private readonly leaseScript: LeaseFn;
  private buckets = new Map<string, Bucket>();
  private windowStart = -1;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    // defineCommand sends EVALSHA and falls back to EVAL when Redis lacks the script.
    if (!(COMMAND in this.redis)) this.redis.defineCommand(COMMAND, { lua: LEASE_SCRIPT });
    const command = (this.redis as unknown as Record<string, LeaseFn>)[COMMAND] as LeaseFn;
    this.leaseScript = command.bind(this.redis);
  }

  /**
   * Counts the request against every check. Returns undefined when leases in
   * hand covered it, else a promise of the round trip; a 429 ApiError (thrown
   * or rejected) when a window is full.
   */
  hit(checks: RateCheck[]): Promise<void> | undefined {
    const now = this.now();
    const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    if (start !== this.windowStart || this.buckets.size > MAX_BUCKETS) {
      this.buckets = new Map();
      this.windowStart = start;
    }
    const buckets = this.buckets;
    const held: Bucket[] = [];
    for (const check of checks) {
      if (check.limit <= 0) continue;
      const key = rateWindowKey(this.prefix, check.scope, check.subject, check.bucket, start);
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { key, check, tokens: 0, full: false, pending: null };
        buckets.set(key, bucket);
      }
      if (bucket.full) throw rateLimited(check, start, now);
      held.push(bucket);
    }
    if (held.every((b) => b.tokens > 0)) {
      for (const b of held) b.tokens--;
      return undefined;
    }
    return this.slow(held, start, now);
  }

  private async slow(held: Bucket[], start: number, now: number): Promise<void> {
    for (;;) {
      const missing: Bucket[] = [];
      const waits: Promise<void>[] = [];
      for (const bucket of held) {
        if (bucket.full) throw rateLimited(bucket.check, start, now);
        if (bucket.tokens > 0) continue;
        if (bucket.pending) waits.push(bucket.pending);
        else missing.push(bucket);
      }
      if (missing.length > 0) waits.push(this.lease(missing));
      if (waits.length === 0) break;
      await Promise.all(waits);
    }
    for (const b of held) b.tokens--;
  }

  private lease(wanted: Bucket[]): Promise<void> {
    const args: (string | number)[] = wanted.map((b) => b.key);
    args.push(WINDOW_MS * 2);
    for (const b of wanted) args.push(leaseSize(b.check.limit), b.check.limit);
    const pending = this.leaseScript(wanted.length, ...args).then(
      (grants) => {
        for (const [i, b] of wanted.entries()) {
          const grant = Number(grants[i]);
          b.pending = null;
          b.tokens += grant;
          if (grant === 0) b.full = true;
        }
      },
      (err: unknown) => {
        for (const b of wanted) b.pending = null;
        throw err;
      },
    );
    for (const b of wanted) b.pending = pending;
    return pending;
  }
}

function rateLimited(check: RateCheck, start: number, now: number): ApiError {
  const retryAfter = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
  return new ApiError(
    429,
    'rate_limited',
    `too many requests (${check.limit} per minute per ${check.scope}); retry in ${retryAfter} s`,
    { 'retry-after': String(retryAfter) },
  );
}
