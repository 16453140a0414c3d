// Retention of DMARC data (reference "Off-chain data" and Limits):
//  - dmarc_retention_days: rows carrying a source_ip, i.e. the records of
//    ingested reports and the inbound check's sender_evaluations;
//  - report_retention_days: whole reports (row, records, dmarc_rua/ blob)
//    and lingering TLS-RPT pending rows.
// A row is pruned when it is strictly older than N days (age > N × 86400 s);
// 0 keeps forever. A daily BullMQ job scheduler runs it in the worker.
import type { Job, Queue } from 'bullmq';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import type { Logger } from '../../core/log.ts';
import type { Database } from '../../core/store/types.ts';
import { DmarcRepo } from './repo.ts';

export const DAY_MS = 86_400_000;
export const DMARC_PRUNE_SCHEDULER_ID = 'dmarc-prune';
export const DMARC_PRUNE_JOB = 'dmarc-prune';

export interface DmarcPruneDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  retention: { dmarc_retention_days: number; report_retention_days: number };
  logger?: Logger;
}

export interface DmarcPruneSummary {
  reports: number;
  records: number;
  senderEvaluations: number;
  tlsrptPending: number;
  blobs: number;
  /** The cutoffs used (Unix ms), null where retention is 0 (forever). */
  rowsBefore: number | null;
  reportsBefore: number | null;
}

const cutoff = (now: number, days: number): number | null => (days === 0 ? null : now - days * DAY_MS);

export async function pruneDmarc(deps: DmarcPruneDeps, now: number): Promise<DmarcPruneSummary> {
  const rowsBefore = cutoff(now, deps.retention.dmarc_retention_days);
  const reportsBefore = cutoff(now, deps.retention.report_retention_days);
  const counts = await new DmarcRepo(deps.db).prune({ rowsBefore, reportsBefore });
  // Rows go first: a crash between leaves an orphan blob (harmless, removed
  // by nothing but also read by nothing), never a row without its blob.
  let blobs = 0;
  for (const key of counts.blobKeys) {
    try {
      await deps.blobs.delete(key);
      blobs++;
    } catch (err) {
      deps.logger?.warn({ err, key }, 'could not delete a pruned DMARC report blob');
    }
  }
  const summary = {
    reports: counts.reports,
    records: counts.records,
    senderEvaluations: counts.senderEvaluations,
    tlsrptPending: counts.tlsrptPending,
    blobs,
    rowsBefore,
    reportsBefore,
  };
  deps.logger?.info(summary, 'DMARC retention prune done');
  return summary;
}

export interface ScheduleOptions {
  /** Cron pattern; default daily at 03:17 (off the hour, so many deployments do not prune at once). */
  pattern?: string;
  tz?: string;
}

/** Creates or updates the daily job scheduler on `queue` (idempotent across restarts and workers). */
export async function scheduleDmarcPrune(queue: Queue, opts: ScheduleOptions = {}): Promise<void> {
  await queue.upsertJobScheduler(
    DMARC_PRUNE_SCHEDULER_ID,
    { pattern: opts.pattern ?? '17 3 * * *', ...(opts.tz ? { tz: opts.tz } : {}) },
    { name: DMARC_PRUNE_JOB, data: {}, opts: { removeOnComplete: 30, removeOnFail: 100 } },
  );
}

/** The worker's handler for DMARC_PRUNE_JOB; the clock is the job's own time unless given. */
export function dmarcPruneProcessor(
  deps: DmarcPruneDeps,
  now: () => number = Date.now,
): (job: Job) => Promise<DmarcPruneSummary> {
  return async () => pruneDmarc(deps, now());
}
