// What the instrumented parts (MX edge, pipeline, workers) report. The
// interfaces import nothing, so delivery/ and src/edge/mx/ depend on these and
// never on prom-client; SealpostMetrics (./sealpost-metrics.ts) implements them.

/** Pipeline stages as they are timed: resolve, seal, pin, submit (SendMail, confirmed), store. */
export type StageName = 'resolve' | 'seal' | 'pin' | 'submit' | 'store';

export interface PipelineMetrics {
  /** One finished stage and how long it took. */
  stageDone(stage: StageName, seconds: number): void;
  /** A stage that threw (the job retries or fails). */
  stageFailed(stage: StageName): void;
  /** A best-effort pin to a recipient's own provider that failed (logged and dropped). */
  recipientPinFailed(): void;
  /** A delivery job that finished: `delivered`, or `failed` for good (bounced). */
  delivery(outcome: 'delivered' | 'failed'): void;
  /**
   * A delivery job failed for good with a signed SendMail never confirmed:
   * `expired` (proven not landed, DSN 5.4.7), `permanent` (a permanent error
   * after signing).
   */
  unconfirmedFailure?(reason: UnconfirmedFailureReason): void;
  /** A job starts (`true`) or stops (`false`) waiting for the expiry proof of its signed SendMail. */
  awaitingProof?(jobId: string, waiting: boolean): void;
}

export type UnconfirmedFailureReason = 'expired' | 'permanent';

/** The SMTP command a reply answers: the greeting, MAIL, RCPT or the end of DATA. */
export type SmtpPhase = 'connect' | 'mail' | 'rcpt' | 'data';

export interface SmtpMetrics {
  reply(phase: SmtpPhase, code: number): void;
  /** From the end of DATA to the 250: spool fsync and the jobs in Redis. */
  accepted(seconds: number): void;
  /** Session error limits (src/edge/mx/error-limit.ts): an error reply, a delayed command, a session closed. */
  sessionError(listener: string, action: 'error' | 'delayed' | 'closed'): void;
}

/** The MX's content scans (src/mail/spam/filter.ts). */
export interface SpamMetrics {
  /** A scan rspamd answered: its action and how long it took. */
  spamScanned(direction: 'inbound' | 'outbound', action: string, seconds: number): void;
  /** A scan that failed (unreachable, timeout, status, garbage) and what on_error did. */
  spamError(kind: string, handled: 'accept' | 'defer'): void;
  /** A message not scanned by rule (too-big: over `[spam] max_scan_bytes`). */
  spamSkipped(why: 'too-big'): void;
}

/** DNS block- and allowlists at the MX (src/mail/spam/dnsbl.ts); `list` is the zone. */
export interface DnsblMetrics {
  /** One DNS query of a zone (a cache miss) and how long it took; result: listed, clear, timeout, servfail, error, list-error, invalid. */
  dnsblLookup(list: string, result: string, seconds: number): void;
  /** A look-up answered from the cache. */
  dnsblCacheHit(list: string): void;
  /** A refusal because of a listing: action reject or defer (a list's own action), or score (the total weight). */
  dnsblRefused(list: string, action: 'reject' | 'defer' | 'score'): void;
  /** A transaction filed as Junk because of its listings (each list that added weight). */
  dnsblJunk(list: string): void;
  /** A connection whose address an allowlist lists (the blocklists were not applied). */
  dnsblAllowed(list: string): void;
  /** The list's test entries show it answers for everything (or refuses us): disabled, or enabled again. */
  dnsblDisabled(list: string, disabled: boolean): void;
}

/** Runs one stage and reports its duration or its failure. */
export async function timeStage<T>(
  metrics: PipelineMetrics | undefined,
  stage: StageName,
  run: () => Promise<T>,
): Promise<T> {
  if (!metrics) return run();
  const started = performance.now();
  try {
    const result = await run();
    metrics.stageDone(stage, (performance.now() - started) / 1000);
    return result;
  } catch (err) {
    metrics.stageFailed(stage);
    throw err;
  }
}

/** Why an IMAP IDLE session looked at the store: a notification, its poll timer, or a (re)subscription. */
export type IdleWakeCause = 'push' | 'poll' | 'resync';

/** IMAP IDLE push (src/edge/imap/push.ts). */
export interface ImapPushMetrics {
  /** Mail-change notifications: published (or failed to) by this process, received from others. */
  pushNotification(event: 'published' | 'publish_failed' | 'received'): void;
  /** An IDLE session looked at the store, and whether it found anything to tell. */
  idleWakeup(cause: IdleWakeCause, result: 'changed' | 'unchanged'): void;
  /** The subscription went live (true) or was lost (false). */
  pushSubscribed(live: boolean): void;
}
