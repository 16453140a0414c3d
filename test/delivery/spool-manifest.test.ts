// The spool carries what its jobs are rebuilt from: every message the MX
// accepts is written with its manifest (envelope, recipients as resolved,
// trace, receivedAt, size, remote IP) in the spool file's index, in the same
// durable write as its bytes, small ones in a shared segment and large ones
// in their own file; a reader of `spool/<id>` finds its bytes and its
// manifest. Entries written before the index (whole-file keys, no trailer)
// are read as before. Real MX, real devnet, real Redis.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { type DeliverJobData, QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { SPOOL_MAGIC } from '../../src/core/blobs/spool-manifest.ts';
import { startMxRig } from '../support/mx-rig.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';
import { eventually } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

function send(port: number, from: string, to: string[], raw: string) {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  return t.sendMail({ envelope: { from, to }, raw }).finally(() => t.close());
}

describe('spool manifest', () => {
  it('every accepted message, small or large, has its manifest in its spool file with its bytes', async () => {
    const rig = await startMxRig();
    const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: rig.redis, prefix: rig.prefix });
    try {
      const small = 'From: ann@remote.example\r\nSubject: small\r\n\r\nhello\r\n';
      const large = `From: ann@remote.example\r\nSubject: large\r\n\r\n${'x'.repeat(76)}\r\n`.repeat(3000);
      const infos = await Promise.all([
        send(rig.port, 'ann@remote.example', [rig.rcpt], small),
        send(rig.port, '', [rig.rcpt], small),
        send(rig.port, 'bob@remote.example', [rig.rcpt], large),
      ]);
      for (const [k, info] of infos.entries()) {
        const msgid = info.response.split(' ').pop() ?? '';
        const entry = await rig.blobs.readSpoolEntry(msgid);
        expect(entry.kind).toBe('indexed');
        if (entry.kind !== 'indexed') continue;
        const job = await deliver.getJob(`${msgid}.0`);
        // The job names exactly the range the index gives, and the manifest rebuilds its data.
        expect(job?.data.spoolKey).toBe(entry.key);
        const m = entry.manifest;
        expect(m.msgid).toBe(msgid);
        expect(m.from).toBe(job?.data.envelope.from);
        expect(m.receivedAt).toBe(job?.data.receivedAt);
        expect(m.size).toBe(job?.data.size);
        expect(m.remoteIp).toBe(job?.data.remoteIp);
        expect(m.trace).toEqual(job?.data.trace);
        expect(m.recipients.map((r) => r.wallet)).toEqual(m.recipients.map(() => rig.wallet));
        expect(m.recipients[0]?.address).toBe(job?.data.envelope.to);
        expect(m.recipients[0]?.form).toBe(job?.data.form);
        expect(m.recipients).toHaveLength(1);
        if (k === 1) expect(m.from).toBe('');
        // The bytes of the range are the message as received, the index and trailer after them.
        const raw = (await rig.blobs.read(entry.key)).toString('latin1');
        expect(raw).toBe((k === 2 ? large : small).replace(/\r?\n/g, '\r\n'));
        const file = readFileSync(join(rig.blobs.root, 'spool', msgid));
        expect(file.subarray(file.length - SPOOL_MAGIC.length).equals(SPOOL_MAGIC)).toBe(true);
        if (k === 2) expect(entry.key).toBe(`spool/${msgid}@0+${m.size}`);
      }
    } finally {
      await deliver.close();
    }
  }, 60_000);

  it('reads an entry written before the index as a whole file, and a damaged index as corrupt', async () => {
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    const [key] = await blobs.writeSegment([
      { id: 'legacy-1', chunks: [Buffer.from('old bytes\r\n')], size: 11 },
    ]);
    expect(await blobs.readSpoolEntry('legacy-1')).toEqual({
      kind: 'unindexed',
      id: 'legacy-1',
      key: 'spool/legacy-1',
    });
    expect((await blobs.read(key as string)).toString()).toBe('old bytes\r\n');
    const manifest = {
      v: 1 as const,
      msgid: 'new-1',
      from: 'a@b.example',
      recipients: [{ address: 'x@y', wallet: 'W', form: 'wallet' as const }],
      receivedAt: 1,
      size: 5,
      remoteIp: '127.0.0.1',
    };
    await blobs.writeSegment([{ id: 'new-1', chunks: [Buffer.from('hello')], size: 5, manifest }]);
    const path = join(blobs.root, 'spool', 'new-1');
    const whole = readFileSync(path);
    // Cut inside the index: the magic stays only if we put it back, as a torn copy would.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, Buffer.concat([whole.subarray(0, 8), whole.subarray(whole.length - 12)]));
    await expect(blobs.readSpoolEntry('new-1')).rejects.toThrow(/index/);
  });

  it('an old-format spool entry (whole-file key, no index) is still delivered by its job', async () => {
    const rig = await startServeRig();
    const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: rig.redis, prefix: rig.prefix });
    try {
      const bob = await rig.mail.mailbox();
      const wallet = bob.publicKey.toBase58();
      // As the MX wrote a large message before the index: the raw bytes alone, named spool/<id>.
      const blobs = new BlobStore(join(rig.dataDir, 'blobs'));
      const id = `legacy${Date.now()}`;
      const draft = await blobs.receiveSpool(
        id,
        (async function* () {
          yield Buffer.from('From: ann@remote.example\r\nSubject: old format\r\n\r\nstill here\r\n');
        })(),
      );
      const [spoolKey] = await blobs.writeSegment([{ id, chunks: draft.chunks ?? [], size: draft.size }]);
      await blobs.syncSpool();
      expect((await blobs.readSpoolEntry(id)).kind).toBe('unindexed');
      const data: DeliverJobData = {
        msgid: id,
        // The whole-file key old large messages had.
        spoolKey: spoolKey?.split('@')[0] as string,
        envelope: { from: 'ann@remote.example', to: `${wallet}@${RIG_DOMAIN}` },
        wallet,
        form: 'wallet',
        receivedAt: Date.now(),
        size: draft.size,
        remoteIp: '127.0.0.1',
        removesSpool: true,
        stages: {},
      };
      await deliver.add('deliver', data, { jobId: `${id}.0`, attempts: 3 });
      const inbox = await eventually(async () => {
        const list = await listInbox(rig.chain.connection, rig.chain.programId, bob.publicKey);
        return list.length > 0 ? list : undefined;
      }, 30_000);
      expect(inbox).toHaveLength(1);
      // Its job removed the old entry once stored.
      await eventually(async () => ((await blobs.exists(`spool/${id}`)) ? undefined : true), 10_000);
    } finally {
      await deliver.close();
      await rig.stop();
    }
  }, 90_000);
});
