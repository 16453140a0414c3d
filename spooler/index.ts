// The outbound spooler: intake of QUEUE_OUTBOUND, one job per destination
// domain with its own retries and a cross-process cap on sessions per
// domain, DKIM signing of the server's own mail, MTA-STS, DANE, TLS-RPT and
// DSNs (docs/spooler.md). `startSpooler` takes every side effect as a
// parameter; `close()` stops taking jobs and waits for running sessions.
import { readFileSync } from 'node:fs';
import { FlowProducer, type Job, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import {
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
  QUEUE_SPOOL,
} from '../src/contracts/inbound-jobs.ts';
import {
  type DomainJobData,
  QUEUE_SPOOLER_DELIVER,
  QUEUE_SPOOLER_MAINT,
  TLSRPT_REPORT_JOB,
  TLSRPT_SCHEDULER_ID,
} from '../src/contracts/outbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { SpoolerConfig } from '../src/core/config/types.ts';
import type { DnsServer } from '../src/core/dns/resolver.ts';
import type { Logger } from '../src/core/log.ts';
import { holdGuard } from '../src/core/queue/hold.ts';
import { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import type { Database } from '../src/core/store/types.ts';
import { createDkimSigner, type DkimSigner } from '../src/mail/dkim-sign.ts';
import { type DaneProbe, type DaneStatus, daneSelfTest } from './dane-selftest.ts';
import { type DeliverJobDeps, processDomainJob } from './deliver-job.ts';
import { createDomainLimiter } from './domain-limiter.ts';
import { type CleanupJobData, processCleanupJob, processIntakeJob, QUEUE_SPOOLER_CLEANUP } from './intake.ts';
import type { LocalDelivery } from './local-delivery.ts';
import { createMtaSts, type MtaSts } from './mta-sts.ts';
import { createSecureDns, type SecureDns } from './secure-dns.ts';
import { createSessionCache } from './session-cache.ts';
import { redisSentLog, runTlsrptReports, type TlsrptRunSummary } from './tlsrpt-daily.ts';
import { createTlsrptRecorder, type TlsrptRecorder } from './tlsrpt-store.ts';

export {
  type DomainJobData,
  QUEUE_SPOOLER_DELIVER,
  QUEUE_SPOOLER_MAINT,
} from '../src/contracts/outbound-jobs.ts';
export { createDkimSigner, type DkimSigner } from '../src/mail/dkim-sign.ts';
export { type DaneStatus, daneSelfTest } from './dane-selftest.ts';
export { QUEUE_SPOOLER_CLEANUP } from './intake.ts';
export type { LocalDelivery } from './local-delivery.ts';

export interface SpoolerOptions {
  /** Connection factory; each BullMQ worker needs its own blocking connection. */
  redis: () => Redis;
  /** BullMQ and key prefix (`[redis] prefix`). */
  prefix: string;
  blobs: BlobStore;
  /** The resolvers to ask (`[dns] resolvers`; empty: the system's). */
  resolver: { readonly servers: readonly DnsServer[] };
  config: SpoolerConfig;
  logger: Logger;
  clock?: () => number;
  random?: () => number;
  /** The accounts store; needed for TLS-RPT (`[spooler.tlsrpt] enabled`). */
  db?: Kysely<Database>;
  /** Default: a signer over `config.dkim`. */
  dkim?: DkimSigner;
  /** CA certificates (PEM) trusted besides the system roots (`[tls] extra_ca_file`, read with readExtraCa). */
  extraCa?: string[];
  /** HTTPS port of MTA-STS policy hosts (443; tests serve elsewhere). */
  mtaStsPort?: number;
  /** Default: `[spooler] mta_sts_timeout_secs`. */
  mtaStsTimeoutMs?: number;
  tlsrptHttpsTimeoutMs?: number;
  dnsTimeoutMs?: number;
  /** Name/type asked for the DNSSEC self-test (default: `[spooler] dane_probe_name`/`_type`). */
  daneProbe?: DaneProbe;
  /** How often the self-test runs again (default 10 minutes). */
  selfTestIntervalMs?: number;
  /** Cron pattern of the daily TLS-RPT run (default 00:23 UTC). */
  tlsrptPattern?: string;
  hooks?: { afterHandoff?: DeliverJobDeps['afterHandoff'] };
  /**
   * Our own local domains and how to resolve their mailboxes: mail the
   * spooler gets for them (DSNs to local senders) goes to the inbound
   * pipeline instead of out by SMTP. Absent: everything goes out.
   */
  local?: LocalDelivery;
  /** BullMQ lock of a running job (default 60 s): how soon a crashed process's jobs run again. */
  lockDurationMs?: number;
}

export interface SpoolerHealth {
  dane: DaneStatus;
  mtaSts: { enabled: boolean };
  tlsrpt: { enabled: boolean };
  relay: string | null;
}

export interface Spooler {
  health(): SpoolerHealth;
  daneStatus(): DaneStatus;
  /** Runs the TLS-RPT reports now (what the daily job does; with `day`, only that UTC day). */
  runTlsrptReports(now?: number, opts?: { day?: number }): Promise<TlsrptRunSummary>;
  /** Runs the DNSSEC self-test again. */
  recheckDane(): Promise<DaneStatus>;
  /** Waits for queued TLS-RPT row writes and MTA-STS refreshes (tests). */
  settled(): Promise<void>;
  readonly dns: SecureDns;
  close(): Promise<void>;
}

export async function startSpooler(opts: SpoolerOptions): Promise<Spooler> {
  const config = opts.config;
  const now = opts.clock ?? Date.now;
  const random = opts.random ?? Math.random;
  const log = opts.logger.child({ component: 'spooler' });
  const dkim = opts.dkim ?? createDkimSigner(config.dkim, { now });
  if (config.tlsrpt.enabled && !opts.db)
    throw new Error('[spooler.tlsrpt] is enabled but no store was given');
  const relayPassword = config.relay?.password_file
    ? readFileSync(config.relay.password_file, 'utf8').replace(/\r?\n$/, '')
    : undefined;

  const connections: Redis[] = [];
  const conn = () => {
    const c = opts.redis();
    connections.push(c);
    return c;
  };
  const shared = conn();
  const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: shared, prefix: opts.prefix });
  const cleanupQueue = new Queue<CleanupJobData>(QUEUE_SPOOLER_CLEANUP, {
    connection: shared,
    prefix: opts.prefix,
  });
  const maintQueue = new Queue(QUEUE_SPOOLER_MAINT, { connection: shared, prefix: opts.prefix });
  const deliverQueue = new Queue<DomainJobData>(QUEUE_SPOOLER_DELIVER, {
    connection: shared,
    prefix: opts.prefix,
  });
  const flow = new FlowProducer({ connection: shared, prefix: opts.prefix });
  const spoolQueue = new Queue(QUEUE_SPOOL, { connection: shared, prefix: opts.prefix });
  const pipelineDeliver = new Queue(QUEUE_DELIVER, { connection: shared, prefix: opts.prefix });

  const dns = createSecureDns({
    servers: opts.resolver.servers,
    trusted: config.trusted_resolvers,
    timeoutMs: opts.dnsTimeoutMs,
    now,
  });
  const selfTest = () =>
    daneSelfTest(dns, {
      enabled: config.dane,
      probe: opts.daneProbe ?? { name: config.dane_probe_name, type: config.dane_probe_type },
      now,
      timeoutMs: opts.dnsTimeoutMs,
    });
  let dane = await selfTest();
  if (dane.inEffect) log.info({ resolvers: dane.resolvers }, `DANE in effect: ${dane.reason}`);
  else if (dane.enabled) log.warn({ resolvers: dane.resolvers }, `DANE not in effect: ${dane.reason}`);
  const recheck = setInterval(() => {
    void selfTest().then((s) => {
      if (s.inEffect !== dane.inEffect)
        log.warn({ inEffect: s.inEffect }, `DANE status changed: ${s.reason}`);
      dane = s;
    });
  }, opts.selfTestIntervalMs ?? 600_000);
  recheck.unref();

  const mtaSts: MtaSts | null = config.mta_sts
    ? createMtaSts({
        redis: shared,
        prefix: opts.prefix,
        dns,
        now,
        port: opts.mtaStsPort,
        extraCa: opts.extraCa,
        timeoutMs: opts.mtaStsTimeoutMs ?? config.mta_sts_timeout_secs * 1000,
        logger: log,
      })
    : null;
  const tlsrpt: TlsrptRecorder | null =
    config.tlsrpt.enabled && opts.db ? createTlsrptRecorder(opts.db, now, log) : null;

  // What the spooler still owes, outside Redis (src/core/store/outbound-ledger.ts); without a store Redis alone holds it.
  const ledger = opts.db ? new OutboundLedger(opts.db) : null;
  const sessions = createSessionCache();
  const limiter = createDomainLimiter(shared, opts.prefix, config.per_domain_concurrency);
  const deliverDeps: DeliverJobDeps = {
    attempt: {
      dns,
      config,
      mtaSts,
      daneInEffect: () => dane.inEffect,
      tlsrpt,
      extraCa: opts.extraCa,
      relayPassword,
      sessions,
      random,
      now,
      logger: log,
    },
    limiter,
    blobs: opts.blobs,
    dsn: { blobs: opts.blobs, intake, hostname: config.hostname, now, ledger },
    ledger,
    logger: log,
    afterHandoff: opts.hooks?.afterHandoff,
  };
  const tlsrptDeps = () => ({
    db: opts.db as Kysely<Database>,
    dns,
    blobs: opts.blobs,
    intake,
    config,
    dkim,
    extraCa: opts.extraCa,
    httpsTimeoutMs: opts.tlsrptHttpsTimeoutMs,
    logger: log,
    sentLog: redisSentLog(shared, opts.prefix),
  });

  // A crashed process's jobs come back within seconds and are re-run (their
  // data says what is already done), however often that happens.
  const lockDuration = opts.lockDurationMs ?? 60_000;
  const common = {
    prefix: opts.prefix,
    lockDuration,
    stalledInterval: Math.min(5_000, lockDuration),
    maxStalledCount: 1_000_000,
  };
  const workers = [
    new Worker<OutboundJobData>(
      QUEUE_OUTBOUND,
      // Jobs the operator holds (sealpost queue hold) are delayed without running (src/core/queue/hold.ts).
      holdGuard(shared, opts.prefix, (job: Job<OutboundJobData>, token) =>
        processIntakeJob(
          {
            flow,
            deliver: deliverQueue,
            cleanup: cleanupQueue,
            blobs: opts.blobs,
            dkim,
            logger: log,
            now,
            ledger,
            local: opts.local
              ? { local: opts.local, flow, spool: spoolQueue, deliver: pipelineDeliver }
              : undefined,
          },
          job,
          token,
        ),
      ),
      { ...common, connection: conn(), concurrency: 8 },
    ),
    new Worker<DomainJobData>(
      QUEUE_SPOOLER_DELIVER,
      holdGuard(shared, opts.prefix, (job: Job<DomainJobData>, token) =>
        processDomainJob(deliverDeps, job, token),
      ),
      {
        ...common,
        connection: conn(),
        concurrency: config.concurrency,
      },
    ),
    new Worker<CleanupJobData>(QUEUE_SPOOLER_CLEANUP, (job) => processCleanupJob(opts.blobs, job, ledger), {
      ...common,
      connection: conn(),
      concurrency: 4,
    }),
    new Worker(
      QUEUE_SPOOLER_MAINT,
      async (job) =>
        job.name === TLSRPT_REPORT_JOB && opts.db ? runTlsrptReports(tlsrptDeps(), now()) : null,
      { ...common, connection: conn(), concurrency: 1 },
    ),
  ];
  for (const w of workers) {
    w.on('error', (err) => log.warn({ queue: w.name, err: err.message }, 'spooler worker error'));
    w.on('failed', (job, err) =>
      log.error({ queue: w.name, jobId: job?.id, err: err.message }, 'spooler job failed'),
    );
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  if (config.tlsrpt.enabled) {
    await maintQueue.upsertJobScheduler(
      TLSRPT_SCHEDULER_ID,
      { pattern: opts.tlsrptPattern ?? '23 0 * * *', tz: 'UTC' },
      { name: TLSRPT_REPORT_JOB, data: {}, opts: { removeOnComplete: 30, removeOnFail: 100 } },
    );
  } else {
    await maintQueue.removeJobScheduler(TLSRPT_SCHEDULER_ID);
  }

  return {
    dns,
    health: () => ({
      dane,
      mtaSts: { enabled: config.mta_sts },
      tlsrpt: { enabled: config.tlsrpt.enabled },
      relay: config.relay ? `${config.relay.host}:${config.relay.port}` : null,
    }),
    daneStatus: () => dane,
    async recheckDane() {
      dane = await selfTest();
      return dane;
    },
    async runTlsrptReports(at, only) {
      if (!opts.db) throw new Error('TLS-RPT needs the store');
      await tlsrpt?.flush();
      return runTlsrptReports(tlsrptDeps(), at ?? now(), only);
    },
    async settled() {
      await tlsrpt?.flush();
      await mtaSts?.settled();
    },
    async close() {
      clearInterval(recheck);
      await Promise.all(workers.map((w) => w.close()));
      sessions.close();
      await limiter.close();
      await tlsrpt?.flush();
      await mtaSts?.settled();
      await flow.close();
      await Promise.all([
        intake.close(),
        cleanupQueue.close(),
        maintQueue.close(),
        deliverQueue.close(),
        spoolQueue.close(),
        pipelineDeliver.close(),
      ]);
      await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
