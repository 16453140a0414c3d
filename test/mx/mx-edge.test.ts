// The MX edge over real SMTP (nodemailer and raw sockets) against a devnet
// and real Redis: who may receive, the postage gate, and what lands in the
// spool and the queue before the 250.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Keypair } from '@solana/web3.js';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createFromboxInstruction, fromHash } from '../../chain/client/index.ts';
import { type DeliverJobData, QUEUE_DELIVER, QUEUE_SPOOL } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { type MxServer, startMx } from '../../src/edge/mx/mx-server.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Rig {
  chain: TestChain;
  mx: MxServer;
  prefix: string;
  spoolDir: string;
  open: Keypair;
  gated: Keypair;
  deliver: Queue<DeliverJobData>;
}

async function rig(opts: { redisUrl?: string; maxBytes?: number } = {}): Promise<Rig> {
  const chain = await startTestChain();
  const p = chain.programId;
  const mail = await prepareMailChain(chain, DOMAIN);
  const open = await mail.mailbox({ alias: 'alice' });
  const gated = await mail.mailbox({ postage: 5000n });
  await chain.send(
    [
      createFromboxInstruction({
        programId: p,
        owner: gated.publicKey,
        fromHash: fromHash('friend@remote.example'),
        requiredPostage: 0n,
      }),
    ],
    [gated],
  );

  const prefix = `sealpost-test-${randomBytes(6).toString('hex')}`;
  const redisUrl = opts.redisUrl ?? 'redis://127.0.0.1:6379';
  const connection = new Redis(redisUrl, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  connection.on('error', () => {});
  await connection.connect().catch(() => {});
  const flow = new FlowProducer({ connection, prefix });
  const dir = tempDir();
  const blobs = new BlobStore(join(dir, 'blobs'));
  const mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: [DOMAIN], postmasterWallet: open.publicKey.toBase58() },
    maxMessageBytes: opts.maxBytes ?? 1024 * 1024,
    maxRecipients: 5,
    maxConnectionsPerIp: 20,
    socketTimeoutMs: 10_000,
    chain: new ChainView({ connection: chain.connection, programId: p, ttlMs: 0 }),
    accept: { blobs, flow, attempts: 3, backoffMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
  const admin = new Redis('redis://127.0.0.1:6379');
  const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: admin, prefix });
  cleanups.push(async () => {
    await mx.close(100);
    await flow.close().catch(() => {});
    connection.disconnect();
    await deliver.close();
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length) await admin.del(...keys);
    admin.disconnect();
  });
  return { chain, mx, prefix, spoolDir: join(dir, 'blobs', 'spool'), open, gated, deliver };
}

function transport(port: number) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    tls: { rejectUnauthorized: false },
  });
}

/** A raw SMTP conversation: sends each line after the previous reply, returns every reply. */
async function converse(port: number, lines: string[]): Promise<string[]> {
  const sock = connect(port, '127.0.0.1');
  const replies: string[] = [];
  let buf = '';
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        buf += d.toString('latin1');
        const m = buf.match(/(^|\r\n)(\d{3}) [^\r\n]*\r\n$/);
        if (m) {
          sock.off('data', onData);
          const all = buf;
          buf = '';
          resolve(all.trim());
        }
      };
      sock.on('data', onData);
      sock.once('error', reject);
    });
  replies.push(await next());
  for (const line of lines) {
    sock.write(`${line}\r\n`);
    replies.push(await next());
  }
  sock.end();
  return replies;
}

describe('MX edge', () => {
  it('accepts mail for a wallet, an alias and postmaster; spools it and queues one job per recipient', async () => {
    const r = await rig();
    const wallet = r.open.publicKey.toBase58();
    const info = await transport(r.mx.port).sendMail({
      envelope: {
        from: 'sender@remote.example',
        to: [`${wallet}@${DOMAIN}`, `Alice@${DOMAIN}`, 'postmaster'],
      },
      raw: 'From: sender@remote.example\r\nTo: alice@mail.test\r\nSubject: hi\r\n\r\nhello \u00e9\r\n',
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const msgid = info.response.split(' ').pop() ?? '';
    const spooled = readFileSync(join(r.spoolDir, msgid), 'utf8');
    expect(spooled).toContain('Subject: hi');
    const jobs = await r.deliver.getJobs(['waiting', 'waiting-children', 'prioritized', 'delayed']);
    expect(jobs.map((j) => j.data.form).sort()).toEqual(['alias', 'postmaster', 'wallet']);
    for (const job of jobs) {
      expect(job.data.wallet).toBe(wallet);
      expect(job.data.msgid).toBe(msgid);
      expect(job.data.envelope.from).toBe('sender@remote.example');
      expect(job.data.stages).toEqual({});
    }
    const parent = await new Queue(QUEUE_SPOOL, {
      connection: { url: 'redis://127.0.0.1:6379' },
      prefix: r.prefix,
    });
    // A small message shares a segment file with the others of its commit: its key names its bytes there.
    const spoolKey = (await parent.getJob(msgid))?.data.spoolKey ?? '';
    expect(spoolKey).toMatch(new RegExp(`^spool/${msgid}@\\d+\\+\\d+$`));
    const bytes = (await new BlobStore(join(r.spoolDir, '..')).read(spoolKey)).toString('utf8');
    expect(bytes).toBe(
      'From: sender@remote.example\r\nTo: alice@mail.test\r\nSubject: hi\r\n\r\nhello \u00e9\r\n',
    );
    for (const job of jobs) expect(job.data.spoolKey).toBe(spoolKey);
    await parent.close();
  });

  it('is never an open relay and answers unknown local recipients with 550 5.1.1', async () => {
    const r = await rig();
    const replies = await converse(r.mx.port, [
      'EHLO client.example',
      'MAIL FROM:<a@remote.example>',
      'RCPT TO:<someone@gmail.example>',
      `RCPT TO:<${'1'.repeat(32)}@${DOMAIN}>`,
      `RCPT TO:<nobody@${DOMAIN}>`,
      'RCPT TO:<bad address>',
      'QUIT',
    ]);
    expect(replies[3]).toMatch(/^550 5\.7\.1 Relaying denied/);
    expect(replies[4]).toMatch(/^550 5\.1\.1/);
    expect(replies[5]).toMatch(/^550 5\.1\.1/);
    expect(replies[6]).toMatch(/^5\d\d /);
  });

  it('gates first contact to a mailbox with postage; an allowlisted sender passes', async () => {
    const r = await rig();
    const gated = `${r.gated.publicKey.toBase58()}@${DOMAIN}`;
    const replies = await converse(r.mx.port, [
      'EHLO c',
      'MAIL FROM:<stranger@remote.example>',
      `RCPT TO:<${gated}>`,
      'RSET',
      'MAIL FROM:<friend@remote.example>',
      `RCPT TO:<${gated}>`,
      'QUIT',
    ]);
    expect(replies[3]).toMatch(/^550 5\.7\.1 .*postage of 5000 lamports.*buy a stamp/);
    expect(replies[6]).toMatch(/^250/);
  });

  it('refuses a message over SIZE with 552 and keeps nothing', async () => {
    const r = await rig({ maxBytes: 2000 });
    const wallet = r.open.publicKey.toBase58();
    await expect(
      transport(r.mx.port).sendMail({
        envelope: { from: 'a@remote.example', to: [`${wallet}@${DOMAIN}`] },
        raw: `Subject: big\r\n\r\n${'x'.repeat(5000)}\r\n`,
      }),
    ).rejects.toMatchObject({ responseCode: 552 });
    expect(
      existsSync(r.spoolDir)
        ? (await import('node:fs')).readdirSync(r.spoolDir).filter((f) => !f.startsWith('.'))
        : [],
    ).toEqual([]);
    expect(await r.deliver.count()).toBe(0);
  });

  it('answers 4xx and keeps nothing when Redis is unreachable', async () => {
    const r = await rig({ redisUrl: 'redis://127.0.0.1:1' });
    const wallet = r.open.publicKey.toBase58();
    await expect(
      transport(r.mx.port).sendMail({
        envelope: { from: 'a@remote.example', to: [`${wallet}@${DOMAIN}`] },
        raw: 'Subject: x\r\n\r\nbody\r\n',
      }),
    ).rejects.toMatchObject({ responseCode: 451 });
    const { readdirSync } = await import('node:fs');
    expect(existsSync(r.spoolDir) ? readdirSync(r.spoolDir).filter((f) => !f.startsWith('.')) : []).toEqual(
      [],
    );
  });

  it('answers 4xx at RCPT when the chain RPC is down', async () => {
    const r = await rig();
    await r.chain.devnet.close();
    const replies = await converse(r.mx.port, [
      'EHLO c',
      'MAIL FROM:<a@remote.example>',
      `RCPT TO:<${r.open.publicKey.toBase58()}@${DOMAIN}>`,
      'QUIT',
    ]);
    expect(replies[3]).toMatch(/^451 4\.4\.3/);
  });
});
