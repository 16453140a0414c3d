// A delivery writes its job data twice (after seal, and with SendMail's
// record before the transaction goes out); the confirmation and the store
// row are kept only with the job's completion. A worker that dies after
// storing but before completing leaves the job as the second write left it,
// and its re-run must end in the same single Email account and the same
// single store row. Here the re-run is made exactly: the finished job is
// taken out and queued again under its id with the data it had in Redis.
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { type DeliverJobData, QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { MessagesRepo } from '../../src/core/store/index.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';
import { eventually } from '../support/spooler-rig.ts';

/** The job once completed; a failed job fails the test at once. */
function completed(queue: Queue<DeliverJobData>, id: string) {
  return eventually(async () => {
    const job = await queue.getJob(id);
    if (job && (await job.isFailed())) throw new Error(`job ${id} failed: ${job.failedReason}`);
    if (!job || !(await job.isCompleted())) return undefined;
    // Read again once completed: a copy read before may lack the return value or the last data.
    return queue.getJob(id);
  }, 30_000);
}

describe('a delivery re-run after its store step', () => {
  it('finds its SendMail landed and its row stored: one account, one row, same signature', async () => {
    const rig = await startServeRig();
    const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: rig.redis, prefix: rig.prefix });
    try {
      const bob = await rig.mail.mailbox();
      const wallet = bob.publicKey.toBase58();
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: rig.mxPort,
        secure: false,
        ignoreTLS: true,
      });
      const info = await transport.sendMail({
        envelope: { from: 'ann@remote.example', to: [`${wallet}@${RIG_DOMAIN}`] },
        raw: 'From: ann@remote.example\r\nSubject: rerun\r\n\r\nonce only\r\n',
      });
      transport.close();
      const msgid = info.response.split(' ').pop() ?? '';
      const jobId = `${msgid}.0`;
      const first = await completed(deliver, jobId);
      const firstResult = first.returnvalue as { signature: string; emailAddress: string };

      // What the job holds in Redis: the stages up to SendMail's record, written before sending;
      // the confirmation and the store result were never written.
      const saved = first.data;
      expect(saved.stages.seal?.blobKey).toBeTruthy();
      expect(saved.stages.pin?.cid).toBeTruthy();
      expect(saved.stages.submit?.signature).toBe(firstResult.signature);
      expect(saved.stages.submit?.confirmed).toBeFalsy();
      expect(saved.stages.store).toBeUndefined();

      const messages = new MessagesRepo(rig.serving.store.db);
      const before = await messages.listForWallet(wallet);
      expect(before).toHaveLength(1);

      // The crash: the worker stored the row and died before completing; the job runs again from that data.
      await first.remove();
      await deliver.add(first.name, saved, { jobId, attempts: 3 });
      const again = await completed(deliver, jobId);
      const againResult = again.returnvalue as { signature: string; emailAddress: string };
      expect(againResult).toEqual(firstResult);

      const inbox = await listInbox(rig.chain.connection, rig.chain.programId, bob.publicKey);
      expect(inbox).toHaveLength(1);
      expect(inbox[0]?.address.toBase58()).toBe(firstResult.emailAddress);
      const after = await messages.listForWallet(wallet);
      expect(after).toEqual(before);
    } finally {
      await deliver.close();
      await rig.stop();
    }
  }, 90_000);
});
