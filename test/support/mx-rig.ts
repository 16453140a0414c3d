// A real MX (startMx) on a random loopback port over a devnet with one
// mailbox, real Redis (random prefix) for the queue and the cost guard, a
// logger whose lines the test reads, and a line-level SMTP client that sees
// every reply (also a second reply to one command, such as a 421 after an
// error) and the moment the server closes. Everything is removed after each test.
import { randomBytes } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { FlowProducer } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import type { GroupCommit } from '../../delivery/intake/group-commit.ts';
import { FsBlobStore } from '../../src/core/blobs/blob-store.ts';
import { CostGuard, type PublicationLimits } from '../../src/core/limits/cost-guard.ts';
import { SealpostMetrics } from '../../src/core/metrics/index.ts';
import type { ErrorLimits } from '../../src/edge/mx/error-limit.ts';
import { type MxOptions, startMx } from '../../src/edge/mx/mx-server.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startTestChain } from './devnet.ts';
import { prepareMailChain } from './mail-chain.ts';
import { tempDir } from './temp-dir.ts';

export const MX_DOMAIN = 'mail.test';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

/** Captured log lines, parsed. */
export class LogLines {
  readonly lines: Record<string, unknown>[] = [];
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      for (const l of chunk.toString().split('\n')) if (l.trim()) this.lines.push(JSON.parse(l));
      done();
    },
  });

  withMsg(msg: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.msg === msg);
  }
}

export interface MxRig {
  port: number;
  /** `<wallet>@mail.test` of a mailbox that takes mail from anyone. */
  rcpt: string;
  wallet: string;
  logs: LogLines;
  metrics: SealpostMetrics;
  redis: Redis;
  /** The FlowProducer's own connection (disconnect it to take Redis away from acceptance only). */
  flowRedis: Redis;
  blobs: FsBlobStore;
  prefix: string;
}

export async function startMxRig(
  opts: {
    errorLimits?: ErrorLimits;
    logLevel?: string;
    limits?: Partial<PublicationLimits>;
    /** The group commit acceptance joins (default: the FlowProducer's shared one). */
    commit?: (flow: FlowProducer) => GroupCommit;
    /** More MX options (session limits and the like). */
    mx?: Partial<
      Pick<MxOptions, 'maxConnections' | 'maxSessionMs' | 'maxConnectionsPerIp' | 'socketTimeoutMs'>
    >;
    /** The blob store's directory (default a new temp dir). */
    blobDir?: string;
  } = {},
): Promise<MxRig> {
  const chain = await startTestChain();
  const mail = await prepareMailChain(chain, MX_DOMAIN);
  const owner = await mail.mailbox();
  const prefix = `sptest-mx-${randomBytes(6).toString('hex')}`;
  const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  const flowRedis = new Redis('redis://127.0.0.1:6379', {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  flowRedis.on('error', () => {});
  const flow = new FlowProducer({ connection: flowRedis, prefix });
  const blobs = new FsBlobStore(opts.blobDir ?? join(tempDir(), 'blobs'));
  const off = { limit: 0, windowMs: 3_600_000 };
  const guard = new CostGuard({
    redis,
    prefix,
    limits: { sender: off, recipient: off, overall: off, nullSender: off, ...opts.limits },
    localDomains: [MX_DOMAIN],
  });
  const logs = new LogLines();
  const metrics = new SealpostMetrics({ processMetrics: false });
  const mx = await startMx({
    host: '127.0.0.1',
    port: 0,
    hostname: 'mx.mail.test',
    policy: { localDomains: [MX_DOMAIN] },
    maxMessageBytes: 1024 * 1024,
    maxRecipients: 1000,
    maxConnectionsPerIp: 50,
    socketTimeoutMs: 10_000,
    chain: new ChainView({ connection: chain.connection, programId: chain.programId }),
    accept: { blobs, flow, attempts: 3, backoffMs: 1000, commit: opts.commit?.(flow) },
    costGuard: guard,
    errorLimits: opts.errorLimits,
    metrics,
    logger: pino({ level: opts.logLevel ?? 'info' }, logs.stream),
    ...opts.mx,
  });
  cleanups.push(async () => {
    await mx.close(100);
    await flow.close().catch(() => {});
    flowRedis.disconnect();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  const wallet = owner.publicKey.toBase58();
  return {
    port: mx.port,
    rcpt: `${wallet}@${MX_DOMAIN}`,
    wallet,
    logs,
    metrics,
    redis,
    flowRedis,
    blobs,
    prefix,
  };
}

export interface Timed {
  code: number;
  text: string;
  ms: number;
}

/** Sees every reply line; `cmd` resolves with the next complete reply and how long it took. */
export class LineClient {
  private buf = '';
  private readonly replies: { code: number; text: string }[] = [];
  private waiter: (() => void) | undefined;
  readonly closed: Promise<void>;
  isClosed = false;

  private constructor(private readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf += d.toString('utf8');
      for (let i = this.buf.indexOf('\r\n'); i >= 0; i = this.buf.indexOf('\r\n')) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        const m = /^(\d{3}) (.*)$/.exec(line);
        if (m) this.replies.push({ code: Number(m[1]), text: m[2] ?? '' });
      }
      this.waiter?.();
    });
    this.closed = new Promise((resolve) =>
      sock.once('close', () => {
        this.isClosed = true;
        resolve();
        this.waiter?.();
      }),
    );
    sock.on('error', () => {});
  }

  static async open(port: number, opts: { tls?: boolean } = {}): Promise<LineClient> {
    const sock = opts.tls
      ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false })
      : netConnect(port, '127.0.0.1');
    const client = new LineClient(sock);
    const greeting = await client.next();
    if (greeting.code !== 220) throw new Error(`greeting ${greeting.code} ${greeting.text}`);
    return client;
  }

  /** The next reply not read yet. */
  async next(): Promise<{ code: number; text: string }> {
    const started = performance.now();
    while (this.replies.length === 0) {
      if (this.isClosed) throw new Error('connection closed');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
      if (performance.now() - started > 20_000) throw new Error('no reply in 20 s');
    }
    return this.replies.shift() as { code: number; text: string };
  }

  async cmd(line: string): Promise<Timed> {
    const started = performance.now();
    this.sock.write(`${line}\r\n`);
    const reply = await this.next();
    return { ...reply, ms: performance.now() - started };
  }

  /** Writes many lines at once (pipelining, or a flood). */
  write(lines: string[]): void {
    this.sock.write(lines.map((l) => `${l}\r\n`).join(''));
  }

  end(): void {
    this.sock.destroy();
  }
}
