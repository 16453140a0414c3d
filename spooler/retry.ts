// When to try again, and when to give up. Waits follow
// `retry_schedule_secs` (the last value repeats); a message is bounced once
// `max_attempts` attempts failed or it is `lifetime_secs` old, whichever
// comes first. The last retry is pulled in to the end of the lifetime so a
// message is never bounced without a final attempt near its expiry.
import type { SpoolerConfig } from '../src/core/config/types.ts';

type RetryConfig = Pick<SpoolerConfig, 'retry_schedule_secs' | 'max_attempts' | 'lifetime_secs'>;

/** Seconds to wait after the `attemptsMade`-th failed attempt (1-based). */
export function retryWaitSecs(schedule: readonly number[], attemptsMade: number): number {
  const i = Math.min(Math.max(attemptsMade, 1), schedule.length) - 1;
  return schedule[i] ?? 60;
}

export function expiresAt(cfg: RetryConfig, createdAt: number): number {
  return createdAt + cfg.lifetime_secs * 1000;
}

export type RetryDecision = { giveUp: true } | { giveUp: false; at: number };

export function nextAttempt(
  cfg: RetryConfig,
  createdAt: number,
  attemptsMade: number,
  now: number,
): RetryDecision {
  const expiry = expiresAt(cfg, createdAt);
  if (attemptsMade >= cfg.max_attempts || now >= expiry) return { giveUp: true };
  return {
    giveUp: false,
    at: Math.min(now + retryWaitSecs(cfg.retry_schedule_secs, attemptsMade) * 1000, expiry),
  };
}

/** The delayed-delivery DSN is due (once) when the message has waited this long; 0 turns it off. */
export function delayDsnDue(
  cfg: Pick<SpoolerConfig, 'delay_dsn_after_secs'>,
  createdAt: number,
  now: number,
): boolean {
  return cfg.delay_dsn_after_secs > 0 && now - createdAt >= cfg.delay_dsn_after_secs * 1000;
}
