// Outbound throughput: N queued messages of S bytes delivered to a local
// SMTP sink (smtp-server on loopback, accepting everything), by the Sealpost
// spooler and by Postfix on the same machine in the same run.
//
//   node bin/run-ts.js bench/spooler.ts [--messages 5000] [--size 10240] [--concurrency 20]
//     [--processes 2] [--no-postfix]
//
// Both start with every message already queued and are timed from "start
// delivering" to the sink's last 250:
//  - Sealpost: the messages are blobs + QUEUE_OUTBOUND jobs in Redis before
//    the spooler starts; timed from startSpooler() on. Two routes: through a
//    relay (smarthost, like Postfix's relayhost) and through MX lookups at a
//    loopback DNS server (the full routing path, MTA-STS/TLS-RPT lookups
//    included).
//  - Postfix: a throwaway instance (own config and queue directories under
//    a temp dir, relayhost = the sink) receives the messages over SMTP while
//    `defer_transports = smtp` holds them in its queue; then the hold is
//    lifted and the queue flushed, and that is timed.
// Both use the same per-destination concurrency (Postfix's default 20).
// With --processes N > 1 a third row runs the relay route with N spooler
// processes on the same Redis and blob directory (scale-out, as N `sealpost
// worker`s would; the per-domain limit still holds across them), each
// child started and loaded before the clock starts, then told to go.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startSpooler } from '../spooler/index.ts';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../src/core/blobs/blob-store.ts';
import { DEFAULT_RETRY_SCHEDULE_SECS } from '../src/core/config/sections/spooler.ts';
import type { SpoolerConfig } from '../src/core/config/types.ts';
import { createLogger, newMessageId } from '../src/core/log.ts';
import { startDnsDouble } from '../test/support/doubles/dns-server.ts';
import { postfixCmd, postfixUnavailable, runPostfix, type Sink, startSink } from './spooler-peers.ts';

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    size: { type: 'string', default: '10240' },
    concurrency: { type: 'string', default: '20' },
    processes: { type: 'string', default: '2' },
    'no-postfix': { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});
const N = Number(args.messages);
const SIZE = Number(args.size);
const CONCURRENCY = Number(args.concurrency);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function message(i: number): Buffer {
  const head =
    `From: Bench <bench@sealpost.test>\r\nTo: <r${i}@bench.test>\r\nSubject: bench ${i}\r\n` +
    `Message-ID: <bench.${i}.${randomBytes(4).toString('hex')}@sealpost.test>\r\nDate: ${new Date().toUTCString()}\r\n` +
    'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n';
  const line = `${'x'.repeat(76)}\r\n`;
  let body = '';
  while (head.length + body.length + line.length <= SIZE) body += line;
  const pad = 'y'.repeat(Math.max(0, SIZE - head.length - body.length - 2));
  return Buffer.from(`${head}${body}${pad}\r\n`);
}

interface ChildSetup {
  prefix: string;
  dir: string;
  dns: { host: string; port: number };
  config: SpoolerConfig;
}

/** One spooler on the run's Redis prefix and blob directory (in this process or in a child). */
async function spoolerOn(setup: ChildSetup, redis: () => Redis) {
  return startSpooler({
    redis,
    prefix: setup.prefix,
    blobs: new BlobStore(setup.dir),
    resolver: { servers: [setup.dns] },
    config: setup.config,
    logger: createLogger({ level: 'error' }),
    daneProbe: { name: 'bench.test', type: 'MX' },
  });
}

/** Child: loaded, waits for "go" on stdin, runs a spooler until SIGTERM. */
async function child(setup: ChildSetup): Promise<void> {
  const connections: Redis[] = [];
  const redis = () => {
    const r = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(r);
    return r;
  };
  const lines = createInterface({ input: process.stdin });
  process.stdout.write('loaded\n');
  await new Promise((resolve) => lines.once('line', resolve));
  const spooler = await spoolerOn(setup, redis);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await spooler.close();
  await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
  process.exit(0);
}

/** Starts `n` loaded spooler children; `go()` releases them all at once, `stop()` ends them. */
async function spoolerChildren(n: number, setup: ChildSetup) {
  const children = Array.from({ length: n }, () =>
    spawn(
      process.execPath,
      [
        join(fileURLToPath(import.meta.url), '..', '..', 'bin', 'run-ts.js'),
        fileURLToPath(import.meta.url),
        '--child',
        JSON.stringify(setup),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve, reject) => {
          createInterface({ input: c.stdout }).once('line', () => resolve());
          c.once('exit', (code) => reject(new Error(`spooler child exited with ${code}`)));
        }),
    ),
  );
  return {
    go: () => {
      for (const c of children) c.stdin.write('go\n');
    },
    stop: () =>
      Promise.all(
        children.map((c) => {
          if (c.exitCode !== null) return Promise.resolve();
          const exited = new Promise((resolve) => c.once('exit', resolve));
          c.kill('SIGTERM');
          return exited;
        }),
      ),
  };
}

function spoolerConfig(over: Partial<SpoolerConfig>): SpoolerConfig {
  return {
    hostname: 'bench.sealpost.test',
    mta_sts: true,
    dane: true,
    max_attempts: 14,
    retry_schedule_secs: DEFAULT_RETRY_SCHEDULE_SECS,
    dkim: [],
    tlsrpt: { enabled: false, org_name: 'bench', contact: 'postmaster@sealpost.test' },
    lifetime_secs: 432_000,
    delay_dsn_after_secs: 14_400,
    concurrency: CONCURRENCY,
    per_domain_concurrency: CONCURRENCY,
    connect_timeout_secs: 30,
    command_timeout_secs: 60,
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
      max_report_bytes: 1,
    },
    ...over,
  };
}

/** Seconds to the sink's last 250, and this process's CPU per message meanwhile (µs). */
async function runSealpost(
  sink: Sink,
  route: 'relay' | 'mx',
  count = N,
  processes = 1,
): Promise<{ seconds: number; cpuUs: number }> {
  const prefix = `bench-spooler-${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-spooler-'));
  const blobs = new BlobStore(dir);
  const dns = await startDnsDouble({
    'bench.test': { MX: [{ preference: 10, exchange: 'sink.bench.test' }] },
    'sink.bench.test': { A: ['127.0.0.1'] },
  });
  const connections: Redis[] = [];
  const redis = () => {
    const r = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(r);
    return r;
  };
  const admin = redis();
  const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: admin, prefix });
  try {
    for (let i = 0; i < count; i += 500) {
      const batch = [];
      for (let j = i; j < Math.min(count, i + 500); j++) {
        const { key } = await blobs.putContent(message(j));
        const msgid = newMessageId();
        batch.push({
          name: 'submission',
          data: {
            msgid,
            from: 'bench@sealpost.test',
            to: [`r${j}@bench.test`],
            blobKey: key,
            kind: 'submission' as const,
            createdAt: Date.now(),
          },
          opts: { jobId: msgid, removeOnComplete: true },
        });
      }
      await intake.addBulk(batch);
    }
    sink.reset();
    const config = spoolerConfig(
      route === 'relay'
        ? { relay: { host: '127.0.0.1', port: sink.port, tls: 'opportunistic' }, dane: false, mta_sts: false }
        : { smtp_port: sink.port },
    );
    const setup: ChildSetup = { prefix, dir, dns: { host: dns.host, port: dns.port }, config };
    if (processes > 1) {
      // The sessions are shared out: N processes together open as many as one would (and Postfix does).
      const share = Math.ceil(CONCURRENCY / processes);
      const children = await spoolerChildren(processes, {
        ...setup,
        config: { ...config, concurrency: share },
      });
      try {
        const t0 = performance.now();
        children.go();
        const last = await sink.waitFor(count, 30 * 60_000);
        return { seconds: (last - t0) / 1000, cpuUs: Number.NaN };
      } finally {
        await children.stop();
      }
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const spooler = await spoolerOn(setup, redis);
    const last = await sink.waitFor(count, 30 * 60_000);
    const cpu = process.cpuUsage(cpu0);
    await spooler.close();
    return { seconds: (last - t0) / 1000, cpuUs: (cpu.user + cpu.system) / count };
  } finally {
    await intake.close();
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await admin.del(...keys);
    } while (cursor !== '0');
    await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
    await dns.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (args.child) {
  await child(JSON.parse(args.child) as ChildSetup);
}
const PROCESSES = Number(args.processes);
const sink = await startSink();
const rows: { system: string; seconds: number; note: string }[] = [];
try {
  // Warm-up (not reported): JIT, Redis and the sink see some traffic first.
  await runSealpost(sink, 'mx', Math.min(300, N));
  // CPU per message: the spooler's one event loop is what limits it on a busy machine.
  const relay = await runSealpost(sink, 'relay');
  rows.push({
    system: 'sealpost spooler (relay)',
    seconds: relay.seconds,
    note: `smarthost = sink, like relayhost; ${relay.cpuUs.toFixed(0)} µs CPU/msg`,
  });
  const mx = await runSealpost(sink, 'mx');
  rows.push({
    system: 'sealpost spooler (MX route)',
    seconds: mx.seconds,
    note: `MX/MTA-STS lookups via loopback DNS; ${mx.cpuUs.toFixed(0)} µs CPU/msg`,
  });
  if (PROCESSES > 1) {
    const many = await runSealpost(sink, 'relay', N, PROCESSES);
    rows.push({
      system: `sealpost spooler ×${PROCESSES} (relay)`,
      seconds: many.seconds,
      note: `${PROCESSES} spooler processes on one Redis (scale-out), ${Math.ceil(CONCURRENCY / PROCESSES)} sessions each`,
    });
  }
  const unavailable = args['no-postfix'] ? 'skipped (--no-postfix)' : postfixUnavailable();
  if (unavailable) {
    console.log(`Postfix: not run — ${unavailable}`);
  } else {
    const pf = await runPostfix(sink, { count: N, concurrency: CONCURRENCY, message });
    rows.push({
      system: `postfix ${postfixCmd(['postconf', '-d', '-h', 'mail_version']).trim()}`,
      seconds: pf.seconds,
      note: `relayhost = sink; SMTP injection took ${pf.injectSeconds.toFixed(1)} s (not timed)`,
    });
  }
} finally {
  await sink.close();
}

console.log(
  `\n${N} messages of ${SIZE} bytes, queued, delivered to ${sink.kind} on loopback; per-destination concurrency ${CONCURRENCY}\n`,
);
console.log(`${'system'.padEnd(30)} ${'seconds'.padStart(8)} ${'msgs/s'.padStart(8)}  note`);
for (const r of rows) {
  console.log(
    `${r.system.padEnd(30)} ${r.seconds.toFixed(2).padStart(8)} ${(N / r.seconds).toFixed(0).padStart(8)}  ${r.note}`,
  );
}
const postfixRow = rows.find((r) => r.system.startsWith('postfix'));
if (postfixRow) {
  for (const r of rows.filter((x) => x !== postfixRow)) {
    console.log(`ratio ${r.system} / postfix: ${(postfixRow.seconds / r.seconds).toFixed(2)}×`);
  }
}
process.exit(0);
