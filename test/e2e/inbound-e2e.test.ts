// End to end over real sockets: nodemailer → MX → Redis → pipeline worker →
// pind (operator pin) → devnet SendMail → store; then the recipient reads
// the Email account from the chain, fetches the body from the gateway and
// opens it with the wallet key, getting the exact original message back.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Keypair, PublicKey } from '@solana/web3.js';
import { FlowProducer, Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import {
  createFromboxInstruction,
  fromHash,
  getFrombox,
  getMailbox,
  listInbox,
  publishKeyInstruction,
  setMailboxFlagsInstruction,
} from '../../chain/client/index.ts';
import {
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
  QUEUE_SPOOL,
} from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { MessagesRepo } from '../../src/core/store/index.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { generateReaderKeypair, openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { splitTrace, withoutTrace } from '../support/trace.ts';

function smtp(port: number) {
  return nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: false });
}

async function waitForInbox(rig: ServeRig, owner: PublicKey, count: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const inbox = await listInbox(rig.chain.connection, rig.chain.programId, owner);
    if (inbox.length >= count) return inbox;
    if (Date.now() > deadline)
      throw new Error(`inbox of ${owner.toBase58()} has ${inbox.length} of ${count}`);
    await sleep(100);
  }
}

/** Polls until `probe` yields a value (the store row follows the chain confirmation). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

async function fetchBody(rig: ServeRig, cid: string): Promise<Uint8Array> {
  const res = await fetch(`${rig.gatewayUrl}/ipfs/${cid}`);
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

const rawMessage = (subject: string) =>
  `From: Ann <ann@remote.example>\r\nTo: someone\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@remote.example>\r\n` +
  `Content-Type: text/plain; charset=utf-8\r\n\r\nHällo — ${subject}\r\n.leading dot\r\n`;

describe('inbound pipeline end to end', () => {
  it('delivers to a wallet address: Email account on chain, body on the gateway, opened with the wallet key', async () => {
    const rig = await startServeRig();
    const bob = await rig.mail.mailbox();
    const raw = rawMessage('first');
    await smtp(rig.mxPort).sendMail({
      envelope: { from: 'ann@remote.example', to: [`${bob.publicKey.toBase58()}@${RIG_DOMAIN}`] },
      raw,
    });
    const [entry] = await waitForInbox(rig, bob.publicKey, 1);
    expect(entry?.email.sender.toBase58()).toBe(rig.mail.authority.publicKey.toBase58());
    expect(Buffer.from(entry?.email.fromHash ?? []).toString('hex')).toBe(
      Buffer.from(fromHash('ann@remote.example')).toString('hex'),
    );
    const sealed = await fetchBody(rig, entry?.email.cid ?? '');
    expect(await computeCid(sealed)).toBe(entry?.email.cid);
    const opened = await openSealed(sealed, walletEncryptionKeypair(bob.secretKey));
    // The message as sent, under this copy's trace fields (sender_auth = "none": A-R says so).
    const { trace, message } = splitTrace(Buffer.from(opened.raw).toString('utf8'));
    expect(message).toBe(raw);
    expect(trace[0]).toBe('Return-Path: <ann@remote.example>');
    expect(trace[1]).toBe('Authentication-Results: mx.mail.test; none');
    expect(trace[2]).toMatch(
      /^Received: from \S+ \(\S+ \[127\.0\.0\.1\]\)\r\n\tby mx\.mail\.test \(Sealpost\) with ESMTP id /,
    );
    expect(trace[2]).toContain(`for <${bob.publicKey.toBase58()}@${RIG_DOMAIN}>;`);
    expect(opened.envelope.from).toBe('ann@remote.example');
    expect(opened.envelope.to).toBe(`${bob.publicKey.toBase58()}@${RIG_DOMAIN}`);

    // The operator's store has the copy with its chain facts.
    const messages = new MessagesRepo(rig.serving.store.db);
    const copy = await eventually(async () => (await messages.listForWallet(bob.publicKey.toBase58()))[0]);
    expect(copy).toMatchObject({
      cid: entry?.email.cid,
      emailAddress: entry?.address.toBase58(),
      publishedByUs: true,
      pinnedByOperator: true,
    });
    // The spool file is removed once the message is done.
    const blobs = new BlobStore(join(rig.dataDir, 'blobs'));
    for (let i = 0; i < 50 && (await blobs.exists(`spool/${copy?.id.split('.')[0]}`)); i++) await sleep(100);
    expect(await blobs.exists(`spool/${copy?.id.split('.')[0]}`)).toBe(false);
  });

  it('delivers through an alias, to the published delegated key when there is one', async () => {
    const rig = await startServeRig();
    const carol = await rig.mail.mailbox({ alias: 'carol' });
    const reader = await generateReaderKeypair();
    await rig.chain.send(
      [
        publishKeyInstruction({
          programId: rig.chain.programId,
          owner: carol.publicKey,
          pubKey: new PublicKey(reader.publicKey),
        }),
      ],
      [carol],
    );
    const raw = rawMessage('alias');
    await smtp(rig.mxPort).sendMail({
      envelope: { from: 'ann@remote.example', to: [`Carol@${RIG_DOMAIN}`] },
      raw,
    });
    const [entry] = await waitForInbox(rig, carol.publicKey, 1);
    const sealed = await fetchBody(rig, entry?.email.cid ?? '');
    const opened = await openSealed(sealed, reader);
    expect(withoutTrace(Buffer.from(opened.raw).toString('utf8'))).toBe(raw);
    await expect(openSealed(sealed, walletEncryptionKeypair(carol.secretKey))).rejects.toThrow();
  });

  it('under no_ipfs pins nothing: the cid is the b3: marker and the body stays in the store', async () => {
    const rig = await startServeRig();
    const dave = await rig.mail.mailbox();
    await rig.chain.send(
      [setMailboxFlagsInstruction({ programId: rig.chain.programId, owner: dave.publicKey, noIpfs: true })],
      [dave],
    );
    const raw = rawMessage('private');
    await smtp(rig.mxPort).sendMail({
      envelope: { from: 'ann@remote.example', to: [`${dave.publicKey.toBase58()}@${RIG_DOMAIN}`] },
      raw,
    });
    const [entry] = await waitForInbox(rig, dave.publicKey, 1);
    expect(entry?.email.cid).toMatch(/^b3:[0-9a-f]{64}$/);
    const store = new MessagesRepo(rig.serving.store.db);
    const copy = await eventually(async () => (await store.listForWallet(dave.publicKey.toBase58()))[0]);
    expect(copy?.pinnedByOperator).toBe(false);
    const sealed = new Uint8Array(await new BlobStore(join(rig.dataDir, 'blobs')).read(copy?.blobKey ?? ''));
    const opened = await openSealed(sealed, walletEncryptionKeypair(dave.secretKey));
    expect(withoutTrace(Buffer.from(opened.raw).toString('utf8'))).toBe(raw);
    // Nothing of it reached the operator pin.
    const cid = await computeCid(sealed);
    expect((await fetch(`${rig.gatewayUrl}/ipfs/${cid}`)).status).toBe(404);
  });

  it('spends a stamp for a gated first contact and bounces a copy whose stamp ran out', async () => {
    // No spooler in this process: the DSN stays in the outbound queue for the test to read.
    const rig = await startServeRig({ serve: { components: { smtp: true, workers: true, spooler: false } } });
    const erin = await rig.mail.mailbox({ postage: 5000n });
    const sender = 'stranger@remote.example';
    const p = rig.chain.programId;
    // Erin's frombox toward the stranger with one stamp bought by a friend of the sender.
    await rig.chain.send(
      [
        createFromboxInstruction({
          programId: p,
          owner: erin.publicKey,
          fromHash: fromHash(sender),
          requiredPostage: 5000n,
        }),
      ],
      [erin],
    );
    const { addStampsInstruction } = await import('../../chain/client/stamp-instructions.ts');
    const payer = await rig.chain.funded();
    await rig.chain.send(
      [
        addStampsInstruction({
          programId: p,
          payer: payer.publicKey,
          recipient: erin.publicKey,
          fromHash: fromHash(sender),
          stamps: 1n,
        }),
      ],
      [payer],
    );
    const to = `${erin.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const t = smtp(rig.mxPort);
    // Both pass the MX (one stamp is visible); the chain accepts only one.
    await t.sendMail({ envelope: { from: sender, to: [to] }, raw: rawMessage('stamp-1') });
    await t.sendMail({ envelope: { from: sender, to: [to] }, raw: rawMessage('stamp-2') });
    const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, {
      connection: rig.redis,
      prefix: rig.prefix,
    });
    const deadline = Date.now() + 20_000;
    let dsns: OutboundJobData[] = [];
    while (Date.now() < deadline) {
      dsns = (await outbound.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.data);
      if (dsns.length > 0) break;
      await sleep(100);
    }
    await outbound.close();
    expect(dsns).toHaveLength(1);
    expect(dsns[0]).toMatchObject({ from: '', to: [sender], kind: 'dsn' });
    const dsn = (await new BlobStore(join(rig.dataDir, 'blobs')).read(dsns[0]?.blobKey ?? '')).toString(
      'utf8',
    );
    expect(dsn).toMatch(/multipart\/report; report-type=delivery-status/);
    expect(dsn).toMatch(/Status: 5\.7\.1/);
    expect(dsn).toContain(`Final-Recipient: rfc822; ${to}`);
    expect(dsn).toMatch(/Subject: stamp-[12]/);
    const inbox = await waitForInbox(rig, erin.publicKey, 1);
    expect(inbox).toHaveLength(1);
    // Each one-recipient message's only job removed its spool file: the delivered one after
    // its copy was stored, the bounced one after its DSN was queued.
    const spoolDir = join(rig.dataDir, 'blobs', 'spool');
    for (let i = 0; i < 50 && readdirSync(spoolDir).length > 0; i++) await sleep(100);
    expect(readdirSync(spoolDir)).toEqual([]);
    const box = await getFrombox(rig.chain.connection, p, fromHash(sender), erin.publicKey);
    expect(box?.stamps).toBe(0n);
    expect((await getMailbox(rig.chain.connection, p, erin.publicKey))?.mailCount).toBe(1n);
  });

  it('still delivers a one-recipient job queued in the old shape, under a spool-cleanup parent that removes the file', async () => {
    const rig = await startServeRig();
    const gus = await rig.mail.mailbox();
    const to = `${gus.publicKey.toBase58()}@${RIG_DOMAIN}`;
    // What an MX of the previous release left in Redis: the spool file, then a parent and its one child.
    const msgid = 'OldShape0001';
    const raw = rawMessage('old-shape');
    const blobs = new BlobStore(join(rig.dataDir, 'blobs'));
    const [spoolKey] = await blobs.writeSegment([
      { id: msgid, chunks: [Buffer.from(raw)], size: Buffer.byteLength(raw) },
    ]);
    await blobs.syncSpool();
    const data: DeliverJobData = {
      msgid,
      spoolKey: spoolKey as string,
      envelope: { from: 'ann@remote.example', to },
      wallet: gus.publicKey.toBase58(),
      form: 'wallet',
      receivedAt: Date.now(),
      size: Buffer.byteLength(raw),
      remoteIp: '127.0.0.1',
      stages: {},
    };
    const flow = new FlowProducer({ connection: rig.redis, prefix: rig.prefix });
    await flow.add({
      name: 'spool-cleanup',
      queueName: QUEUE_SPOOL,
      data: { msgid, spoolKey },
      opts: { jobId: msgid },
      children: [
        {
          name: 'deliver',
          queueName: QUEUE_DELIVER,
          data,
          opts: { jobId: `${msgid}.0`, attempts: 3, ignoreDependencyOnFailure: true },
        },
      ],
    });
    await flow.close();
    const [entry] = await waitForInbox(rig, gus.publicKey, 1);
    const opened = await openSealed(
      await fetchBody(rig, entry?.email.cid ?? ''),
      walletEncryptionKeypair(gus.secretKey),
    );
    expect(withoutTrace(Buffer.from(opened.raw).toString('utf8'))).toBe(raw);
    const spool = new Queue(QUEUE_SPOOL, { connection: rig.redis, prefix: rig.prefix });
    const parentDone = await eventually(async () =>
      (await spool.getJob(msgid))?.finishedOn ? true : undefined,
    );
    await spool.close();
    expect(parentDone).toBe(true);
    expect(await blobs.exists(spoolKey as string)).toBe(false);
  });

  it('a null-sender message that fails is dropped without a bounce', async () => {
    const rig = await startServeRig({ serve: { components: { smtp: true, workers: true, spooler: false } } });
    const fay = await rig.mail.mailbox({ postage: 7000n });
    const p = rig.chain.programId;
    // Allowlist the null sender's hash with one stamp, then deliver two bounces.
    await rig.chain.send(
      [
        createFromboxInstruction({
          programId: p,
          owner: fay.publicKey,
          fromHash: fromHash(''),
          requiredPostage: 7000n,
        }),
      ],
      [fay],
    );
    const { addStampsInstruction } = await import('../../chain/client/stamp-instructions.ts');
    const payer = Keypair.generate();
    await rig.chain.airdrop(payer.publicKey, 1e9);
    await rig.chain.send(
      [
        addStampsInstruction({
          programId: p,
          payer: payer.publicKey,
          recipient: fay.publicKey,
          fromHash: fromHash(''),
          stamps: 1n,
        }),
      ],
      [payer],
    );
    const to = `${fay.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const t = smtp(rig.mxPort);
    await t.sendMail({ envelope: { from: '', to: [to] }, raw: rawMessage('dsn-1') });
    await t.sendMail({ envelope: { from: '', to: [to] }, raw: rawMessage('dsn-2') });
    await waitForInbox(rig, fay.publicKey, 1);
    await sleep(1500);
    const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, {
      connection: rig.redis,
      prefix: rig.prefix,
    });
    expect(await outbound.count()).toBe(0);
    await outbound.close();
    expect(await listInbox(rig.chain.connection, p, fay.publicKey)).toHaveLength(1);
  });

  it('parses a DMARC aggregate report delivered to the report address and still delivers it as mail', async () => {
    const rig = await startServeRig({
      postmaster: true,
      extraLocalDomains: ['example.org'],
      extraToml: '[spooler.dmarc_rua_ingest]\nenabled = true\naddress = "postmaster@mail.test"\n',
    });
    const report = readFileSync(new URL('../fixtures/dmarc/google-report.xml', import.meta.url));
    await smtp(rig.mxPort).sendMail({
      envelope: { from: 'noreply-dmarc-support@google.com', to: [`postmaster@${RIG_DOMAIN}`] },
      from: 'noreply-dmarc-support@google.com',
      to: `postmaster@${RIG_DOMAIN}`,
      subject: 'Report domain: example.org Submitter: google.com',
      text: 'DMARC aggregate report',
      attachments: [{ filename: 'google.com!example.org!1700006400!1700092799.xml', content: report }],
    });
    const pm = rig.postmaster;
    if (!pm) throw new Error('no postmaster');
    await waitForInbox(rig, pm.publicKey, 1);
    const rows = await eventually(async () => {
      const r = await rig.serving.store.db.selectFrom('dmarc_reports').selectAll().execute();
      return r.length > 0 ? r : undefined;
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.domain).toBe('example.org');
  });
});
