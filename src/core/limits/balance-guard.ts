// The authority balance guard. Every relayed message costs the domain
// authority a SendMail fee and an Email account's rent, so the MX stops
// taking new mail (4xx, the sender retries later) while the authority's
// balance is below `[chain] min_authority_lamports` plus what one more
// message may cost (fee, rent, priority fee at its cap). The balance is read by a
// poller every few seconds and cached, so MAIL FROM never waits on the chain.
//
// With `min_authority_lamports = "auto"` (the default) the floor is an hour
// of this deployment's peak spend: the most publications the MX accepted in
// any clock hour of the last week (./publication-history.ts) times what one
// message may cost, and never less than AUTO_FLOOR_MINIMUM_LAMPORTS, so a
// backlog acknowledged in the busiest hour can still be paid for when the
// MX starts deferring.
//
// An unknown balance (no successful read yet, or the last one is stale)
// does not defer mail: the pipeline re-checks on chain and retries, and an
// RPC hiccup must not turn into a mail outage. Only a known low balance does.
import type { Logger } from '../log.ts';
import type { CostGuardMetrics } from './metrics.ts';

/** The least an "auto" floor is: 0.05 SOL, about eighteen messages' rent and fees. */
export const AUTO_FLOOR_MINIMUM_LAMPORTS = 50_000_000;

export interface AutoFloor {
  /** The most publications accepted in one clock hour recently (PublicationHistory.peakHour). */
  peakHour: () => Promise<number>;
  /** Lower bound; default AUTO_FLOOR_MINIMUM_LAMPORTS. */
  minimumLamports?: number;
  /** How often the peak is read again; default with every balance read (one MGET of the week's hours). */
  refreshMs?: number;
}

export interface BalanceGuardOptions {
  /** Reads the authority's balance in lamports (production: Connection.getBalance). */
  read: () => Promise<number>;
  /** Floor; 0 turns deferral off (the balance is still polled for the metric). Ignored with `auto`. */
  minLamports: number;
  /** Size the floor from the peak hour's publications instead of `minLamports`. */
  auto?: AutoFloor;
  /**
   * The most one message costs (signature fee, Email rent, priority fee at
   * its cap: messageCostLamports in delivery/priority-fee.ts): a balance is
   * enough while paying one more message leaves at least `minLamports`.
   * Default 0 (the floor alone).
   */
  perMessageLamports?: number;
  intervalMs: number;
  logger: Logger;
  metrics?: CostGuardMetrics;
  /** A read older than this counts as unknown; default 12 intervals (at least 60 s). */
  staleMs?: number;
  now?: () => number;
}

export type BalanceCheck = { ok: true } | { ok: false; lamports: number; minLamports: number };

export class BalanceGuard {
  private lamports: number | undefined;
  private readAt = 0;
  private low = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly staleMs: number;
  private readonly log: Logger;
  private autoFloor: number | undefined;
  private peakReadAt = Number.NEGATIVE_INFINITY;
  private peakMessages = 0;

  constructor(private readonly opts: BalanceGuardOptions) {
    this.now = opts.now ?? Date.now;
    this.staleMs = opts.staleMs ?? Math.max(60_000, opts.intervalMs * 12);
    this.log = opts.logger.child({ component: 'balance-guard' });
  }

  /**
   * Reads once (so the first MAIL FROM already sees a balance; a slow RPC
   * delays start-up by one interval at most), then polls.
   */
  async start(): Promise<void> {
    let wait: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.refresh(),
      new Promise<void>((resolve) => {
        wait = setTimeout(resolve, this.opts.intervalMs);
      }),
    ]);
    clearTimeout(wait);
    this.timer = setInterval(() => void this.refresh(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One read; concurrent callers share it. Never throws (a failed read is logged and counted). */
  refresh(): Promise<void> {
    this.inFlight ??= this.readOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** The floor itself: `minLamports`, or with `auto` an hour of peak spend (at least its minimum). */
  get minLamports(): number {
    const auto = this.opts.auto;
    if (!auto) return this.opts.minLamports;
    return this.autoFloor ?? auto.minimumLamports ?? AUTO_FLOOR_MINIMUM_LAMPORTS;
  }

  /** Publications in the busiest recent hour, as last read (auto floor only). */
  get peakHourMessages(): number {
    return this.peakMessages;
  }

  /** What the balance must reach: the floor plus one message's cost (0 when deferral is off). */
  get floorLamports(): number {
    const min = this.minLamports;
    if (min <= 0) return 0;
    return min + (this.opts.perMessageLamports ?? 0);
  }

  /** The cached verdict for a new transaction. */
  check(): BalanceCheck {
    if (this.minLamports <= 0 || this.lamports === undefined) return { ok: true };
    if (this.now() - this.readAt > this.staleMs) return { ok: true };
    if (this.lamports >= this.floorLamports) return { ok: true };
    return { ok: false, lamports: this.lamports, minLamports: this.floorLamports };
  }

  /** The last balance read, if any. */
  get lastLamports(): number | undefined {
    return this.lamports;
  }

  private async readPeak(): Promise<void> {
    const auto = this.opts.auto;
    if (!auto || this.now() - this.peakReadAt < (auto.refreshMs ?? 0)) return;
    try {
      this.peakMessages = await auto.peakHour();
      this.peakReadAt = this.now();
    } catch (err) {
      // Keep the last figure; the next poll tries again.
      this.log.warn({ err: (err as Error).message }, 'could not read the peak hour of publications');
      return;
    }
    const perMessage = this.opts.perMessageLamports ?? 0;
    this.autoFloor = Math.max(
      auto.minimumLamports ?? AUTO_FLOOR_MINIMUM_LAMPORTS,
      this.peakMessages * perMessage,
    );
    this.opts.metrics?.floor.set(this.floorLamports);
    this.opts.metrics?.peakHour.set(this.peakMessages);
  }

  private async readOnce(): Promise<void> {
    await this.readPeak();
    this.opts.metrics?.floor.set(this.floorLamports);
    let lamports: number;
    try {
      lamports = await this.opts.read();
    } catch (err) {
      this.opts.metrics?.balanceReadErrors.inc();
      this.log.warn({ err: (err as Error).message }, 'could not read the authority balance');
      return;
    }
    this.lamports = lamports;
    this.readAt = this.now();
    this.opts.metrics?.balance.set(lamports);
    const min = this.floorLamports;
    const low = min > 0 && lamports < min;
    this.opts.metrics?.low.set(low ? 1 : 0);
    if (low && !this.low) {
      this.log.error(
        {
          alert: 'authority_balance_low',
          lamports,
          min_authority_lamports: this.minLamports,
          floor_lamports: min,
          ...(this.opts.auto ? { peak_hour_messages: this.peakMessages } : {}),
        },
        'ALERT: authority balance is below [chain] min_authority_lamports; the MX defers new mail with 451 until it is topped up',
      );
    } else if (!low && this.low) {
      this.log.warn(
        {
          alert: 'authority_balance_recovered',
          lamports,
          min_authority_lamports: this.minLamports,
          floor_lamports: min,
        },
        'authority balance is back above [chain] min_authority_lamports; the MX accepts mail again',
      );
    }
    this.low = low;
  }
}
