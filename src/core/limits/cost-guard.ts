// The cost guard at the MX. Every accepted recipient becomes one SendMail
// paid by the domain authority, so each RCPT reserves one unit ("one chain
// publication") in these token-bucket windows, all or nothing:
//   - the envelope sender's window (canonical address, ./sender-address.ts; a local sender is
//     charged under `<wallet>@<d>` for every local domain d, plus the alias
//     form it used, so switching forms gains nothing), or, for the null
//     sender `<>`, the one deployment-wide null-sender bucket;
//   - the recipient wallet's window;
//   - the overall window of the deployment.
// Counting happens at RCPT and is committed by the 250 after DATA; every
// other end of the transaction (refused DATA, RSET followed by a new MAIL,
// QUIT, a dropped connection) refunds the units, so a window is charged once
// per accepted message and a 250 is never followed by a drop.
// Results, not replies: the MX turns a refusal into 451 4.7.1.
import type { Redis } from 'ioredis';
import { isNormalizedAlias } from '../../../chain/client/index.ts';
import type { BalanceCheck, BalanceGuard } from './balance-guard.ts';
import type { CostGuardMetrics } from './metrics.ts';
import type { PublicationHistory } from './publication-history.ts';
import {
  nullSenderPublicationWindowKey,
  overallPublicationWindowKey,
  senderPublicationWindowKey,
  walletWindowKey,
} from './redis-keys.ts';
import { type CanonicalSender, canonicalSender, normalizeSenderAddress } from './sender-address.ts';
import { WindowLimiter, type WindowSpec } from './window.ts';

/** Bucket name of a recipient wallet's window (`<prefix>:rl:wallet:<wallet>:pubrcpt`). */
export const RECIPIENT_BUCKET = 'pubrcpt';

export interface WindowLimit {
  /** Units per window; 0 turns the window off. */
  limit: number;
  windowMs: number;
}

export interface PublicationLimits {
  sender: WindowLimit;
  recipient: WindowLimit;
  overall: WindowLimit;
  nullSender: WindowLimit;
}

export type GuardReason = 'sender' | 'recipient' | 'overall' | 'null_sender';

export interface Reservation {
  windows: WindowSpec[];
}

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; reason: GuardReason; retryAfterSecs: number; key: string };

export interface CostGuardOptions {
  redis: Redis;
  /** `[redis] prefix`. */
  prefix: string;
  limits: PublicationLimits;
  /** `[smtp] local_domains`: senders under these are local. */
  localDomains: string[];
  /** The wallet a local alias names, or null (the MX passes its cached chain view). */
  resolveAlias?: (normalizedAlias: string) => Promise<string | null>;
  balance?: BalanceGuard;
  /** Counts accepted publications per hour (sizes an "auto" balance floor). */
  history?: PublicationHistory;
  metrics?: CostGuardMetrics;
  now?: () => number;
}

/** `[limits]` as the guard wants it. */
export function publicationLimitsFromConfig(limits: {
  sender_messages: number;
  sender_window_secs: number;
  recipient_messages: number;
  recipient_window_secs: number;
  overall_messages: number;
  overall_window_secs: number;
  null_sender_messages: number;
  null_sender_window_secs: number;
}): PublicationLimits {
  return {
    sender: { limit: limits.sender_messages, windowMs: limits.sender_window_secs * 1000 },
    recipient: { limit: limits.recipient_messages, windowMs: limits.recipient_window_secs * 1000 },
    overall: { limit: limits.overall_messages, windowMs: limits.overall_window_secs * 1000 },
    nullSender: { limit: limits.null_sender_messages, windowMs: limits.null_sender_window_secs * 1000 },
  };
}

// An unqualified sender (`name`, or anything without a usable domain) still
// gets a window of its own, under a domain that cannot exist.
function canonicalOrUnqualified(from: string): CanonicalSender {
  try {
    return canonicalSender(from);
  } catch {
    return canonicalSender(`${from}@unqualified.invalid`);
  }
}

export class CostGuard {
  private readonly limiter: WindowLimiter;
  private readonly prefix: string;

  constructor(private readonly opts: CostGuardOptions) {
    this.limiter = new WindowLimiter(opts.redis, opts.now);
    this.prefix = opts.prefix;
  }

  /**
   * A reload's `[limits]` windows, used from the next reservation on. The
   * buckets in Redis keep their keys and what they already hold; the new
   * limit and window apply to them from then on (src/core/limits/window.ts).
   */
  setLimits(limits: PublicationLimits): void {
    this.opts.limits = limits;
  }

  /** MAIL FROM: the cached authority balance verdict (counted when it defers). */
  checkBalance(): BalanceCheck {
    const verdict = this.opts.balance?.check() ?? { ok: true };
    if (!verdict.ok) this.opts.metrics?.deferred.inc({ reason: 'balance' });
    return verdict;
  }

  /** The sender's window keys (see the header for the forms); `''` is the null sender. */
  async senderKeys(from: string): Promise<string[]> {
    if (from === '') return [nullSenderPublicationWindowKey(this.prefix)];
    const sender = canonicalOrUnqualified(from);
    const given = senderPublicationWindowKey(this.prefix, sender.address);
    if (!this.opts.localDomains.includes(sender.domain)) return [given];
    let wallet: string | null = null;
    if (sender.wallet) wallet = sender.local;
    else if (isNormalizedAlias(sender.local) && this.opts.resolveAlias)
      wallet = await this.opts.resolveAlias(sender.local);
    if (!wallet) return [given];
    const forms = this.opts.localDomains.map((d) =>
      senderPublicationWindowKey(this.prefix, `${wallet}@${d}`),
    );
    return forms.includes(given) ? forms : [...forms, given];
  }

  /** RCPT: one unit for `from` → `wallet` in every window, or a refusal naming the full one. */
  async reserve(from: string, wallet: string): Promise<ReserveResult> {
    const { limits } = this.opts;
    const senderLimit = from === '' ? limits.nullSender : limits.sender;
    const reasons = new Map<string, GuardReason>();
    const windows: WindowSpec[] = [];
    const add = (key: string, limit: WindowLimit, reason: GuardReason) => {
      reasons.set(key, reason);
      windows.push({ key, ...limit });
    };
    // A sender window that is off charges nothing: its keys (parsing, an alias lookup) are not needed.
    if (senderLimit.limit > 0)
      for (const key of await this.senderKeys(from))
        add(key, senderLimit, from === '' ? 'null_sender' : 'sender');
    add(walletWindowKey(this.prefix, wallet, RECIPIENT_BUCKET), limits.recipient, 'recipient');
    add(overallPublicationWindowKey(this.prefix), limits.overall, 'overall');
    const taken = await this.limiter.take(windows);
    if (taken.ok) {
      this.opts.history?.add(1);
      return { ok: true, reservation: { windows: taken.windows } };
    }
    const reason = reasons.get(taken.window.key) ?? 'overall';
    this.opts.metrics?.deferred.inc({ reason });
    return {
      ok: false,
      reason,
      retryAfterSecs: Math.max(1, Math.ceil(taken.retryAfterMs / 1000)),
      key: taken.window.key,
    };
  }

  /** Gives back the units of a transaction that did not end in a 250. */
  async release(reservations: Reservation[]): Promise<void> {
    this.opts.history?.add(-reservations.length);
    // A key reserved k times (the sender's, the overall one) gets k units back:
    // group keys by how often they were reserved, one script run per group.
    const counts = new Map<string, { window: WindowSpec; n: number }>();
    for (const w of reservations.flatMap((r) => r.windows)) {
      const c = counts.get(w.key);
      if (c) c.n++;
      else counts.set(w.key, { window: w, n: 1 });
    }
    const byCost = new Map<number, WindowSpec[]>();
    for (const { window, n } of counts.values()) byCost.set(n, [...(byCost.get(n) ?? []), window]);
    for (const [cost, windows] of byCost) await this.limiter.refund(windows, cost);
  }
}

/** Normalized form of a sender as the guard keys it (for logs); `<>` for the null sender. */
export function senderLabel(from: string): string {
  if (from === '') return '<>';
  try {
    return normalizeSenderAddress(from);
  } catch {
    return from;
  }
}
