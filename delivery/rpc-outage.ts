// The chain RPC endpoint, not the message, is at fault: a job whose stage
// failed with a retryable endpoint error (src/core/net/rpc-discipline.ts
// RpcUnavailableError, however wrapped) is delayed without spending a
// delivery attempt (delivery/pipeline.ts), so a 429 storm longer than
// `[chain] rpc_max_wait_secs` never bounces mail. One per worker process:
// it says how long a job waits and logs the outage once a minute, never once
// per job (the RPC layer logs its own causes once a minute too).
import type { Logger } from '../src/core/log.ts';

/** Shortest wait of a deferred job. */
export const RPC_WAIT_MIN_MS = 250;
/** The first wait when the endpoint named no time to come back; it doubles while the outage lasts, up to the max. */
export const RPC_BACKOFF_MS = 2_000;
export const RPC_BACKOFF_MAX_MS = 60_000;
/** The longest Retry-After honoured as it is (the process's RPC gate stays closed until then anyway). */
export const RPC_RETRY_AT_MAX_MS = 600_000;
const LOG_EVERY_MS = 60_000;

export class RpcOutage {
  /** When the current outage began (the first deferral since the last delivery went through), or 0. */
  private since = 0;
  private loggedAt = 0;
  /** Deferrals since the last line. */
  private deferred = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * How long a job waits: until `retryAt` when the endpoint named it (plus a
   * little jitter, so jobs do not come back all at once), else a backoff as
   * long as the outage so far (so it doubles), both within the bounds.
   */
  defer(retryAt: number | undefined, log: Logger): number {
    const now = this.now();
    if (this.since === 0) this.since = now;
    this.deferred++;
    if (now - this.loggedAt >= LOG_EVERY_MS) {
      log.warn(
        { deferred: this.deferred, outageSecs: Math.round((now - this.since) / 1000) },
        `deliveries wait for the chain RPC (unavailable; ${this.deferred} deferred since the last line, no attempt spent)`,
      );
      this.loggedAt = now;
      this.deferred = 0;
    }
    if (retryAt !== undefined)
      return Math.round(
        Math.min(RPC_RETRY_AT_MAX_MS, Math.max(RPC_WAIT_MIN_MS, retryAt - now + this.random() * 250)),
      );
    const step = Math.max(RPC_BACKOFF_MS, now - this.since);
    return Math.round(Math.min(RPC_BACKOFF_MAX_MS, step * (0.75 + this.random() * 0.5)));
  }

  /** A delivery went through: the next deferral starts a new outage (and logs at once if a minute passed). */
  clear(): void {
    this.since = 0;
  }
}
