// Opt-in rent recovery (`[chain] rent_recovery_days`, docs/operations.md
// "Rent recovery"): the Email accounts this deployment published for mail
// its store has held for more than N days are closed with DeleteMail, and
// their rent (2,679,600 lamports for an operator-pinned CID) goes back to
// the rent payer, the domain authority. The copy stays in the store, so
// IMAP, POP3 and the webmail in server mode read it as before; what a
// trustless reader loses is documented there.
//
// A sweep, run as a BullMQ job scheduler with a fixed id (one schedule in
// Redis however many worker processes upsert it) and under a Redis lease
// (one sweep at a time across processes, even when one outlasts the
// interval or is started by hand), pages through the store's candidates
// oldest first (published by us, not yet recovered, received before the
// cutoff), reads their accounts with getMultipleAccounts (100 a call), and:
//   - an account already gone (its recipient deleted it): the row is marked,
//     nothing is sent;
//   - an account whose sender is not our authority (a rotated key), or that
//     holds a bounty still in its claim window (DeleteMail would be refused
//     with BountyLocked): skipped, looked at again by a later sweep;
//   - otherwise a DeleteMail job is queued with the id every deletion path
//     uses for that copy (`delete-mail-<copy id>`), so a re-run, a second
//     sweeper or an IMAP EXPUNGE of the same copy cannot queue a second one.
// The job is sent by delivery/cleanup.ts like any DeleteMail (checkpointed,
// rebroadcast, proven before a re-sign); once it ends the worker marks the
// row (settleRentRecovery), and only the first mark counts in the metrics.
import type { Connection, PublicKey } from '@solana/web3.js';
import { type JobsOptions, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { decodeEmail } from '../chain/client/accounts/index.ts';
import { deleteBountyLocked } from '../chain/client/bounty-lock.ts';
import { readAccountsSince } from '../chain/client/rpc.ts';
import { type DeleteMailJobData, QUEUE_DELETE_MAIL } from '../src/contracts/inbound-jobs.ts';
import type { ChainConfig } from '../src/core/config/types.ts';
import { acquireLease } from '../src/core/limits/lease.ts';
import type { MetricsRegistry } from '../src/core/limits/metrics.ts';
import type { Logger } from '../src/core/log.ts';
import type { MessagesRepo, StoredMessage } from '../src/core/store/messages-repo.ts';

export const QUEUE_RENT_RECOVERY = 'rent-recovery';
/** The one job scheduler of the sweep (upserted by every worker process, so one schedule). */
export const RENT_RECOVERY_SCHEDULER_ID = 'rent-recovery-sweep';
export const RENT_RECOVERY_JOB = 'rent-recovery-sweep';

const DAY_MS = 86_400_000;
/** getMultipleAccounts takes at most 100 keys: one page of candidates is one call. */
const PAGE = 100;
/** A sweep looks at no more than this many times its batch (skipped rows do not stall it for long). */
const SCAN_FACTOR = 4;
const LEASE_TTL_MS = 60_000;

/** The same options as every other DeleteMail enqueuer (src/edge/imap/mail/release.ts, src/edge/api/account-sweep.ts). */
const DELETE_JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: true,
  removeOnFail: 1000,
};

export interface RentRecoveryPolicy {
  /** Mail older than this many days has its Email account closed; 0 = off. */
  days: number;
  /** DeleteMail jobs one sweep queues at most. */
  batch: number;
  intervalSecs: number;
}

/** `[chain] rent_recovery_days`, `rent_recovery_batch`, `rent_recovery_interval_secs`. */
export function rentRecoveryPolicyOf(
  chain: Pick<ChainConfig, 'rent_recovery_days' | 'rent_recovery_batch' | 'rent_recovery_interval_secs'>,
): RentRecoveryPolicy {
  return {
    days: chain.rent_recovery_days,
    batch: chain.rent_recovery_batch,
    intervalSecs: chain.rent_recovery_interval_secs,
  };
}

/** The sweep's series, registered once per registry (src/core/limits/metrics.ts). */
export function rentRecoveryMetrics(registry: MetricsRegistry) {
  return {
    closed: registry.counter(
      'sealpost_rent_recovery_closed_total',
      'Email accounts closed by rent recovery (DeleteMail landed), or found already closed (outcome="gone").',
    ),
    lamports: registry.counter(
      'sealpost_rent_recovery_lamports_total',
      'Lamports returned to the rent payer by the Email accounts rent recovery closed.',
    ),
    queued: registry.counter(
      'sealpost_rent_recovery_queued_total',
      'DeleteMail jobs queued by the rent-recovery sweep.',
    ),
    skipped: registry.counter(
      'sealpost_rent_recovery_skipped_total',
      'Candidates a rent-recovery sweep left open, by reason (bounty_locked, not_ours, already_queued).',
    ),
    sweeps: registry.counter('sealpost_rent_recovery_sweeps_total', 'Rent-recovery sweeps run, by outcome.'),
  };
}

export type RentRecoveryMetrics = ReturnType<typeof rentRecoveryMetrics>;

export interface RentRecoverySweepDeps {
  messages: MessagesRepo;
  /** For the DeleteMail queue and the sweep's lease. */
  redis: Redis;
  prefix: string;
  connection: Connection;
  programId: string;
  /** The domain authority: the sender of the accounts we may close. */
  authority: PublicKey;
  policy: RentRecoveryPolicy;
  logger?: Logger;
  metrics?: RentRecoveryMetrics;
  /** Unix ms; the cutoff is now − days. */
  now?: () => number;
}

export interface RentRecoverySweepResult {
  /** 'off': rent_recovery_days is 0; 'busy': another sweep holds the lease. */
  outcome: 'done' | 'off' | 'busy';
  /** Only copies received before this (Unix ms) were candidates. */
  cutoff: number;
  examined: number;
  /** DeleteMail jobs queued. */
  queued: number;
  /** Rows found with their account already closed (marked, nothing sent). */
  gone: number;
  bountyLocked: number;
  notOurs: number;
  /** A DeleteMail of that copy was already waiting (an earlier sweep's, or a deletion's). */
  alreadyQueued: number;
  /** What the sweep itself asked the chain (getMultipleAccounts, and getSlot + getBlockTime once for a bounty). */
  rpcCalls: number;
  /** Lamports held by the accounts it queued DeleteMail for. */
  lamportsQueued: number;
}

export function rentRecoveryLeaseKey(prefix: string): string {
  return `${prefix}:rent-recovery:lease`;
}

/** One sweep (see the head of this file). Never sends a transaction itself. */
export async function sweepRentRecovery(deps: RentRecoverySweepDeps): Promise<RentRecoverySweepResult> {
  const now = (deps.now ?? Date.now)();
  const result: RentRecoverySweepResult = {
    outcome: 'done',
    cutoff: now - deps.policy.days * DAY_MS,
    examined: 0,
    queued: 0,
    gone: 0,
    bountyLocked: 0,
    notOurs: 0,
    alreadyQueued: 0,
    rpcCalls: 0,
    lamportsQueued: 0,
  };
  if (deps.policy.days <= 0) return { ...result, outcome: 'off' };
  const lease = await acquireLease(deps.redis, rentRecoveryLeaseKey(deps.prefix), { ttlMs: LEASE_TTL_MS });
  if (!lease) {
    deps.metrics?.sweeps.inc({ outcome: 'busy' });
    return { ...result, outcome: 'busy' };
  }
  const started = Date.now();
  const queue = new Queue<DeleteMailJobData>(QUEUE_DELETE_MAIL, {
    connection: deps.redis,
    prefix: deps.prefix,
  });
  const authority = deps.authority.toBase58();
  let chainNow: number | undefined;
  try {
    const maxExamined = deps.policy.batch * SCAN_FACTOR;
    let after: { receivedAt: number; id: string } | undefined;
    while (result.queued < deps.policy.batch && result.examined < maxExamined && lease.held) {
      const limit = Math.min(PAGE, maxExamined - result.examined);
      const page = await deps.messages.listRentRecoverable(result.cutoff, { after, limit });
      if (page.length === 0) break;
      const last = page[page.length - 1] as StoredMessage;
      after = { receivedAt: last.receivedAt, id: last.id };
      result.examined += page.length;
      const addresses = page.map((m) => m.emailAddress as string);
      const accounts = await readAccountsSince(deps.connection, addresses, 'confirmed', 0);
      result.rpcCalls++;
      const open: { m: StoredMessage; lamports: number }[] = [];
      const gone: StoredMessage[] = [];
      for (const [i, m] of page.entries()) {
        const account = accounts[i];
        if (!account || account.owner !== deps.programId) {
          gone.push(m);
          continue;
        }
        let email: ReturnType<typeof decodeEmail>;
        try {
          email = decodeEmail(account.data);
        } catch {
          result.notOurs++;
          continue;
        }
        if (email.sender.toBase58() !== authority) {
          result.notOurs++;
          continue;
        }
        if (email.bountyLamports > 0n) {
          if (chainNow === undefined) {
            const slot = await deps.connection.getSlot('confirmed');
            chainNow = (await deps.connection.getBlockTime(slot)) ?? Math.floor(Date.now() / 1000);
            result.rpcCalls += 2;
          }
          if (deleteBountyLocked(email, deps.authority, chainNow)) {
            result.bountyLocked++;
            continue;
          }
        }
        open.push({ m, lamports: account.lamports });
      }
      // Closed already: by its recipient's DeleteMail, or by ours whose worker
      // has not marked the row yet (its job still exists: the worker marks
      // it, and counts it as closed). The rent went to its payer either way.
      const inFlight = await Promise.all(gone.map((m) => queue.getJob(deleteMailJobId(m.id))));
      for (const [i, m] of gone.entries()) {
        if (inFlight[i]) {
          result.alreadyQueued++;
          continue;
        }
        if (await deps.messages.markRentRecovered(m.id, m.emailAddress as string, now)) {
          result.gone++;
          deps.metrics?.closed.inc({ outcome: 'gone' });
        }
      }
      // Under the lease no other sweep adds meanwhile; a deletion adding the
      // same id is harmless (BullMQ keeps the first job of an id). A job
      // that ended between the page read and here marked its row before it
      // was removed, so the row is read again after the job lookup.
      const room = deps.policy.batch - result.queued;
      const existing = await Promise.all(open.map(({ m }) => queue.getJob(deleteMailJobId(m.id))));
      const waiting = open.filter((_, i) => existing[i]);
      result.alreadyQueued += waiting.length;
      const unmarked = await deps.messages.rentUnrecovered(
        open.filter((_, i) => !existing[i]).map(({ m }) => m.id),
      );
      const fresh = open.filter((o, i) => !existing[i] && unmarked.has(o.m.id));
      const take = fresh.slice(0, room);
      if (take.length > 0) {
        await queue.addBulk(
          take.map(({ m, lamports }) => ({
            name: 'delete-mail',
            data: {
              wallet: m.wallet,
              emailAddress: m.emailAddress as string,
              messageId: m.id,
              rentRecovery: { lamports },
            },
            opts: { ...DELETE_JOB_OPTIONS, jobId: deleteMailJobId(m.id) },
          })),
        );
        result.queued += take.length;
        result.lamportsQueued += take.reduce((s, t) => s + t.lamports, 0);
      }
      if (page.length < limit) break;
    }
  } finally {
    await queue.close();
    await lease.release().catch(() => false);
  }
  const m = deps.metrics;
  if (m) {
    m.sweeps.inc({ outcome: 'done' });
    if (result.queued) m.queued.inc({}, result.queued);
    if (result.bountyLocked) m.skipped.inc({ reason: 'bounty_locked' }, result.bountyLocked);
    if (result.notOurs) m.skipped.inc({ reason: 'not_ours' }, result.notOurs);
    if (result.alreadyQueued) m.skipped.inc({ reason: 'already_queued' }, result.alreadyQueued);
  }
  deps.logger?.info(
    {
      component: 'rent-recovery',
      days: deps.policy.days,
      cutoff: new Date(result.cutoff).toISOString(),
      examined: result.examined,
      queued: result.queued,
      lamportsQueued: result.lamportsQueued,
      gone: result.gone,
      bountyLocked: result.bountyLocked,
      notOurs: result.notOurs,
      alreadyQueued: result.alreadyQueued,
      rpcCalls: result.rpcCalls,
      ms: Date.now() - started,
    },
    'rent recovery sweep',
  );
  return result;
}

/** The job id every DeleteMail enqueuer gives a copy's DeleteMail. */
export function deleteMailJobId(messageId: string): string {
  return `delete-mail-${messageId}`;
}

/**
 * The DeleteMail worker's follow-up once closeEmailAccount ended: for a job
 * the sweep queued, the row records the recovery (only the first time
 * counts, so a retried job or a worker killed after the mark never counts
 * twice). Other DeleteMail jobs (IMAP EXPUNGE, account deletion) have no
 * row left to mark.
 */
export async function settleRentRecovery(
  deps: { messages: MessagesRepo; metrics?: RentRecoveryMetrics; now?: () => number },
  data: DeleteMailJobData,
  outcome: 'closed' | 'gone',
): Promise<boolean> {
  if (!data.rentRecovery) return false;
  const marked = await deps.messages.markRentRecovered(
    data.messageId,
    data.emailAddress,
    (deps.now ?? Date.now)(),
  );
  if (marked) {
    deps.metrics?.closed.inc({ outcome });
    if (outcome === 'closed') deps.metrics?.lamports.inc({}, data.rentRecovery.lamports);
  }
  return marked;
}

export interface RentRecoveryRunnerOptions extends Omit<RentRecoverySweepDeps, 'redis'> {
  /** A connection factory (the worker needs a blocking connection of its own). */
  redis: () => Redis;
}

export interface RentRecoveryRunner {
  close(): Promise<void>;
}

/**
 * Where the pipeline workers run: the sweep's job scheduler (every
 * `intervalSecs`, fixed id) and a worker for it; with the policy off, the
 * scheduler is removed so a deployment that turns it off stops sweeping.
 */
export async function startRentRecovery(opts: RentRecoveryRunnerOptions): Promise<RentRecoveryRunner> {
  const connections: Redis[] = [];
  const conn = () => {
    const c = opts.redis();
    connections.push(c);
    return c;
  };
  const shared = conn();
  const queue = new Queue(QUEUE_RENT_RECOVERY, { connection: shared, prefix: opts.prefix });
  let worker: Worker | undefined;
  if (opts.policy.days <= 0) {
    await queue.removeJobScheduler(RENT_RECOVERY_SCHEDULER_ID);
  } else {
    await queue.upsertJobScheduler(
      RENT_RECOVERY_SCHEDULER_ID,
      { every: opts.policy.intervalSecs * 1000 },
      { name: RENT_RECOVERY_JOB, data: {}, opts: { removeOnComplete: 30, removeOnFail: 100 } },
    );
    worker = new Worker(
      QUEUE_RENT_RECOVERY,
      async () => {
        const r = await sweepRentRecovery({ ...opts, redis: shared });
        return { ...r };
      },
      { connection: conn(), prefix: opts.prefix, concurrency: 1 },
    );
    worker.on('error', (err) => opts.logger?.warn({ err: err.message }, 'rent recovery worker error'));
    worker.on('failed', (_job, err) => opts.logger?.warn({ err: err.message }, 'rent recovery sweep failed'));
    await worker.waitUntilReady();
  }
  return {
    async close() {
      await worker?.close();
      await queue.close();
      await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
