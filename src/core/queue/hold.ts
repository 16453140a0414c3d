// Operator holds (`sealpost queue hold|release`, like Postfix's postsuper
// -h/-H). BullMQ has no per-job hold, so a hold is two things in Redis:
//   - the marker: field `<queue>:<jobId>` of the hash `<prefix>:queue-held`,
//     JSON {at, due, state}: when it was held, when it was due (its delayed
//     time, restored on release; null when it was waiting) and the state it
//     was held in. The marker is the truth: `queue list` shows the job as
//     `held`, `queue retry` refuses it, and every worker of a holdable queue
//     (the pipeline's deliver queue, the spooler's intake and per-domain
//     queues) reads it before it runs a job (holdGuard below);
//   - a delay far in the future (HELD_DELAY_MS): a delayed job is moved
//     there at once; a waiting job is moved there by the first worker that
//     takes it (a waiting job cannot be delayed from outside BullMQ's lock),
//     so it never reaches the processor. Should anything promote it early,
//     the guard sends it back.
// Both live in Redis, so a hold survives any worker restart; a job being
// tried when it is held finishes that attempt and is held at its next.
import { DelayedError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';

/** How far a held job is delayed: five years (BullMQ's delayed score holds timestamps up to 2039). */
export const HELD_DELAY_MS = 5 * 365 * 86_400_000;

export interface HoldMarker {
  /** When the operator held it (Unix ms). */
  at: number;
  /** When it was due to run when held (delayed jobs), restored on release; null: run at once. */
  due: number | null;
  /** Its state when held. */
  state: string;
}

export function heldKey(prefix: string): string {
  return `${prefix}:queue-held`;
}

export function heldField(queueName: string, jobId: string): string {
  return `${queueName}:${jobId}`;
}

export async function readHolds(redis: Redis, prefix: string): Promise<Map<string, HoldMarker>> {
  const raw = await redis.hgetall(heldKey(prefix));
  const out = new Map<string, HoldMarker>();
  for (const [field, value] of Object.entries(raw)) {
    try {
      out.set(field, JSON.parse(value) as HoldMarker);
    } catch {
      out.set(field, { at: 0, due: null, state: 'unknown' });
    }
  }
  return out;
}

export async function setHold(
  redis: Redis,
  prefix: string,
  queueName: string,
  jobId: string,
  marker: HoldMarker,
): Promise<void> {
  await redis.hset(heldKey(prefix), heldField(queueName, jobId), JSON.stringify(marker));
}

/** Removes the marker; false when the job was not held. */
export async function clearHold(
  redis: Redis,
  prefix: string,
  queueName: string,
  jobId: string,
): Promise<boolean> {
  return (await redis.hdel(heldKey(prefix), heldField(queueName, jobId))) > 0;
}

type Processor<T, R> = (job: Job<T>, token?: string) => Promise<R>;

/**
 * Wraps a worker's processor: a held job is moved (back) to its far delay
 * without running. One HEXISTS per job taken.
 */
export function holdGuard<T, R>(redis: Redis, prefix: string, processor: Processor<T, R>): Processor<T, R> {
  const key = heldKey(prefix);
  return async (job, token) => {
    if (job.id && (await redis.hexists(key, heldField(job.queueName, job.id))) === 1) {
      if (!token) throw new Error(`job ${job.id} is held and this worker has no token to delay it with`);
      await job.moveToDelayed(Date.now() + HELD_DELAY_MS, token);
      throw new DelayedError();
    }
    return processor(job, token);
  };
}
