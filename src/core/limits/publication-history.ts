// How many chain publications the MX accepted in each clock hour, shared by
// every MX process through Redis, so the balance floor can be sized from
// what this deployment really spends at its busiest (`[chain]
// min_authority_lamports = "auto"`, docs/cost-guard.md). A publication is
// counted when its RCPT is reserved and taken back when the transaction does
// not end in a 250, the same units as the cost guard's windows.
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import { publicationHourKey } from './redis-keys.ts';

const HOUR_MS = 3_600_000;
/** Hours the peak looks back over (a week: a weekly peak counts). */
export const PEAK_LOOKBACK_HOURS = 7 * 24;
/** Each hour's counter outlives the look-back by a day. */
const KEEP_SECS = (PEAK_LOOKBACK_HOURS + 24) * 3600;

export class PublicationHistory {
  private readonly now: () => number;
  private warned = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly logger?: Logger,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
  }

  /** Counts `n` publications (negative: taken back) in the current hour. Never throws, never waits. */
  add(n: number): void {
    if (n === 0) return;
    const key = publicationHourKey(this.prefix, Math.floor(this.now() / HOUR_MS));
    this.redis
      .multi()
      .incrby(key, n)
      .expire(key, KEEP_SECS)
      .exec()
      .catch((err: unknown) => {
        // A lost count only lowers the measured peak a little; say so once.
        if (this.warned) return;
        this.warned = true;
        this.logger?.warn(
          { err: (err as Error).message },
          'could not count a publication for the balance floor',
        );
      });
  }

  /** The most publications accepted in any one clock hour of the look-back, the current hour included. */
  async peakHour(hours = PEAK_LOOKBACK_HOURS): Promise<number> {
    const current = Math.floor(this.now() / HOUR_MS);
    const keys = Array.from({ length: hours }, (_, i) => publicationHourKey(this.prefix, current - i));
    const values = await this.redis.mget(...keys);
    let peak = 0;
    for (const v of values) {
      const n = v === null ? 0 : Number(v);
      if (Number.isFinite(n) && n > peak) peak = n;
    }
    return peak;
  }
}
