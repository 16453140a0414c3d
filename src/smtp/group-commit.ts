// Group commit for the acceptance step (./accept.ts). Every accepted message
// needs two durable steps before its 250: the rename of its fsynced spool
// file must reach the disk (an fsync of `spool/`), and its delivery jobs
// must be in Redis. Done per message that is one directory fsync and one
// MULTI round trip each; done here, the messages whose DATA ended while the
// previous batch was being committed share one directory fsync per blob
// store and one MULTI (FlowProducer.addBulk) for all their flows.
//
// There is no timer: a lone message is committed at once (after the I/O of
// the current event-loop turn, so sessions finishing together join it), and
// under load the batch is whatever arrived during the previous commit. Each
// caller's promise settles only after its own batch: resolved when its
// rename is fsynced and its jobs are in Redis, rejected (GroupCommitError)
// otherwise, so no session is answered 250 for something not durable.
// A MULTI that fails for a batch of several is retried message by message
// (jobs carry fixed ids, so a job the failed MULTI did add is not added
// twice), so one bad flow cannot cost the others their 250.
import type { FlowJob, FlowProducer } from 'bullmq';
import type { BlobStore } from '../blobs/blob-store.ts';

/** Which durable step failed: the directory fsync or the queueing in Redis. */
export class GroupCommitError extends Error {
  constructor(
    readonly step: 'sync' | 'queue',
    cause: unknown,
  ) {
    super(`group commit ${step} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'GroupCommitError';
  }
}

export interface GroupCommitSteps {
  /** Fsyncs the spool directory of a blob store. */
  sync(blobs: BlobStore): Promise<void>;
  /** Adds flows to Redis in one MULTI; all or none. */
  queue(flows: FlowJob[]): Promise<void>;
}

interface Waiting {
  blobs: BlobStore;
  flows: FlowJob[];
  resolve: () => void;
  reject: (err: GroupCommitError) => void;
}

/** Most messages in one batch (one MULTI); more wait for the next. */
export const GROUP_COMMIT_MAX_BATCH = 256;

export class GroupCommit {
  private waiting: Waiting[] = [];
  private running = false;
  /** Batches committed and messages in them, for tests and the bench. */
  readonly stats = { batches: 0, messages: 0 };

  constructor(
    private readonly steps: GroupCommitSteps,
    private readonly maxBatch = GROUP_COMMIT_MAX_BATCH,
  ) {}

  /** The steps of a real deployment: BlobStore.syncSpool and FlowProducer.addBulk. */
  static forFlow(flow: FlowProducer): GroupCommit {
    return new GroupCommit({
      sync: (blobs) => blobs.syncSpool(),
      queue: async (flows) => {
        await flow.addBulk(flows);
      },
    });
  }

  /** Settles once `flows` are in Redis and every spool rename in `blobs` before this call is durable. */
  commit(blobs: BlobStore, flows: FlowJob[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ blobs, flows, resolve, reject });
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
      // Only the fsyncs are taken in turn; the MULTI of this batch runs while the next one syncs.
      if (await this.syncBatch(batch)) void this.queueBatch(batch);
    }
    this.running = false;
  }

  private async syncBatch(batch: Waiting[]): Promise<boolean> {
    const stores = [...new Set(batch.map((w) => w.blobs))];
    try {
      await Promise.all(stores.map((blobs) => this.steps.sync(blobs)));
      return true;
    } catch (err) {
      for (const w of batch) w.reject(new GroupCommitError('sync', err));
      return false;
    }
  }

  private async queueBatch(batch: Waiting[]): Promise<void> {
    try {
      await this.steps.queue(batch.flatMap((w) => w.flows));
      for (const w of batch) w.resolve();
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(new GroupCommitError('queue', err));
        return;
      }
    }
    await Promise.all(
      batch.map((w) =>
        this.steps.queue(w.flows).then(w.resolve, (err) => w.reject(new GroupCommitError('queue', err))),
      ),
    );
  }
}
