// Idempotent SendMail across lost job state: before a SendMail goes out the
// job records its intent in the store (sealed body's CID and blob key, the
// mailbox and lowest Email index, the signed transaction). Here a job whose
// SendMail landed loses its Redis state (as with a FLUSHALL rebuilt by the
// reconcile step, or an AOF cut back by a crash): it runs again with no
// checkpoint, or with only its seal checkpoint, and its copy not stored yet.
// Without the intent it would seal again (a new CID) and publish a second
// Email account; with it, the rebuilt job settles the recorded transaction
// and the chain holds one Email account per message. The messages go
// through the default SendMail batcher ([chain] sendmail_batch_max = 8), so
// batched sends are covered too. Real serve, devnet, Redis, pind.
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { type DeliverJobData, QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { IntentsRepo, MessagesRepo } from '../../src/core/store/index.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';
import { eventually } from '../support/spooler-rig.ts';

function completed(queue: Queue<DeliverJobData>, id: string) {
  return eventually(async () => {
    const job = await queue.getJob(id);
    if (job && (await job.isFailed())) throw new Error(`job ${id} failed: ${job.failedReason}`);
    if (!job || !(await job.isCompleted())) return undefined;
    return queue.getJob(id);
  }, 60_000);
}

describe('SendMail intent', () => {
  it('a job whose Redis checkpoint was erased after its SendMail landed publishes no second Email account', async () => {
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
      // Three at once: the worker's batcher packs them into shared transactions.
      const infos = await Promise.all(
        [0, 1, 2].map((i) =>
          transport.sendMail({
            envelope: { from: 'ann@remote.example', to: [`${wallet}@${RIG_DOMAIN}`] },
            raw: `From: ann@remote.example\r\nSubject: intent ${i}\r\n\r\nonce only ${i}\r\n`,
          }),
        ),
      );
      transport.close();
      const ids = infos.map((info) => `${info.response.split(' ').pop()}.0`);
      const first = await Promise.all(ids.map((id) => completed(deliver, id)));
      const messages = new MessagesRepo(rig.serving.store.db);
      const intents = new IntentsRepo(rig.serving.store.db);
      const before = await listInbox(rig.chain.connection, rig.chain.programId, bob.publicKey);
      expect(before).toHaveLength(3);
      const cids = first.map((j) => j.data.stages.pin?.cid as string);
      for (const [k, id] of ids.entries()) {
        // The intent was recorded before the send, and marked stored with the copy.
        const intent = await intents.get(id);
        expect(intent).toMatchObject({ cid: cids[k], outcome: 'stored', wallet });
        expect(intent?.blobKey).toBe(first[k]?.data.stages.seal?.blobKey);
        expect(intent?.signature).toBe(first[k]?.data.stages.submit?.signature);
        expect(intent?.sinceIndex).toBe(
          first[k]?.data.stages.submit?.since ?? first[k]?.data.stages.submit?.index,
        );
      }

      // The loss: the SendMail landed, the copy was not stored, and Redis lost the job's checkpoint.
      for (const [k, id] of ids.entries()) {
        const job = first[k];
        if (!job) throw new Error('no job');
        await messages.delete(id);
        await rig.serving.store.db
          .updateTable('delivery_intents')
          .set({ finished_at: null, outcome: null })
          .where('copy_id', '=', id)
          .execute();
        await job.remove();
        const { stages, ...rest } = job.data;
        // 0, 2: rebuilt from the spool's manifest (no stages at all); 1: rolled back to its seal checkpoint.
        const kept = k === 1 ? { resolve: stages.resolve, seal: stages.seal } : {};
        await deliver.add('deliver', { ...rest, stages: kept }, { jobId: id, attempts: 3 });
      }
      const again = await Promise.all(ids.map((id) => completed(deliver, id)));
      for (const [k, job] of again.entries()) {
        // The SAME sealed body, CID and transaction: settled, not signed again.
        // (Nothing was checkpointed to Redis again: the recorded send was found landed.)
        const result = job.returnvalue as { signature: string; cid: string; emailAddress: string };
        expect(result.cid).toBe(cids[k]);
        expect(result.signature).toBe(first[k]?.data.stages.submit?.signature);
        expect(result.emailAddress).toBe(first[k]?.data.stages.submit?.emailAddress);
      }
      const after = await listInbox(rig.chain.connection, rig.chain.programId, bob.publicKey);
      expect(after).toHaveLength(3);
      // One Email account per CID on chain.
      for (const cid of cids) expect(after.filter((e) => e.email.cid === cid)).toHaveLength(1);
      // Each copy stored again, once, pointing at the same account.
      for (const [k, id] of ids.entries()) {
        const row = await messages.get(id);
        expect(row?.cid).toBe(cids[k]);
        expect(row?.emailAddress).toBe(first[k]?.data.stages.submit?.emailAddress);
      }
      expect(await messages.listForWallet(wallet)).toHaveLength(3);
    } finally {
      await deliver.close();
      await rig.stop();
    }
  }, 150_000);
});
