// Per-account send-rate windows: fixed hour and day windows in Redis, keyed
// through src/core/limits/redis-keys.ts under the wallet scope (so the admin sweep
// removes them with the account). A message is counted only when every
// window still has room, in one script, so a refused message uses no quota
// and two concurrent submissions cannot both take the last slot. The
// counting is the shared WindowLimiter of src/core/limits/window.ts (the cost
// guard's mechanism) with its `fixed` kind: `<key>:<window start ms>` counters.
import type { Redis } from 'ioredis';
import { walletWindowKey } from '../../core/limits/redis-keys.ts';
import { type ChargedWindow, WindowLimiter, type WindowTake } from '../../core/limits/window.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export interface SendRateLimits {
  /** Messages per hour; 0 turns the window off. */
  perHour: number;
  /** Messages per day; 0 turns the window off. */
  perDay: number;
}

const HOUR_BUCKET = 'submit-hour';
const DAY_BUCKET = 'submit-day';

/** On success, `keys` are the counters taken from (for `refund`). */
export type TakeResult =
  | { ok: true; keys: string[] }
  | { ok: false; retryAfterSecs: number; limit: number; window: 'hour' | 'day' };

export class SendRate {
  private readonly limiter: WindowLimiter;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly limits: SendRateLimits,
    now: () => number = Date.now,
  ) {
    this.limiter = new WindowLimiter(redis, now);
  }

  private windows(wallet: string): ChargedWindow[] {
    return [
      {
        key: walletWindowKey(this.prefix, wallet, HOUR_BUCKET),
        limit: this.limits.perHour,
        windowMs: HOUR_MS,
      },
      { key: walletWindowKey(this.prefix, wallet, DAY_BUCKET), limit: this.limits.perDay, windowMs: DAY_MS },
    ].map((w) => ({ ...w, kind: 'fixed' as const }));
  }

  private result(taken: WindowTake): TakeResult {
    if (taken.ok) return { ok: true, keys: taken.windows.map((w) => `${w.key}:${w.start}`) };
    return {
      ok: false,
      limit: taken.window.limit,
      window: taken.window.windowMs === HOUR_MS ? 'hour' : 'day',
      retryAfterSecs: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)),
    };
  }

  /** Counts one message against the wallet's windows, unless one is full. */
  async take(wallet: string): Promise<TakeResult> {
    return this.result(await this.limiter.take(this.windows(wallet)));
  }

  /** Whether a message could be counted now (no change); used to refuse early at MAIL FROM. */
  async peek(wallet: string): Promise<TakeResult> {
    const room = this.result(await this.limiter.peek(this.windows(wallet)));
    return room.ok ? { ok: true, keys: [] } : room;
  }

  /** Gives back a message counted by `take` whose queuing then failed. */
  async refund(keys: string[]): Promise<void> {
    // Each key is `<window key>:<start ms>` as `take` returned it.
    const windows = keys.map((full): ChargedWindow => {
      const cut = full.lastIndexOf(':');
      const key = full.slice(0, cut);
      const hourly = key.endsWith(`:${HOUR_BUCKET}`);
      return {
        key,
        start: Number(full.slice(cut + 1)),
        kind: 'fixed',
        limit: Math.max(1, hourly ? this.limits.perHour : this.limits.perDay),
        windowMs: hourly ? HOUR_MS : DAY_MS,
      };
    });
    await this.limiter.refund(windows);
  }
}
