// What deleting a message over IMAP or POP3 sets off, like the admin sweep
// does per copy: the operator's pin of its CID is released (not for `b3:`
// local-only markers) and, for mail this deployment published, a DeleteMail
// job closes the Email account on chain. Job ids derive from the copy, so a
// repeat never enqueues twice. Copies made by COPY are not the chain's
// record (published_by_us/pinned_by_operator false) and release nothing.
import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  type DeleteMailJobData,
  QUEUE_DELETE_MAIL,
  QUEUE_UNPIN,
  type UnpinJobData,
} from '../../../contracts/inbound-jobs.ts';
import type { StoredMessage } from '../../../core/store/index.ts';

const JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: true,
  removeOnFail: 1000,
};

export interface CopyReleaser {
  release(rows: StoredMessage[]): Promise<void>;
  close(): Promise<void>;
}

export function createCopyReleaser(redis: Redis, prefix: string): CopyReleaser {
  const unpin = new Queue<UnpinJobData>(QUEUE_UNPIN, { connection: redis, prefix });
  const deleteMail = new Queue<DeleteMailJobData>(QUEUE_DELETE_MAIL, { connection: redis, prefix });
  return {
    async release(rows) {
      const unpins = rows
        .filter((m) => m.pinnedByOperator && m.cid !== null && !m.cid.startsWith('b3:'))
        .map((m) => ({
          name: 'unpin',
          data: { cid: m.cid as string, wallet: m.wallet, messageId: m.id },
          opts: { ...JOB_OPTIONS, jobId: `unpin-${m.id}` },
        }));
      const deletes = rows
        .filter((m) => m.publishedByUs && m.emailAddress !== null)
        .map((m) => ({
          name: 'delete-mail',
          data: { wallet: m.wallet, emailAddress: m.emailAddress as string, messageId: m.id },
          opts: { ...JOB_OPTIONS, jobId: `delete-mail-${m.id}` },
        }));
      if (unpins.length > 0) await unpin.addBulk(unpins);
      if (deletes.length > 0) await deleteMail.addBulk(deletes);
    },
    async close() {
      await Promise.all([unpin.close(), deleteMail.close()]);
    },
  };
}
