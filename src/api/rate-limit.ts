// Fixed one-minute windows in Redis, several limits checked in one round
// trip. Counters are plain INCR keys named by src/limits/redis-keys.ts, so
// the admin sweep finds a wallet's windows by pattern.
import type { Redis } from 'ioredis';
import { type RateScope, rateWindowKey } from '../limits/redis-keys.ts';
import { ApiError } from './errors.ts';

export const WINDOW_MS = 60_000;

export interface RateCheck {
  scope: RateScope;
  subject: string;
  bucket: string;
  /** Requests allowed per window; 0 means unlimited (not counted). */
  limit: number;
}

// One round trip for all windows of a request: INCR each key, give a new key
// its TTL (twice the window, so it outlives the window under clock skew).
const HIT_SCRIPT = `
local counts = {}
for i, key in ipairs(KEYS) do
  local c = redis.call('INCR', key)
  if c == 1 then redis.call('PEXPIRE', key, ARGV[1]) end
  counts[i] = c
end
return counts`;

const COMMAND = 'sealpostRateHit';

type HitFn = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

export class RateLimiter {
  private readonly hitScript: HitFn;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {
    // defineCommand sends EVALSHA and falls back to EVAL when Redis lacks the script.
    if (!(COMMAND in this.redis)) this.redis.defineCommand(COMMAND, { lua: HIT_SCRIPT });
    const command = (this.redis as unknown as Record<string, HitFn>)[COMMAND] as HitFn;
    this.hitScript = command.bind(this.redis);
  }

  /** Counts the request against every check; throws a 429 ApiError when one is exceeded. */
  async hit(checks: RateCheck[]): Promise<void> {
    const active = checks.filter((c) => c.limit > 0);
    if (active.length === 0) return;
    const now = this.now();
    const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    const keys = active.map((c) => rateWindowKey(this.prefix, c.scope, c.subject, c.bucket, start));
    const counts = await this.hitScript(keys.length, ...keys, WINDOW_MS * 2);
    for (const [i, check] of active.entries()) {
      if (Number(counts[i]) > check.limit) {
        const retryAfter = Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000));
        throw new ApiError(
          429,
          'rate_limited',
          `too many requests (${check.limit} per minute per ${check.scope}); retry in ${retryAfter} s`,
          { 'retry-after': String(retryAfter) },
        );
      }
    }
  }
}
