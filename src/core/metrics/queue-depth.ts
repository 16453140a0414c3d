// Queue depths for the metrics endpoint: BullMQ's own job counts per queue
// and state, read when Prometheus scrapes (no poller between scrapes).
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  QUEUE_DELETE_MAIL,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
  QUEUE_RECIPIENT_PIN,
  QUEUE_SPOOL,
  QUEUE_UNPIN,
} from '../../contracts/inbound-jobs.ts';
import { QUEUE_SPOOLER_DELIVER } from '../../contracts/outbound-jobs.ts';

/** Every queue a deployment runs, inbound pipeline first, then the outbound spooler. */
export const WATCHED_QUEUES = [
  QUEUE_DELIVER,
  QUEUE_SPOOL,
  QUEUE_RECIPIENT_PIN,
  QUEUE_UNPIN,
  QUEUE_DELETE_MAIL,
  QUEUE_OUTBOUND,
  QUEUE_SPOOLER_DELIVER,
];

export const JOB_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed'] as const;

export interface QueueDepthSource {
  redis: Redis;
  prefix: string;
  /** Default: WATCHED_QUEUES. */
  queues?: string[];
  /** Queue handles, made on the first scrape and reused. */
  handles?: Queue[];
}

export interface QueueDepth {
  queue: string;
  state: string;
  jobs: number;
}

export async function readQueueDepths(source: QueueDepthSource): Promise<QueueDepth[]> {
  source.handles ??= (source.queues ?? WATCHED_QUEUES).map(
    (name) => new Queue(name, { connection: source.redis, prefix: source.prefix }),
  );
  const out: QueueDepth[] = [];
  const counts = await Promise.all(source.handles.map((q) => q.getJobCounts(...JOB_STATES)));
  source.handles.forEach((q, i) => {
    for (const state of JOB_STATES) out.push({ queue: q.name, state, jobs: counts[i]?.[state] ?? 0 });
  });
  return out;
}

/** Closes the handles; the Redis connection belongs to the caller and stays open. */
export async function closeQueueDepthSource(source: QueueDepthSource): Promise<void> {
  const handles = source.handles ?? [];
  source.handles = undefined;
  await Promise.all(handles.map((q) => q.close()));
}
