// The spool is the durable truth (docs/inbound.md "The spool is the durable
// truth"). Whatever Redis loses (a FLUSHALL, a failover to a lagging
// replica, an AOF cut back by a crash, a restored backup), every message the
// MX acknowledged is still a spool file whose index carries its manifest
// (src/core/blobs/spool-manifest.ts). The reconcile step, at start and every few
// minutes in every worker process (one run at a time across processes,
// under a Redis lease), walks the spool and for each entry older than the
// grace period (an acceptance still in flight is never touched):
//   - some job of it exists in Redis (a deliver job `${msgid}.${i}` or the
//     spool-cleanup parent `${msgid}`, in any state): Redis knows it, nothing
//     is done;
//   - no job: the recipients with a finished record (a message row stored
//     for the copy, or its intent marked finished: stored or bounced) are
//     done; the others are queued again with the same fixed job ids, built
//     from the manifest exactly as the MX built them (delivery/intake/accept.ts
//     deliverFlows), so re-adding cannot duplicate a job and a rebuilt job
//     settles its own SendMail from its intent before any new signing
//     (delivery/pipeline.ts). When every recipient is finished the entry is
//     removed;
//   - an entry written before the index existed has no manifest: left alone
//     while a job names it, otherwise moved aside;
//   - an entry that cannot be parsed (truncated, damaged, a foreign file) is
//     moved to `spool-corrupt/` (never deleted) and reported; the others go on.
// Then the outbound ledger (./reconcile-outbound.ts): messages the outbound
// spooler still owes whose jobs Redis lost are queued again the same way.
// Each run logs (warn, with the count) what it recovered, counts it in
// /metrics and leaves its summary in Redis for every process's /ready.

import { FlowProducer } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { QUEUE_DELIVER, QUEUE_SPOOL } from '../src/contracts/inbound-jobs.ts';
import type { BlobStore, SpoolEntry } from '../src/core/blobs/blob-store.ts';
import { SpoolCorruptError } from '../src/core/blobs/spool-manifest.ts';
import { acquireLease } from '../src/core/limits/lease.ts';
import type { MetricsRegistry } from '../src/core/limits/metrics.ts';
import type { Logger } from '../src/core/log.ts';
import { reconcileStatusKey } from '../src/core/queue/reconcile-status.ts';
import { IntentsRepo } from '../src/core/store/intents-repo.ts';
import type { Database } from '../src/core/store/types.ts';
import { type DeliverJobPolicy, deliverFlows } from './intake/accept.ts';
import { type OutboundReconcileResult, reconcileOutbound } from './reconcile-outbound.ts';
import { anyKeyExists } from './redis-presence.ts';

/** Entries younger than this are never looked at: their acceptance may still be queueing them. */
export const RECONCILE_GRACE_MS = 120_000;
/** How often every worker process tries a run (one runs; the others find the lease taken). */
export const RECONCILE_INTERVAL_MS = 180_000;
/** Finished intents are pruned this long after they finished, once their spool entry is gone. */
const INTENT_KEEP_MS = 86_400_000;
const LEASE_TTL_MS = 60_000;
const BATCH = 200;

export function reconcileLeaseKey(prefix: string): string {
  return `${prefix}:spool-reconcile:lease`;
}

export function reconcileMetrics(registry: MetricsRegistry) {
  return {
    recovered: registry.counter(
      'sealpost_spool_recovered_total',
      'Spool entries found with no job in Redis and queued again from their manifest by the reconcile step.',
    ),
    recoveredJobs: registry.counter(
      'sealpost_spool_recovered_jobs_total',
      'Delivery jobs the reconcile step queued again (one per unfinished recipient of a recovered entry).',
    ),
    withoutJobs: registry.gauge(
      'sealpost_spool_entries_without_jobs',
      'Spool entries older than the grace period that had no job in Redis at the last reconcile run.',
    ),
    corrupt: registry.counter(
      'sealpost_spool_corrupt_total',
      'Spool entries that could not be read (truncated, damaged, foreign) and were moved to spool-corrupt/.',
    ),
    finished: registry.counter(
      'sealpost_spool_finished_removed_total',
      'Spool entries with no job whose every recipient was finished, removed by the reconcile step.',
    ),
    outboundRecovered: registry.counter(
      'sealpost_outbound_recovered_total',
      'Outbound messages (submitted mail, DSNs, reports) found with no job in Redis and queued again from the outbound ledger.',
    ),
    runs: registry.counter('sealpost_spool_reconcile_runs_total', 'Reconcile runs, by outcome (done, busy).'),
  };
}

export type ReconcileMetrics = ReturnType<typeof reconcileMetrics>;

export interface ReconcileDeps {
  redis: Redis;
  prefix: string;
  blobs: BlobStore;
  db: Kysely<Database>;
  /** How re-queued jobs retry (the MX's: DELIVERY_ATTEMPTS, 2 s). */
  policy: DeliverJobPolicy;
  graceMs?: number;
  /** Report what would be done; change nothing (no lease is taken either). */
  dryRun?: boolean;
  logger?: Logger;
  metrics?: ReconcileMetrics;
  now?: () => number;
}

export type EntryAction = 'recovered' | 'finished' | 'corrupt' | 'unindexed';

export interface ReconcileEntry {
  id: string;
  action: EntryAction;
  /** recovered: the job ids queued again; finished: the copies already done. */
  jobs?: string[];
  reason?: string;
  /** corrupt / unindexed: where the entry was moved. */
  movedTo?: string;
}

export interface ReconcileResult {
  outcome: 'done' | 'busy';
  dryRun: boolean;
  at: number;
  /** Spool entries looked at (older than the grace period). */
  scanned: number;
  /** Younger than the grace period: left alone. */
  young: number;
  /** Some job of theirs is in Redis. */
  withJobs: number;
  /** Had no job in Redis (recovered + finished + unreadable ones without jobs). */
  withoutJobs: number;
  /** Entries queued again, and the jobs that took. */
  recovered: number;
  recoveredJobs: number;
  /** Entries whose every recipient was finished: removed. */
  finished: number;
  /** Moved to spool-corrupt/ (cannot be parsed, or no manifest and no job). */
  corrupt: number;
  /** Written before the index, still named by their jobs: left alone. */
  legacy: number;
  intentsPruned: number;
  entries: ReconcileEntry[];
  /** The outbound ledger's half (./reconcile-outbound.ts). */
  outbound: OutboundReconcileResult;
  ms: number;
}

/** One run (see the head of this file). */
export async function reconcileSpool(deps: ReconcileDeps): Promise<ReconcileResult> {
  const now = (deps.now ?? Date.now)();
  const started = Date.now();
  const graceMs = deps.graceMs ?? RECONCILE_GRACE_MS;
  const dryRun = deps.dryRun ?? false;
  const result: ReconcileResult = {
    outcome: 'done',
    dryRun,
    at: now,
    scanned: 0,
    young: 0,
    withJobs: 0,
    withoutJobs: 0,
    recovered: 0,
    recoveredJobs: 0,
    finished: 0,
    corrupt: 0,
    legacy: 0,
    intentsPruned: 0,
    entries: [],
    outbound: { scanned: 0, withJobs: 0, recovered: 0, recoveredRecipients: 0, finished: 0, entries: [] },
    ms: 0,
  };
  const lease = dryRun
    ? null
    : await acquireLease(deps.redis, reconcileLeaseKey(deps.prefix), { ttlMs: LEASE_TTL_MS });
  if (!dryRun && !lease) {
    deps.metrics?.runs.inc({ outcome: 'busy' });
    return { ...result, outcome: 'busy' };
  }
  const intents = new IntentsRepo(deps.db);
  const flow = new FlowProducer({ connection: deps.redis, prefix: deps.prefix });
  const log = deps.logger?.child({ component: 'spool-reconcile' });
  try {
    let batch: { id: string }[] = [];
    const flush = async () => {
      if (batch.length > 0) await reconcileBatch(deps, { intents, flow, dryRun, result, log }, batch);
      batch = [];
    };
    for await (const blob of deps.blobs.list('spool')) {
      const name = blob.key.slice('spool/'.length);
      if (name.startsWith('.tmp-')) continue;
      // A grace of 0 (the CLI's --grace-secs 0, tests) takes everything: a file written in this very millisecond too.
      if (graceMs > 0 && blob.mtimeMs > now - graceMs) {
        result.young++;
        continue;
      }
      result.scanned++;
      batch.push({ id: name });
      if (batch.length >= BATCH) await flush();
      if (lease && !lease.held) throw new Error('the reconcile lease was lost');
    }
    await flush();
    if (!dryRun) result.intentsPruned = await pruneIntents(deps.blobs, intents, now);
    result.outbound = await reconcileOutbound({
      redis: deps.redis,
      prefix: deps.prefix,
      db: deps.db,
      blobs: deps.blobs,
      graceMs,
      dryRun,
      now,
      check: () => {
        if (lease && !lease.held) throw new Error('the reconcile lease was lost');
      },
    });
  } finally {
    await flow.close().catch(() => undefined);
    await lease?.release().catch(() => false);
  }
  result.ms = Date.now() - started;
  const m = deps.metrics;
  if (m && !dryRun) {
    m.runs.inc({ outcome: 'done' });
    m.withoutJobs.set(result.withoutJobs);
    if (result.recovered) m.recovered.inc({}, result.recovered);
    if (result.recoveredJobs) m.recoveredJobs.inc({}, result.recoveredJobs);
    if (result.corrupt) m.corrupt.inc({}, result.corrupt);
    if (result.finished) m.finished.inc({}, result.finished);
    if (result.outbound.recovered) m.outboundRecovered.inc({}, result.outbound.recovered);
  }
  if (!dryRun) await writeStatus(deps.redis, deps.prefix, result).catch(() => undefined);
  const summary = {
    scanned: result.scanned,
    young: result.young,
    withJobs: result.withJobs,
    withoutJobs: result.withoutJobs,
    recovered: result.recovered,
    recoveredJobs: result.recoveredJobs,
    finished: result.finished,
    corrupt: result.corrupt,
    legacy: result.legacy,
    outboundScanned: result.outbound.scanned,
    outboundRecovered: result.outbound.recovered,
    outboundFinished: result.outbound.finished,
    dryRun,
    ms: result.ms,
  };
  const out = result.outbound;
  if (out.recovered > 0)
    log?.warn(
      summary,
      `outbound reconcile: ${out.recovered} outbound message${out.recovered === 1 ? '' : 's'} had no job in Redis and ${dryRun ? 'would be' : 'were'} queued again from the outbound ledger (${out.recoveredRecipients} recipients)`,
    );
  if (result.recovered > 0 || result.corrupt > 0)
    log?.warn(
      summary,
      `spool reconcile: ${result.recovered} spool entr${result.recovered === 1 ? 'y' : 'ies'} had no job in Redis and ${dryRun ? 'would be' : 'were'} queued again (${result.recoveredJobs} jobs); ${result.corrupt} unreadable moved to spool-corrupt/`,
    );
  else if (out.recovered === 0)
    log?.info(summary, 'spool reconcile: every spool entry and outbound message has its jobs');
  return result;
}

interface BatchContext {
  intents: IntentsRepo;
  flow: FlowProducer;
  dryRun: boolean;
  result: ReconcileResult;
  log?: Logger;
}

async function reconcileBatch(
  deps: ReconcileDeps,
  ctx: BatchContext,
  batch: { id: string }[],
): Promise<void> {
  const { result } = ctx;
  // Read every entry's index (an unreadable one is moved aside; a vanished one was finished meanwhile).
  const read: SpoolEntry[] = [];
  for (const { id } of batch) {
    try {
      read.push(await deps.blobs.readSpoolEntry(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      // PostgreSQL blobs: only a row that does not parse is corrupt; an outage ends this run (the next retries).
      if (deps.blobs.backend === 'postgres' && !(err instanceof SpoolCorruptError)) throw err;
      const reason = err instanceof SpoolCorruptError ? err.message : `unreadable: ${(err as Error).message}`;
      await moveAside(deps, ctx, id, reason);
    }
  }
  if (read.length === 0) return;
  // Which of them Redis still knows: any deliver job or the parent, in any state (one pipeline).
  const keysOf = (e: SpoolEntry) => {
    const n = e.kind === 'indexed' ? e.manifest.recipients.length : 1;
    const keys = [`${deps.prefix}:${QUEUE_SPOOL}:${e.id}`];
    for (let i = 0; i < n; i++) keys.push(`${deps.prefix}:${QUEUE_DELIVER}:${e.id}.${i}`);
    return keys;
  };
  const present = await anyKeyExists(deps.redis, read.map(keysOf));
  const orphans: SpoolEntry[] = [];
  for (const [j, e] of read.entries()) {
    if (present[j]) {
      result.withJobs++;
      if (e.kind === 'unindexed') result.legacy++;
    } else orphans.push(e);
  }
  result.withoutJobs += orphans.length;
  const indexed = orphans.filter((e): e is Extract<SpoolEntry, { kind: 'indexed' }> => e.kind === 'indexed');
  for (const e of orphans)
    if (e.kind === 'unindexed')
      await moveAside(
        deps,
        ctx,
        e.id,
        'no manifest (written before the spool index, or not a spool file) and no job',
      );
  const copyIds = indexed.flatMap((e) => e.manifest.recipients.map((_, i) => `${e.id}.${i}`));
  const finished = await ctx.intents.finished(copyIds);
  for (const e of indexed) {
    const all = e.manifest.recipients.map((_, i) => i);
    const open = all.filter((i) => !finished.has(`${e.id}.${i}`));
    if (open.length === 0) {
      result.finished++;
      result.entries.push({ id: e.id, action: 'finished', jobs: all.map((i) => `${e.id}.${i}`) });
      if (!ctx.dryRun) await deps.blobs.delete(`spool/${e.id}`);
      continue;
    }
    const jobs = open.map((i) => `${e.id}.${i}`);
    if (!ctx.dryRun) {
      // The same ids and data as the MX's (the parent too, with several recipients): re-adding cannot duplicate.
      await ctx.flow.addBulk(deliverFlows(e.manifest, e.key, deps.policy, { only: new Set(open) }));
    }
    result.recovered++;
    result.recoveredJobs += jobs.length;
    result.entries.push({ id: e.id, action: 'recovered', jobs });
  }
}

async function moveAside(deps: ReconcileDeps, ctx: BatchContext, id: string, reason: string): Promise<void> {
  const unindexed = reason.startsWith('no manifest');
  const entry: ReconcileEntry = { id, action: unindexed ? 'unindexed' : 'corrupt', reason };
  ctx.result.corrupt++;
  if (!ctx.dryRun) {
    try {
      entry.movedTo = await deps.blobs.moveSpoolAside(id);
    } catch (err) {
      entry.reason = `${reason}; not moved: ${(err as Error).message}`;
    }
  }
  ctx.result.entries.push(entry);
  ctx.log?.error(
    { spool: id, reason: entry.reason, movedTo: entry.movedTo, dryRun: ctx.dryRun },
    `spool entry ${id} cannot be delivered from the spool (${entry.reason}); ${ctx.dryRun ? 'would be moved' : `moved to ${entry.movedTo ?? '(not moved)'}`}, never deleted`,
  );
}

/** Finished intents older than a day whose spool entry is gone: nothing can rebuild their job any more. */
async function pruneIntents(blobs: BlobStore, intents: IntentsRepo, now: number): Promise<number> {
  const rows = await intents.listFinishedBefore(now - INTENT_KEEP_MS);
  const gone: string[] = [];
  for (const r of rows) if (!(await blobs.exists(`spool/${r.msgid}`))) gone.push(r.copyId);
  return intents.delete(gone);
}

async function writeStatus(redis: Redis, prefix: string, r: ReconcileResult): Promise<void> {
  const key = reconcileStatusKey(prefix);
  await redis
    .multi()
    .hset(key, {
      last_run_at: String(r.at),
      recovered_last_run: String(r.recovered),
      without_jobs: String(r.withoutJobs),
      corrupt_last_run: String(r.corrupt),
      scanned: String(r.scanned),
      outbound_recovered_last_run: String(r.outbound.recovered),
    })
    .hincrby(key, 'recovered_total', r.recovered)
    .hincrby(key, 'outbound_recovered_total', r.outbound.recovered)
    .hincrby(key, 'corrupt_total', r.corrupt)
    .exec();
}

/** The summary the last run left in Redis (for /ready), or null before any run. */
export interface ReconcileRunner {
  /** Runs once now (the same lease): what `sealpost queue reconcile` does in-process. */
  runNow(): Promise<ReconcileResult>;
  close(): Promise<void>;
}

/**
 * In a worker process: a run at start, then every `intervalMs` (a timer of
 * this process, not a schedule in Redis, which a FLUSHALL would take too);
 * the lease keeps it to one run at a time across processes.
 */
export function startReconcile(
  deps: ReconcileDeps & { intervalMs?: number; firstRunMs?: number },
): ReconcileRunner {
  let running: Promise<ReconcileResult> | null = null;
  let closed = false;
  const runNow = () => {
    running ??= reconcileSpool(deps).finally(() => {
      running = null;
    });
    return running;
  };
  const tick = () => {
    if (closed) return;
    runNow().catch((err: Error) =>
      deps.logger?.warn({ component: 'spool-reconcile', err: err.message }, 'spool reconcile run failed'),
    );
  };
  const first = setTimeout(tick, deps.firstRunMs ?? 1000);
  const timer = setInterval(tick, deps.intervalMs ?? RECONCILE_INTERVAL_MS);
  first.unref();
  timer.unref();
  return {
    runNow,
    async close() {
      closed = true;
      clearTimeout(first);
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
