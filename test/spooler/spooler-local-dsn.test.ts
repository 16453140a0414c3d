// A DSN to a sender at one of our own domains is delivered locally, end to
// end over real sockets: a local wallet submits on the 465 listener to a
// remote address whose MX (a real SMTP server on loopback) refuses it with
// 550; the spooler's failure DSN goes to the inbound pipeline, not out: it
// becomes an Email account on chain and a stored message, sealed to the
// sender's wallet, and the DNS double (the deployment's only resolver) was
// never asked for our own domain's MX. A DSN for a local address that names
// no mailbox is dropped with a log line, without bouncing.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PublicKey } from '@solana/web3.js';
import { Queue } from 'bullmq';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { fromHash, listInbox } from '../../chain/client/index.ts';
import { type OutboundJobData, QUEUE_OUTBOUND, QUEUE_SPOOL } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { CredentialSealer } from '../../src/core/crypto/credential-seal.ts';
import { AccountsRepo, MessagesRepo } from '../../src/core/store/index.ts';
import { setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { eventually } from '../support/spooler-rig.ts';

const PASSWORD = 'local dsn test password';
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {});
});

async function waitForInbox(rig: ServeRig, owner: PublicKey, count: number, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const inbox = await listInbox(rig.chain.connection, rig.chain.programId, owner);
    if (inbox.length >= count) return inbox;
    if (Date.now() > deadline)
      throw new Error(`inbox of ${owner.toBase58()} has ${inbox.length} of ${count}`);
    await sleep(150);
  }
}

async function rigWithRemote(): Promise<{ rig: ServeRig; dns: DnsDouble; remote: RemoteMx; port: number }> {
  const remote = await startRemoteMx({
    host: '127.0.0.95',
    rcpt: (address) =>
      address.startsWith('nobody@') ? { code: 550, message: '5.1.1 No such user here' } : null,
  });
  cleanup.push(() => remote.close());
  const dns = await startDnsDouble({
    'remote.test': { MX: [{ preference: 10, exchange: 'mx.remote.test' }] },
    'mx.remote.test': { A: ['127.0.0.95'] },
  });
  cleanup.push(() => dns.close());
  const rig = await startServeRig({
    resolver: dns.address,
    mailAccess: true,
    extraToml: `
[spooler]
smtp_port = ${remote.port}
retry_schedule_secs = [60]

[[smtp.listeners]]
mode = "submissions"
host = "127.0.0.1"
port = 2465
`,
    serve: {
      listenerOverrides: [
        { host: '127.0.0.1', port: 0 },
        { host: '127.0.0.1', port: 0 },
      ],
    },
  });
  const sub = rig.serving.listeners.find((l) => l.mode === 'submissions');
  if (!sub) throw new Error('no submissions listener');
  return { rig, dns, remote, port: sub.port };
}

describe('DSNs to local senders', () => {
  it('a bounce of a submission lands in the sender’s mailbox through the pipeline; no MX lookup of our domain', async () => {
    const { rig, dns, remote, port } = await rigWithRemote();
    const alice = await rig.mail.mailbox();
    const wallet = alice.publicKey.toBase58();
    const accounts = new AccountsRepo(rig.serving.store.db);
    await accounts.create(wallet, { source: 'admin' });
    await setMailPassword(
      { accounts, sealer: new CredentialSealer(rig.credentialKey), db: rig.serving.store.db },
      wallet,
      PASSWORD,
    );
    const from = `${wallet}@${RIG_DOMAIN}`;
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      secure: true,
      auth: { user: from, pass: PASSWORD },
      tls: { rejectUnauthorized: false },
    });
    const info = await transport.sendMail({
      envelope: { from, to: ['nobody@remote.test'] },
      raw: `From: ${from}\r\nTo: nobody@remote.test\r\nSubject: will bounce\r\nMessage-ID: <bounce-me@mail.test>\r\n\r\nhello\r\n`,
    });
    expect(info.response).toMatch(/^250 /);

    const [entry] = await waitForInbox(rig, alice.publicKey, 1);
    // From the null sender, published by this server's authority.
    expect(Buffer.from(entry?.email.fromHash ?? []).toString('hex')).toBe(
      Buffer.from(fromHash('')).toString('hex'),
    );
    const res = await fetch(`${rig.gatewayUrl}/ipfs/${entry?.email.cid}`);
    const opened = await openSealed(
      new Uint8Array(await res.arrayBuffer()),
      walletEncryptionKeypair(alice.secretKey),
    );
    expect(opened.envelope.from).toBe('');
    expect(opened.envelope.to).toBe(from);
    const dsn = await simpleParser(Buffer.from(opened.raw));
    expect(dsn.headers.get('content-type')).toMatchObject({ value: 'multipart/report' });
    // The message/delivery-status part, as the RFC 3464 fields read in the raw report.
    const fields = Buffer.from(opened.raw).toString('utf8');
    expect(fields).toMatch(/Content-Type: message\/delivery-status/);
    expect(fields).toMatch(/Final-Recipient: rfc822; ?nobody@remote\.test/);
    expect(fields).toMatch(/Action: failed/);
    expect(fields).toMatch(/Status: 5\.1\.1/);
    expect(dsn.headers.get('in-reply-to')).toBe('<bounce-me@mail.test>');

    // The stored copy is the DSN (the Sent copy is the other row); the job stores it
    // after the Email account is confirmed, so it may land a moment after the chain shows it.
    const messages = new MessagesRepo(rig.serving.store.db);
    const stored = await eventually(async () =>
      (await messages.listForWallet(wallet)).find((m) => m.cid === entry?.email.cid),
    );
    expect(stored.publishedByUs).toBe(true);

    // The remote MX saw the submission only; nothing ever asked for our own domain's MX.
    expect(remote.stats.mailFrom).toBe(1);
    expect(remote.accepted).toHaveLength(0);
    expect(dns.queries.some((q) => q.name.toLowerCase() === 'remote.test' && q.type === 'MX')).toBe(true);
    expect(dns.queries.filter((q) => q.name.toLowerCase().endsWith(RIG_DOMAIN))).toEqual([]);

    // A DSN (as the pipeline queues one) for a local address that names no mailbox: dropped, not bounced.
    const blobs = new BlobStore(join(rig.dataDir, 'blobs'));
    const { key } = await blobs.putContent(
      Buffer.from('From: MAILER-DAEMON@mx.mail.test\r\nSubject: x\r\n\r\nx\r\n'),
    );
    const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: rig.redis, prefix: rig.prefix });
    cleanup.push(() => intake.close());
    const job = await intake.add(
      'dsn',
      {
        msgid: 'dsn-unknown-local',
        from: '',
        to: [`nosuchbox@${RIG_DOMAIN}`],
        blobKey: key,
        kind: 'dsn',
        createdAt: Date.now(),
      },
      { jobId: 'dsn-unknown-local' },
    );
    const done = await eventually(async () =>
      (await job.isCompleted()) ? await intake.getJob(job.id ?? '') : undefined,
    );
    expect(done?.returnvalue).toEqual({ domains: [] });
    expect(await blobs.exists(key)).toBe(false);
    const spool = new Queue(QUEUE_SPOOL, { connection: rig.redis, prefix: rig.prefix });
    cleanup.push(() => spool.close());
    expect(await spool.getJob('dsn-unknown-local')).toBeUndefined();
    expect(dns.queries.filter((q) => q.name.toLowerCase().endsWith(RIG_DOMAIN))).toEqual([]);
  }, 120_000);
});
