// Group commit for the acceptance step (./accept.ts). Before its 250 every
// message needs its bytes and its spool name on disk (fsynced) and its
// delivery jobs in Redis. Done per message that is a file fsync, a directory
// fsync and a MULTI round trip each; done here, the messages whose DATA
// ended while the previous batch was being committed share them:
//  - the small ones (BlobStore.receiveSpool kept them in memory) are written
//    into one segment file with one fdatasync, each linked as its own name;
//    the segment ends with the index of their manifests (what their jobs are
//    rebuilt from, src/core/blobs/spool-manifest.ts), in the same write;
//  - a large one (already in its own temp file) gets its index of one
//    appended and its fdatasync, in parallel with the segment, and its name;
//  - one fsync of `spool/` per blob store covers those links and the renames
//    of the larger messages that had their own file;
//  - one MULTI (FlowProducer.addBulk) adds the flows of all of them.
//
// There is no timer: a lone message is committed at once (after the I/O of
// the current event-loop turn, so sessions finishing together join it), and
// under load the batch is whatever arrived during the previous one's disk
// step. The disk steps of batches run one after another; a batch's MULTI runs
// while the next batch is on disk. Each caller's promise settles after its
// own batch: resolved with its spool key once its bytes and name are
// fsynced and its jobs are in Redis, rejected (GroupCommitError, with the
// spool name removed) otherwise, so no session is answered 250 for a message
// that is not durable. A MULTI that fails for several messages is retried
// message by message (jobs have fixed ids, so a job the failed MULTI did add
// is not added twice): one bad flow does not cost the others their 250.

import type { FlowJob, FlowProducer, IRedisClient } from 'bullmq';
import type { BlobStore, SpoolDraft } from '../../src/core/blobs/blob-store.ts';
import type { SpoolManifest } from '../../src/core/blobs/spool-manifest.ts';
import type { Replication } from './replication.ts';

/** Which durable step failed: the spool write and fsyncs, or the queueing in Redis. */
export class GroupCommitError extends Error {
  constructor(
    readonly step: 'spool' | 'queue',
    cause: unknown,
  ) {
    super(`group commit ${step} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'GroupCommitError';
  }
}

/** The durable steps; a deployment uses forFlow's, a test may wrap them to make one fail. */
export interface GroupCommitSteps {
  /** Writes in-memory messages into one segment of a blob store: BlobStore.writeSegment. */
  write(
    blobs: BlobStore,
    messages: { id: string; chunks: Uint8Array[]; size: number; manifest?: SpoolManifest }[],
  ): Promise<string[]>;
  /** Fsyncs the spool directory of a blob store: BlobStore.syncSpool. */
  sync(blobs: BlobStore): Promise<void>;
  /** Adds flows to Redis in one MULTI: FlowProducer.addBulk. */
  queue(flows: FlowJob[]): Promise<void>;
}

/** One message waiting for its batch. */
export interface CommitRequest {
  blobs: BlobStore;
  id: string;
  draft: SpoolDraft;
  /** What its jobs are rebuilt from (the reconcile step), written with its bytes. */
  manifest?: SpoolManifest;
  /** The message's flows, given its spool key (known once its batch is on disk). */
  flows(spoolKey: string): FlowJob[];
}

interface Waiting extends CommitRequest {
  key?: string;
  resolve: (key: string) => void;
  reject: (err: GroupCommitError) => void;
}

/** Most messages in one batch (one segment, one MULTI); more wait for the next. */
export const GROUP_COMMIT_MAX_BATCH = 256;

export class GroupCommit {
  private waiting: Waiting[] = [];
  private running = false;
  /** Batches committed, messages in them and segment files written, for tests and the bench. */
  readonly stats = { batches: 0, messages: 0, segments: 0 };

  constructor(
    private readonly steps: GroupCommitSteps,
    private readonly maxBatch = GROUP_COMMIT_MAX_BATCH,
  ) {}

  /** The steps of a real deployment: the blob store's segment and fsync, the FlowProducer's MULTI. */
  static steps(flow: FlowProducer, replication?: Replication): GroupCommitSteps {
    return {
      write: (blobs, messages) => blobs.writeSegment(messages),
      sync: (blobs) => blobs.syncSpool(),
      queue: async (flows) => {
        // addBulk returns without adding while the producer closes, and it
        // does not surface a command of its MULTI that failed on its own:
        // one script counting HEXISTS of every job key (one round trip per
        // batch) proves every job is in before any 250.
        const added = await flow.addBulk(flows);
        if (!added) throw new Error('the job producer is closing');
        const client = await flow.getBackend().client;
        await checkJobsPresent(client, flowJobKeys(flows, flow.opts.prefix ?? 'bull'));
        // With replicas: the 250 waits until they hold the jobs too (./replication.ts).
        if (replication) {
          const acked = await (client as unknown as { wait(n: number, ms: number): Promise<number> }).wait(
            replication.replicas,
            replication.timeoutMs,
          );
          if (acked < replication.replicas) replication.onShort?.(acked, replication.replicas);
        }
      },
    };
  }

  static forFlow(flow: FlowProducer, replication?: Replication): GroupCommit {
    return new GroupCommit(GroupCommit.steps(flow, replication));
  }

  /** Messages waiting for the next batch. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Resolves with the message's spool key once it is durable and its flows are in Redis. */
  commit(request: CommitRequest): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...request, key: request.draft.key, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.stats.batches++;
      this.stats.messages += batch.length;
      const durable = await this.spoolBatch(batch);
      if (durable.length > 0) void this.queueBatch(durable);
    }
    this.running = false;
  }

  /** Segment, links and directory fsync, per blob store; returns the messages now durable on disk. */
  private async spoolBatch(batch: Waiting[]): Promise<Waiting[]> {
    const byStore = new Map<BlobStore, Waiting[]>();
    for (const w of batch) byStore.set(w.blobs, [...(byStore.get(w.blobs) ?? []), w]);
    const done = await Promise.all(
      [...byStore].map(async ([blobs, group]) => {
        try {
          const small = group.filter((w) => !w.key && !w.draft.file);
          const large = group.filter((w) => !w.key && w.draft.file);
          const writes: Promise<unknown>[] = large.map(async (w) => {
            w.key = await blobs.finishSpoolFile(w.id, w.draft, w.manifest);
          });
          if (small.length > 0) {
            writes.push(
              this.steps
                .write(
                  blobs,
                  small.map((w) => ({
                    id: w.id,
                    chunks: w.draft.chunks ?? [],
                    size: w.draft.size,
                    ...(w.manifest ? { manifest: w.manifest } : {}),
                  })),
                )
                .then((keys) => {
                  this.stats.segments++;
                  small.forEach((w, i) => {
                    w.key = keys[i];
                  });
                }),
            );
          }
          const results = await Promise.allSettled(writes);
          const failed = results.find((r) => r.status === 'rejected');
          if (failed) throw failed.reason;
          await this.steps.sync(blobs);
          return group;
        } catch (err) {
          await Promise.all(group.map((w) => this.fail(w, new GroupCommitError('spool', err))));
          return [];
        }
      }),
    );
    return done.flat();
  }

  private async queueBatch(batch: Waiting[]): Promise<void> {
    try {
      await this.steps.queue(batch.flatMap((w) => w.flows(w.key as string)));
      for (const w of batch) w.resolve(w.key as string);
      return;
    } catch (err) {
      if (batch.length === 1) {
        await this.fail(batch[0] as Waiting, new GroupCommitError('queue', err));
        return;
      }
    }
    await Promise.all(
      batch.map(async (w) => {
        try {
          await this.steps.queue(w.flows(w.key as string));
          w.resolve(w.key as string);
        } catch (err) {
          await this.fail(w, new GroupCommitError('queue', err));
        }
      }),
    );
  }

  /** Removes the message's spool name (nothing else refers to it) and rejects its caller. */
  private async fail(w: Waiting, err: GroupCommitError): Promise<void> {
    if (w.key) await w.blobs.delete(w.key).catch(() => {});
    else await w.draft.discard().catch(() => {});
    w.reject(err);
  }
}

// HEXISTS <key> data for every key, counted in Redis: one command and one
// round trip for the whole batch, however many jobs it holds.
const COUNT_JOBS_PRESENT = `
local n = 0
for _, key in ipairs(KEYS) do
  n = n + redis.call('HEXISTS', key, 'data')
end
return n
`;

/** ioredis's EVAL, which BullMQ's client passes through to the ioredis connection it wraps. */
interface EvalClient {
  eval(script: string, numKeys: number, ...keys: string[]): Promise<unknown>;
}

/** Throws unless every job hash (flowJobKeys) has its `data` field: the post-MULTI proof before any 250. */
export async function checkJobsPresent(client: IRedisClient, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  const withEval = client as IRedisClient & Partial<EvalClient>;
  // Sealpost's producers are on ioredis; without EVAL nothing could be proved, so no 250.
  if (typeof withEval.eval !== 'function') throw new Error('the job producer has no EVAL to check its jobs');
  const present = Number(await withEval.eval(COUNT_JOBS_PRESENT, keys.length, ...keys));
  if (present !== keys.length)
    throw new Error(`${keys.length - present} of ${keys.length} jobs missing after the MULTI`);
}

/** The Redis hash key of every job in the flows (parents and children), as BullMQ names them. */
export function flowJobKeys(flows: FlowJob[], defaultPrefix: string): string[] {
  const keys: string[] = [];
  const walk = (node: FlowJob) => {
    const id = node.opts?.jobId;
    if (!id) throw new Error(`flow job ${node.name} has no fixed id`);
    keys.push(`${node.prefix ?? defaultPrefix}:${node.queueName}:${id}`);
    for (const child of node.children ?? []) walk(child);
  };
  for (const f of flows) walk(f);
  return keys;
}
