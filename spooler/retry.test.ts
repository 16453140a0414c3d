import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_SECS } from '../src/core/config/sections/spooler.ts';
import { delayDsnDue, nextAttempt, retryWaitSecs } from './retry.ts';

const cfg = { retry_schedule_secs: DEFAULT_RETRY_SCHEDULE_SECS, max_attempts: 14, lifetime_secs: 5 * 86_400 };

describe('retry schedule', () => {
  it('follows the schedule and repeats its last wait', () => {
    expect(retryWaitSecs(DEFAULT_RETRY_SCHEDULE_SECS, 1)).toBe(60);
    expect(retryWaitSecs(DEFAULT_RETRY_SCHEDULE_SECS, 10)).toBe(86_400);
    expect(retryWaitSecs(DEFAULT_RETRY_SCHEDULE_SECS, 13)).toBe(86_400);
  });
  it('gives up after max_attempts or at the end of the lifetime, and pulls the last retry in to the expiry', () => {
    const t0 = 1_700_000_000_000;
    expect(nextAttempt(cfg, t0, 1, t0 + 1000)).toEqual({ giveUp: false, at: t0 + 1000 + 60_000 });
    expect(nextAttempt(cfg, t0, 14, t0 + 1000)).toEqual({ giveUp: true });
    expect(nextAttempt(cfg, t0, 3, t0 + 5 * 86_400_000)).toEqual({ giveUp: true });
    const late = t0 + 5 * 86_400_000 - 3_600_000;
    expect(nextAttempt(cfg, t0, 12, late)).toEqual({ giveUp: false, at: t0 + 5 * 86_400_000 });
  });
  it('the default schedule with 14 attempts spans about five days', () => {
    let waited = 0;
    for (let n = 1; n < 14; n++) waited += retryWaitSecs(DEFAULT_RETRY_SCHEDULE_SECS, n);
    expect(waited / 86_400).toBeGreaterThan(4.5);
    expect(waited / 86_400).toBeLessThan(5.5);
  });
  it('the delayed DSN is due after delay_dsn_after_secs; 0 turns it off', () => {
    expect(delayDsnDue({ delay_dsn_after_secs: 14_400 }, 0, 14_399_999)).toBe(false);
    expect(delayDsnDue({ delay_dsn_after_secs: 14_400 }, 0, 14_400_000)).toBe(true);
    expect(delayDsnDue({ delay_dsn_after_secs: 0 }, 0, 10 * 86_400_000)).toBe(false);
  });
});
