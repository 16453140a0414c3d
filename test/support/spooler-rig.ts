// A running outbound spooler for tests: real Redis (random prefix, removed
// afterwards), a blob store in a temp dir, a DNS double as the resolver,
// optionally a SQLite store for TLS-RPT, and a clock the test can move.
// Messages go in the way production puts them in: an OutboundJobData on
// QUEUE_OUTBOUND pointing at a blob.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  type DomainJobData,
  QUEUE_SPOOLER_DELIVER,
  type Spooler,
  type SpoolerOptions,
  startSpooler,
} from '../../spooler/index.ts';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../src/contracts/inbound-jobs.ts';
import { domainJobId } from '../../src/contracts/outbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { DEFAULT_RETRY_SCHEDULE_SECS } from '../../src/core/config/sections/spooler.ts';
import type { SpoolerConfig } from '../../src/core/config/types.ts';
import { createLogger, newMessageId } from '../../src/core/log.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { type DnsDouble, type DnsZone, startDnsDouble } from './doubles/dns-server.ts';
import { tempDir } from './temp-dir.ts';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The DNSSEC self-test asks this name; the rig marks it validated unless told otherwise. */
export const PROBE_NAME = 'dnssec-probe.test';

export function spoolerConfig(over: Partial<SpoolerConfig> = {}): SpoolerConfig {
  return {
    hostname: 'out.sealpost.test',
    mta_sts: true,
    dane: true,
    max_attempts: 14,
    retry_schedule_secs: [...DEFAULT_RETRY_SCHEDULE_SECS],
    dkim: [],
    tlsrpt: { enabled: false, org_name: 'out.sealpost.test', contact: 'postmaster@sealpost.test' },
    lifetime_secs: 5 * 86_400,
    delay_dsn_after_secs: 4 * 3_600,
    concurrency: 8,
    per_domain_concurrency: 4,
    connect_timeout_secs: 10,
    command_timeout_secs: 20,
    smtp_port: 25,
    trusted_resolvers: [],
    dane_probe_name: '.',
    dane_probe_type: 'DNSKEY',
    mta_sts_timeout_secs: 20,
    dmarc_rua_ingest: {
      enabled: false,
      dmarc_retention_days: 90,
      report_retention_days: 90,
      address: 'postmaster@sealpost.test',
      max_report_bytes: 20 * 1024 * 1024,
    },
    ...over,
  };
}

export interface RigOptions {
  config?: Partial<SpoolerConfig>;
  zone?: DnsZone;
  /** Mark the self-test probe validated (default true). */
  validatingResolver?: boolean;
  withStore?: boolean;
  extra?: Partial<SpoolerOptions>;
  /** Start the spooler now (default true); otherwise `restart()` starts it. */
  start?: boolean;
}

export interface SpoolerRig {
  dns: DnsDouble;
  /** Everything startSpooler needs, as the rig builds it (for a child process). */
  options(extra?: Partial<SpoolerOptions>): SpoolerOptions;
  blobDir: string;
  /** A plain connection to the test's Redis (keys under `prefix`). */
  redis: Redis;
  spooler: Spooler;
  prefix: string;
  blobs: BlobStore;
  store?: Store;
  intake: Queue<OutboundJobData>;
  deliver: Queue<DomainJobData>;
  config: SpoolerConfig;
  clock: { now(): number; advance(ms: number): void };
  /** Queues a message for the spooler; returns its msgid. */
  send(msg: {
    from: string;
    to: string[];
    raw?: string | Buffer;
    kind?: OutboundJobData['kind'];
    dsn?: OutboundJobData['dsn'];
  }): Promise<string>;
  /** Waits until the domain job of a message has completed; returns its data. */
  done(msgid: string, domain: string, timeoutMs?: number): Promise<DomainJobData>;
  /** Waits until `probe` holds for the domain job's data (while it is retried). */
  jobWhere(
    msgid: string,
    domain: string,
    probe: (d: DomainJobData) => boolean,
    timeoutMs?: number,
  ): Promise<DomainJobData>;
  /** Makes the next retry of a delayed domain job due now. */
  promote(msgid: string, domain: string): Promise<void>;
  /** Stops the spooler if running (Redis state and the blob store stay) and starts a new one. */
  restart(extra?: Partial<SpoolerOptions>): Promise<void>;
  close(): Promise<void>;
}

export function testMessage(subject: string, from = 'ann@sealpost.test'): string {
  return (
    `From: Ann <${from}>\r\nTo: someone@remote.test\r\nSubject: ${subject}\r\n` +
    `Message-ID: <${subject.replace(/\W/g, '')}.${randomBytes(4).toString('hex')}@sealpost.test>\r\n` +
    `Date: ${new Date().toUTCString()}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello — ${subject}\r\n.leading dot\r\n`
  );
}

export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(40);
  }
}

export async function startSpoolerRig(opts: RigOptions = {}): Promise<SpoolerRig> {
  const prefix = `spooler-test-${randomBytes(5).toString('hex')}`;
  const dir = tempDir('sealpost-spooler-');
  const blobs = new BlobStore(dir);
  const dns = await startDnsDouble(opts.zone ?? {});
  dns.set(PROBE_NAME, 'A', ['127.0.0.1']);
  dns.setAd(PROBE_NAME, opts.validatingResolver ?? true);
  const store = opts.withStore ? await openStore({ url: 'sqlite:spooler.sqlite', dataDir: dir }) : undefined;
  let offset = 0;
  const clock = {
    now: () => Date.now() + offset,
    advance: (ms: number) => {
      offset += ms;
    },
  };
  const config = spoolerConfig(opts.config);
  const redises: Redis[] = [];
  const redis = () => {
    const r = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    redises.push(r);
    return r;
  };
  const admin = redis();
  const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: admin, prefix });
  const deliver = new Queue<DomainJobData>(QUEUE_SPOOLER_DELIVER, { connection: admin, prefix });
  const logger = createLogger({ level: (process.env.SPOOLER_TEST_LOG as 'info' | undefined) ?? 'silent' });
  const options = (extra?: Partial<SpoolerOptions>): SpoolerOptions => ({
    redis,
    prefix,
    blobs,
    resolver: { servers: [{ host: dns.host, port: dns.port }] },
    config,
    logger,
    clock: clock.now,
    db: store?.db,
    daneProbe: { name: PROBE_NAME, type: 'A' },
    dnsTimeoutMs: 1500,
    ...opts.extra,
    ...extra,
  });
  let spooler: Spooler | undefined = opts.start === false ? undefined : await startSpooler(options());

  const rig: SpoolerRig = {
    dns,
    options,
    blobDir: dir,
    redis: admin,
    get spooler() {
      if (!spooler) throw new Error('the spooler is not started');
      return spooler;
    },
    prefix,
    blobs,
    store,
    intake,
    deliver,
    config,
    clock,
    async send(msg) {
      const msgid = newMessageId();
      const raw =
        typeof msg.raw === 'string' || msg.raw === undefined
          ? Buffer.from(msg.raw ?? testMessage(msgid))
          : msg.raw;
      const { key } = await blobs.putContent(raw);
      await intake.add(
        'submission',
        {
          msgid,
          from: msg.from,
          to: msg.to,
          blobKey: key,
          kind: msg.kind ?? 'submission',
          createdAt: clock.now(),
          ...(msg.dsn ? { dsn: msg.dsn } : {}),
        },
        { jobId: msgid },
      );
      return msgid;
    },
    async done(msgid, domain, timeoutMs = 20_000) {
      const id = domainJobId(msgid, domain);
      return eventually(async () => {
        const job = (await deliver.getJob(id)) as Job<DomainJobData> | undefined;
        if (!job || (await job.getState()) !== 'completed') return undefined;
        // Read again once completed: a copy read before the job finished may predate its last data.
        return ((await deliver.getJob(id)) as Job<DomainJobData>).data;
      }, timeoutMs);
    },
    async jobWhere(msgid, domain, probe, timeoutMs = 20_000) {
      const id = domainJobId(msgid, domain);
      return eventually(async () => {
        const job = (await deliver.getJob(id)) as Job<DomainJobData> | undefined;
        return job && probe(job.data) ? job.data : undefined;
      }, timeoutMs);
    },
    async promote(msgid, domain) {
      const job = await deliver.getJob(domainJobId(msgid, domain));
      if (job && (await job.isDelayed())) await job.promote();
    },
    async restart(extra) {
      await spooler?.close();
      spooler = await startSpooler(options(extra));
    },
    async close() {
      await spooler?.close();
      await intake.close();
      await deliver.close();
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await admin.del(...keys);
      } while (cursor !== '0');
      await Promise.all(redises.map((r) => r.quit().catch(() => r.disconnect())));
      await store?.close();
      await dns.close();
    },
  };
  return rig;
}
