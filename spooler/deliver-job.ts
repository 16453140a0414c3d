// The processor of one domain job: one delivery attempt for the recipients
// still pending, then the bookkeeping — failure DSNs for recipients that
// failed for good, the one delayed-delivery DSN, and either the next
// attempt (the job moves to BullMQ's delayed set, keeping its id and data)
// or the end. Every decision is written into the job's data before the
// side effect that follows it, so a crash at any point re-runs safely.
import { DelayedError, type Job } from 'bullmq';
import type { DomainJobData, FinalOutcome } from '../src/contracts/outbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import { type Logger, withContext } from '../src/core/log.ts';
import type { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import { type AttemptDeps, attemptDelivery, type Reason } from './attempt.ts';
import type { DomainLimiter } from './domain-limiter.ts';
import { type DsnDeps, queueDsn, wantsDsn } from './dsn-out.ts';
import { delayDsnDue, expiresAt, nextAttempt } from './retry.ts';
import type { RcptAnswer } from './smtp-session.ts';

export interface DeliverJobDeps {
  attempt: AttemptDeps;
  limiter: DomainLimiter;
  blobs: BlobStore;
  dsn: DsnDeps;
  /** The outbound ledger (src/core/store/outbound-ledger.ts): a domain job's end is recorded there. */
  ledger?: OutboundLedger | null;
  logger: Logger;
  /** Test hook: runs right after a hand-off is recorded, before anything else. */
  afterHandoff?: (job: Job<DomainJobData>, delivered: string[]) => Promise<void>;
}

export type DeliverJobResult = { delivered: string[]; failed: string[] };

/** How long a job waits when its domain has no free slot (spread so waiters do not stampede). */
const SLOT_WAIT_MS = [200, 800] as const;

export async function processDomainJob(
  deps: DeliverJobDeps,
  job: Job<DomainJobData>,
  token?: string,
): Promise<DeliverJobResult> {
  const data = job.data;
  const log = withContext(deps.logger, { msgid: data.msgid, jobId: job.id });
  const now = deps.attempt.now;
  const pending = data.rcpts.filter((r) => !data.final[r]);

  if (pending.length > 0) {
    const lease = await deps.limiter.tryAcquire(data.domain);
    if (!lease) {
      const wait = SLOT_WAIT_MS[0] + Math.floor(deps.attempt.random() * (SLOT_WAIT_MS[1] - SLOT_WAIT_MS[0]));
      await job.moveToDelayed(Date.now() + wait, token);
      throw new DelayedError();
    }
    const attempt = data.attempts + 1;
    let recorded = false;
    let outcome: Awaited<ReturnType<typeof attemptDelivery>>;
    let released: Promise<void>;
    try {
      const message = await deps.blobs.read(data.blobKey).catch(() => null);
      if (!message) {
        log.error({ blobKey: data.blobKey }, 'outbound message content is missing');
        outcome = {
          delivered: [],
          failed: new Map(
            pending.map((r) => [
              r,
              { status: '5.3.0', diagnostic: 'message content was lost before delivery' },
            ]),
          ),
          deferred: new Map(),
        };
      } else {
        outcome = await attemptDelivery(deps.attempt, {
          domain: data.domain,
          from: data.from,
          rcpts: pending,
          message,
          dsn: data.dsn,
          onDelivered: async (delivered, info) => {
            // Exactly once: the remote said 250 to the data; record it now.
            for (const d of delivered) {
              data.final[d.rcpt] = {
                ...finalOf('delivered', d, now()),
                ...(info.dsnOffered ? { dsnPassedOn: true } : {}),
              };
            }
            data.attempts = attempt;
            await job.updateData(data);
            recorded = true;
            await deps.afterHandoff?.(
              job,
              delivered.map((d) => d.rcpt),
            );
          },
        });
      }
    } finally {
      // Not awaited here: giving the slot back overlaps with the bookkeeping below.
      released = lease.release();
    }

    data.attempts = attempt;
    const at = now();
    for (const [rcpt, reason] of outcome.failed) data.final[rcpt] = { state: 'failed', at, ...reason };
    for (const [rcpt, reason] of outcome.deferred) data.lastTemporary[rcpt] = reason;
    for (const rcpt of Object.keys(data.final)) delete data.lastTemporary[rcpt];
    const stillPending = data.rcpts.filter((r) => !data.final[r]);
    const decision = nextAttempt(deps.attempt.config, data.createdAt, data.attempts, at);
    if (stillPending.length > 0 && decision.giveUp) {
      for (const rcpt of stillPending) data.final[rcpt] = expired(data.lastTemporary[rcpt], at, data);
    }
    if (!decision.giveUp) data.nextAttemptAt = decision.at;
    // When everything was delivered, the hand-off write already holds it all.
    const onlyDelivered =
      recorded && outcome.failed.size === 0 && outcome.deferred.size === 0 && stillPending.length === 0;
    if (!onlyDelivered) await job.updateData(data);
    await released;
    logRecipients(log, data, outcome, at);
  }

  await bounceFailures(deps, job, log);
  await reportSuccess(deps, job, log);

  const stillPending = data.rcpts.filter((r) => !data.final[r]);
  if (stillPending.length > 0) {
    const at = now();
    if (
      !data.delayNotified &&
      delayDsnDue(deps.attempt.config, data.createdAt, at) &&
      wantsDsn(data, 'DELAY')
    ) {
      const entries = stillPending.map((rcpt) => ({
        rcpt,
        ...(data.lastTemporary[rcpt] ?? { status: '4.0.0', diagnostic: 'not delivered yet' }),
      }));
      await queueDsn(deps.dsn, data, 'delayed', entries, {
        willRetryUntil: new Date(expiresAt(deps.attempt.config, data.createdAt)),
        lastAttempt: new Date(at),
      });
      data.delayNotified = true;
      await job.updateData(data);
    }
    const due = data.nextAttemptAt ?? at;
    // The job's delay runs on the real clock; the configured one decides how long.
    await job.moveToDelayed(Date.now() + Math.max(0, due - at), token);
    throw new DelayedError();
  }
  // Recorded before the content goes: a job rebuilt from the ledger never comes back to this domain.
  if (deps.ledger) {
    const allDelivered = data.rcpts.every((r) => data.final[r]?.state === 'delivered');
    await deps.ledger.domainsDone(data.msgid, [data.domain], allDelivered ? 'delivered' : 'failed');
    // One domain: no cleanup parent, this job is the message's end.
    if (data.removeBlobs) await deps.ledger.finish([data.msgid]);
  }
  for (const key of data.removeBlobs ?? []) await deps.blobs.delete(key);
  return {
    delivered: data.rcpts.filter((r) => data.final[r]?.state === 'delivered'),
    failed: data.rcpts.filter((r) => data.final[r]?.state === 'failed'),
  };
}

/**
 * One line per recipient and attempt, as Postfix logs `status=deferred (…)`:
 * recipient, relay, attempt, delay since the message entered the spooler,
 * status (delivered, deferred, bounced) and the remote's reason.
 */
function logRecipients(
  log: Logger,
  data: DomainJobData,
  outcome: { delivered: RcptAnswer[]; failed: Map<string, Reason>; deferred: Map<string, Reason> },
  at: number,
): void {
  const common = {
    domain: data.domain,
    attempt: data.attempts,
    delay: `${((at - data.createdAt) / 1000).toFixed(1)}s`,
  };
  for (const d of outcome.delivered) {
    const line = {
      to: d.rcpt,
      ...(d.remoteMta ? { relay: d.remoteMta } : {}),
      ...common,
      status: 'sent',
      dsn: d.status,
      reason: d.response,
    };
    log.info(
      line,
      `outbound delivery to=<${d.rcpt}>${d.remoteMta ? ` relay=${d.remoteMta}` : ''} status=sent (${d.response})`,
    );
  }
  for (const [rcpt, r] of outcome.failed) {
    const line = {
      to: rcpt,
      relay: r.remoteMta,
      ...common,
      status: 'bounced',
      dsn: r.status,
      reason: r.diagnostic,
    };
    log.warn(line, `outbound delivery to=<${rcpt}> status=bounced (${r.diagnostic})`);
  }
  for (const [rcpt, r] of outcome.deferred) {
    // Out of attempts or lifetime: this deferral is the bounce (5.4.7, the last error quoted).
    const final = data.final[rcpt];
    const status = final?.state === 'failed' ? 'bounced' : 'deferred';
    const why = final?.state === 'failed' ? final : r;
    const next =
      status === 'deferred' && data.nextAttemptAt !== undefined
        ? { nextAttemptAt: new Date(data.nextAttemptAt).toISOString() }
        : {};
    const line = {
      to: rcpt,
      relay: r.remoteMta,
      ...common,
      status,
      dsn: why.status,
      reason: why.diagnostic,
      ...next,
    };
    log.warn(line, `outbound delivery to=<${rcpt}> status=${status} (${why.diagnostic})`);
  }
}

function finalOf(state: FinalOutcome['state'], a: RcptAnswer, at: number): FinalOutcome {
  return {
    state,
    at,
    status: a.status,
    diagnostic: a.response,
    ...(a.remoteMta ? { remoteMta: a.remoteMta } : {}),
  };
}

function expired(last: Reason | undefined, at: number, data: DomainJobData): FinalOutcome {
  const why = last ? `; last error: ${last.diagnostic}` : '';
  return {
    state: 'failed',
    at,
    status: '5.4.7',
    diagnostic: `delivery time expired after ${data.attempts} attempts${why}`,
    remoteMta: last?.remoteMta,
  };
}

/**
 * NOTIFY=SUCCESS (RFC 3461 §6.2.2.2): recipients handed to a next hop that
 * offers no DSN get a "relayed" DSN; where it offered DSN the request went
 * along with the message and reporting is the next hop's job.
 */
async function reportSuccess(deps: DeliverJobDeps, job: Job<DomainJobData>, log: Logger): Promise<void> {
  const data = job.data;
  if (!wantsDsn(data, 'SUCCESS')) return;
  const settled = data.successNotified ?? [];
  const delivered = data.rcpts.filter((r) => data.final[r]?.state === 'delivered' && !settled.includes(r));
  if (delivered.length === 0) return;
  const relayed = delivered.filter((r) => !data.final[r]?.dsnPassedOn);
  if (relayed.length > 0) {
    const entries = relayed.map((rcpt) => {
      const f = data.final[rcpt] as FinalOutcome;
      return { rcpt, status: f.status, diagnostic: f.diagnostic, remoteMta: f.remoteMta };
    });
    const id = await queueDsn(deps.dsn, data, 'relayed', entries, {
      lastAttempt: new Date(deps.attempt.now()),
    });
    log.info({ rcpts: relayed, dsn: id }, 'success DSN (relayed) queued');
  }
  data.successNotified = [...settled, ...delivered];
  await job.updateData(data);
}

/** Failure DSN for failed recipients not yet bounced (idempotent by DSN job id). */
async function bounceFailures(deps: DeliverJobDeps, job: Job<DomainJobData>, log: Logger): Promise<void> {
  const data = job.data;
  const unbounced = data.rcpts.filter((r) => data.final[r]?.state === 'failed' && !data.bounced.includes(r));
  if (unbounced.length === 0) return;
  if (wantsDsn(data, 'FAILURE')) {
    const entries = unbounced.map((rcpt) => {
      const f = data.final[rcpt] as FinalOutcome;
      return { rcpt, status: f.status, diagnostic: f.diagnostic, remoteMta: f.remoteMta };
    });
    const id = await queueDsn(deps.dsn, data, 'failed', entries, {
      lastAttempt: new Date(deps.attempt.now()),
    });
    log.info({ rcpts: unbounced, dsn: id }, 'failure DSN queued');
  } else {
    log.info({ rcpts: unbounced, from: data.from }, 'recipients failed; no DSN (null sender or NOTIFY)');
  }
  data.bounced.push(...unbounced);
  await job.updateData(data);
}
