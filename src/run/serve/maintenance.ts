// Periodic housekeeping run by the workers: the daily retention prune of
// DMARC rows, reports, sender evaluations and TLS-RPT pending rows, and the
// daily sweep of orphan blobs (src/core/blobs/orphan-sweep.ts). The job
// schedulers live in Redis, so many worker processes share one schedule.
import { Queue as BullQueue, type Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type BlobSweepDeps, sweepOrphanBlobs } from '../../core/blobs/orphan-sweep.ts';
import type { Logger } from '../../core/log.ts';
import {
  DMARC_PRUNE_JOB,
  type DmarcPruneDeps,
  dmarcPruneProcessor,
  scheduleDmarcPrune,
} from '../../mail/dmarc/prune.ts';

export const QUEUE_MAINTENANCE = 'maintenance';
export const BLOB_SWEEP_JOB = 'blob-sweep';
const BLOB_SWEEP_SCHEDULER_ID = 'blob-sweep-daily';

/** Creates or updates the daily orphan-blob sweep (04:41, off the hour and after the DMARC prune). */
export async function scheduleBlobSweep(queue: Queue, pattern = '41 4 * * *'): Promise<void> {
  await queue.upsertJobScheduler(
    BLOB_SWEEP_SCHEDULER_ID,
    { pattern },
    { name: BLOB_SWEEP_JOB, data: {}, opts: { removeOnComplete: 30, removeOnFail: 100 } },
  );
}

export interface MaintenanceOptions {
  redis: () => Redis;
  prefix: string;
  prune: DmarcPruneDeps;
  sweep: BlobSweepDeps;
  logger: Logger;
}

export async function startMaintenance(opts: MaintenanceOptions): Promise<{ close(): Promise<void> }> {
  const connections: Redis[] = [];
  const conn = () => {
    const c = opts.redis();
    connections.push(c);
    return c;
  };
  const queue = new BullQueue(QUEUE_MAINTENANCE, { connection: conn(), prefix: opts.prefix });
  await scheduleDmarcPrune(queue);
  await scheduleBlobSweep(queue);
  const prune = dmarcPruneProcessor(opts.prune);
  const worker = new Worker(
    QUEUE_MAINTENANCE,
    async (job) => {
      if (job.name === DMARC_PRUNE_JOB) return prune(job);
      if (job.name === BLOB_SWEEP_JOB) return sweepOrphanBlobs(opts.sweep, Date.now());
      throw new Error(`unknown maintenance job ${job.name}`);
    },
    { connection: conn(), prefix: opts.prefix, concurrency: 1 },
  );
  worker.on('error', (err) => opts.logger.warn({ err: err.message }, 'maintenance worker error'));
  return {
    async close() {
      await worker.close();
      await queue.close();
      await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
