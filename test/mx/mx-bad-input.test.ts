// The MX against hostile and broken clients, over raw sockets: each gets the
// right reply and nothing is spooled or queued half-way.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeliverJobData, QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { type MxServer, startMx } from '../../src/edge/mx/mx-server.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { tempDir } from '../support/temp-dir.ts';

const DOMAIN = 'mail.test';
let mx: MxServer;
let rcpt: string;
let spoolDir: string;
let deliver: Queue<DeliverJobData>;
const teardown: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // One chain and MX for the whole file: each test only talks SMTP to it.
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, DOMAIN);
  const owner = await mail.mailbox();
  rcpt = `${owner.publicKey.toBase58()}@${DOMAIN}`;
  const prefix = `sptest-${randomBytes(6).toString('hex')}`;
  const edge = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  await new Promise((r) => edge.once('ready', r));
  const flow = new FlowProducer({ connection: edge, prefix });
  const dir = tempDir();
  spoolDir = join(dir, 'blobs', 'spool');
  mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: [DOMAIN] },
    maxMessageBytes: 1024 * 1024,
    maxRecipients: 5,
    maxConnectionsPerIp: 50,
    socketTimeoutMs: 2_000,
    chain: new ChainView({ connection: chain.connection, programId: chain.programId }),
    accept: { blobs: new BlobStore(join(dir, 'blobs')), flow, attempts: 3, backoffMs: 1000 },
    logger: pino({ level: 'silent' }),
  });
  const admin = new Redis('redis://127.0.0.1:6379');
  deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: admin, prefix });
  teardown.push(async () => {
    await mx.close(100);
    await flow.close();
    edge.disconnect();
    await deliver.close();
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length) await admin.del(...keys);
    admin.disconnect();
    await chain.devnet.close();
  });
}, 60_000);

afterAll(async () => {
  for (const fn of teardown) await fn();
});

/** A client that writes raw bytes and collects every reply line. */
class RawClient {
  private buf = '';
  private readonly sock: Socket;
  private waiters: (() => void)[] = [];
  closed = false;

  constructor(port: number) {
    this.sock = connect(port, '127.0.0.1');
    this.sock.on('data', (d) => {
      this.buf += d.toString('latin1');
      for (const w of this.waiters.splice(0)) w();
    });
    this.sock.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
    this.sock.on('error', () => {});
  }

  write(data: string | Buffer): void {
    this.sock.write(data);
  }

  /** Waits for the next complete reply (last line `NNN text`). */
  async reply(timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.buf.match(/^((?:\d{3}-[^\r\n]*\r\n)*\d{3} [^\r\n]*\r\n)/);
      if (m?.[1]) {
        this.buf = this.buf.slice(m[1].length);
        return m[1].trim();
      }
      if (this.closed) return this.buf.trim() || '(closed)';
      if (Date.now() > deadline) throw new Error(`no reply; buffer: ${JSON.stringify(this.buf)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Greets and opens a transaction to the test recipient; returns after 354. */
  async openData(): Promise<void> {
    expect(await this.reply()).toMatch(/^220 /);
    this.write('EHLO client.example\r\n');
    expect(await this.reply()).toMatch(/^250/);
    this.write('MAIL FROM:<a@remote.example>\r\n');
    expect(await this.reply()).toMatch(/^250/);
    this.write(`RCPT TO:<${rcpt}>\r\n`);
    expect(await this.reply()).toMatch(/^250/);
    this.write('DATA\r\n');
    expect(await this.reply()).toMatch(/^354/);
  }

  end(): void {
    this.sock.end();
  }

  destroy(): void {
    this.sock.destroy();
  }
}

function spooled(): string[] {
  return existsSync(spoolDir) ? readdirSync(spoolDir).filter((f) => !f.startsWith('.')) : [];
}

async function nothingKept(): Promise<void> {
  expect(spooled()).toEqual([]);
  expect(await deliver.count()).toBe(0);
}

describe('MX bad input', () => {
  it.each([
    ['a bare LF', 'Subject: x\r\n\r\nline one\nline two\r\n', /^554 5\.6\.11 /],
    ['a bare CR', 'Subject: x\r\n\r\nline one\rline two\r\n', /^554 5\.6\.11 /],
    ['a NUL octet', 'Subject: x\r\n\r\nnul\u0000here\r\n', /^554 5\.6\.0 .*NUL/],
    ['a line over 998 octets', `Subject: x\r\n\r\n${'y'.repeat(999)}\r\n`, /^554 5\.6\.0 .*998/],
  ])('refuses a message with %s and keeps nothing', async (_name, body, expected) => {
    const c = new RawClient(mx.port);
    await c.openData();
    c.write(Buffer.from(`${body}.\r\n`, 'latin1'));
    expect(await c.reply()).toMatch(expected);
    // The session goes on: the next command is answered normally.
    c.write('RSET\r\n');
    expect(await c.reply()).toMatch(/^250/);
    c.end();
    await nothingKept();
  });

  it('accepts a line of exactly 998 octets and malformed MIME as is', async () => {
    const c = new RawClient(mx.port);
    await c.openData();
    c.write(
      `Subject: x\r\nContent-Type: multipart/mixed; boundary="never-closed"\r\n\r\n--never-closed\r\n${'z'.repeat(998)}\r\n.\r\n`,
    );
    expect(await c.reply()).toMatch(/^250 2\.0\.0 /);
    c.write('QUIT\r\n');
    c.end();
    expect(spooled()).toHaveLength(1);
    await deliver.obliterate({ force: true });
    const { rmSync } = await import('node:fs');
    rmSync(spoolDir, { recursive: true, force: true });
  });

  it('refuses a header section that is too large', async () => {
    const c = new RawClient(mx.port);
    await c.openData();
    const header = Array.from({ length: 3000 }, (_, i) => `X-Filler-${i}: ${'h'.repeat(90)}\r\n`).join('');
    c.write(`${header}\r\nbody\r\n.\r\n`);
    expect(await c.reply(10_000)).toMatch(/^552 5\.3\.4 .*Header section/);
    c.end();
    await nothingKept();
  });

  it('keeps nothing from a client that vanishes mid-DATA', async () => {
    const c = new RawClient(mx.port);
    await c.openData();
    c.write(`Subject: half\r\n\r\n${'partial line\r\n'.repeat(200)}`);
    await sleep(100);
    c.destroy();
    await sleep(300);
    await nothingKept();
  });

  it('answers malformed commands, pipelined garbage and HTTP on the SMTP port without crashing', async () => {
    const c = new RawClient(mx.port);
    expect(await c.reply()).toMatch(/^220 /);
    c.write('EHLO client.example\r\n');
    const ehlo = await c.reply();
    expect(ehlo).toMatch(/PIPELINING/);
    expect(ehlo).toMatch(/8BITMIME/);
    expect(ehlo).toMatch(/SMTPUTF8/);
    expect(ehlo).toMatch(/SIZE 1048576/);
    c.write('MAIL FROM:<broken\r\nRCPT TO:<>\r\nXYZZY\r\nMAIL FROM:<a@remote.example> SIZE=999999999\r\n');
    expect(await c.reply()).toMatch(/^5\d\d /);
    expect(await c.reply()).toMatch(/^5\d\d /);
    expect(await c.reply()).toMatch(/^5\d\d /);
    expect(await c.reply()).toMatch(/^552 /);
    c.write('QUIT\r\n');
    expect(await c.reply()).toMatch(/^221 /);
    c.end();

    const h = new RawClient(mx.port);
    h.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const reply = await h.reply();
    expect(reply).toMatch(/^(421|5\d\d|554)/);
    h.destroy();
    await nothingKept();
  });
});
