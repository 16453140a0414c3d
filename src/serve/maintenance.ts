// Periodic housekeeping run by the workers: the daily retention prune of
// DMARC rows, reports, sender evaluations and TLS-RPT pending rows. The job
// scheduler lives in Redis, so many worker processes share one schedule.
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  DMARC_PRUNE_JOB,
  type DmarcPruneDeps,
  dmarcPruneProcessor,
  scheduleDmarcPrune,
} from '../dmarc/prune.ts';
import type { Logger } from '../log.ts';

export const QUEUE_MAINTENANCE = 'maintenance';

export interface MaintenanceOptions {
  redis: () => Redis;
  prefix: string;
  prune: DmarcPruneDeps;
  logger: Logger;
}

export async function startMaintenance(opts: MaintenanceOptions): Promise<{ close(): Promise<void> }> {
  const connections: Redis[] = [];
  const conn = () => {
    const c = opts.redis();
    connections.push(c);
    return c;
  };
  const queue = new Queue(QUEUE_MAINTENANCE, { connection: conn(), prefix: opts.prefix });
  await scheduleDmarcPrune(queue);
  const prune = dmarcPruneProcessor(opts.prune);
  const worker = new Worker(
    QUEUE_MAINTENANCE,
    async (job) => {
      if (job.name === DMARC_PRUNE_JOB) return prune(job);
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
