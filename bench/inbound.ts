// Inbound throughput: many concurrent SMTP clients deliver 10 KB messages to
// the MX of a full local stack (`sealpost dev` in-process: devnet, pind, MX,
// pipeline workers, Redis). Reports
//   accepted  — messages answered 250 per second (the MX edge: spool fsync + queue)
//   end-to-end — messages per second from the first 250 to the last Email
//                account confirmed on devnet, and per-message latency from
//                its 250 to its delivery job completing (Email confirmed and stored).
//
//   npm run bench:inbound -- [--messages 1000] [--clients 50] [--recipients 50] [--slot-ms 400] [--concurrency 128] [--pipeline-sendmail true|false]
//
// Load shape: `clients` SMTP sessions in parallel, each reusing its session
// for its share of messages (so smtp-server's fixed 100 ms greeting delay is
// paid once per client), recipients spread round-robin.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Keypair, LAMPORTS_PER_SOL, sendAndConfirmTransaction, Transaction } from '@solana/web3.js';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { createMailboxInstruction } from '../chain/client/index.ts';
import { QUEUE_DELIVER } from '../src/contracts/inbound-jobs.ts';
import { createConnection } from '../src/core/chain-rpc.ts';
import { loadConfig } from '../src/core/config/index.ts';
import { startDevStack } from '../src/run/dev/dev-stack.ts';
import { dropRedisPrefix } from './harness/stack.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '50' },
    recipients: { type: 'string', default: '50' },
    'slot-ms': { type: 'string', default: '400' },
    concurrency: { type: 'string' },
    'pipeline-sendmail': { type: 'string' },
  },
});
const MESSAGES = Number(values.messages);
const CLIENTS = Number(values.clients);
const RECIPIENTS = Number(values.recipients);
const SLOT_MS = Number(values['slot-ms']);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), 'sealpost-bench-inbound-'));
const stack = await startDevStack({
  dataDir,
  rpcPort: 0,
  randomPorts: true,
  slotMs: SLOT_MS,
  workerConcurrency: values.concurrency === undefined ? undefined : Number(values.concurrency),
  // Every client connects from loopback: lift the per-IP connection cap above the client count.
  configPatch: (c) => {
    c.smtp.max_connections_per_ip = CLIENTS + 10;
    if (values['pipeline-sendmail'] !== undefined)
      c.chain.pipeline_sendmail = values['pipeline-sendmail'] === 'true';
  },
  logger: pino({ level: 'warn' }),
});
try {
  const s = stack.summary;
  const config = loadConfig(s.config_file);
  const mx = s.components.find((c) => c.name.startsWith('smtp mx'));
  if (!mx) throw new Error('no MX in the dev stack');
  const mxPort = Number(new URL(mx.url).port);
  const connection = createConnection(s.chain.rpc_url);

  // Recipient mailboxes.
  const wallets: Keypair[] = [];
  for (let i = 0; i < RECIPIENTS; i++) wallets.push(Keypair.generate());
  await Promise.all(
    wallets.map(async (w) => {
      const sig = await connection.requestAirdrop(w.publicKey, LAMPORTS_PER_SOL);
      const latest = await connection.getLatestBlockhash('confirmed');
      await connection.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
      await sendAndConfirmTransaction(
        connection,
        new Transaction().add(
          createMailboxInstruction({ programId: s.program_id, owner: w.publicKey, domain: s.domain }),
        ),
        [w],
        { commitment: 'confirmed' },
      );
    }),
  );

  const eventsRedis = new Redis(s.redis.url, { maxRetriesPerRequest: null });
  const events = new QueueEvents(QUEUE_DELIVER, {
    connection: eventsRedis,
    prefix: config.redis.prefix,
  });
  await events.waitUntilReady();
  const acceptedAt = new Map<string, number>();
  const latencies: number[] = [];
  let lastDone = 0;
  let failed = 0;
  const allDone = new Promise<void>((resolve) => {
    events.on('completed', ({ jobId }) => {
      const msgid = jobId.split('.')[0] ?? '';
      const t = acceptedAt.get(msgid);
      if (t !== undefined) {
        lastDone = performance.now();
        latencies.push(lastDone - t);
      }
      if (latencies.length + failed >= MESSAGES) resolve();
    });
    events.on('failed', () => {
      failed++;
      if (latencies.length + failed >= MESSAGES) resolve();
    });
  });

  const body = `${'0123456789abcdef'.repeat(60)}\r\n`.repeat(11); // ≈10.6 KB
  const perClient = Math.ceil(MESSAGES / CLIENTS);
  const t0 = performance.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: mxPort,
        secure: false,
        ignoreTLS: true,
        pool: true,
        maxConnections: 1,
        maxMessages: Number.POSITIVE_INFINITY,
      });
      for (let i = 0; i < perClient && sent < MESSAGES; i++) {
        const n = sent++;
        const to = wallets[n % RECIPIENTS]?.publicKey.toBase58();
        const info = await transport.sendMail({
          envelope: { from: `client${c}@load.example`, to: [`${to}@${s.domain}`] },
          raw: `From: client${c}@load.example\r\nTo: ${to}@${s.domain}\r\nSubject: bench ${n}\r\n\r\n${body}`,
        });
        const msgid = info.response.split(' ').pop() ?? '';
        acceptedAt.set(msgid, performance.now());
      }
      transport.close();
    }),
  );
  const acceptSecs = (performance.now() - t0) / 1000;
  await allDone;
  const e2eSecs = (lastDone - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const rows = [
    [
      'load',
      `${MESSAGES} × 10 KB, ${CLIENTS} concurrent SMTP clients (sessions reused), ${RECIPIENTS} recipients, slot ${SLOT_MS} ms, worker concurrency ${values.concurrency ?? '128 (default)'}, pipeline_sendmail ${values['pipeline-sendmail'] ?? 'true (default)'}`,
    ],
    ['accepted (250)', `${(MESSAGES / acceptSecs).toFixed(1)} msg/s  (${acceptSecs.toFixed(2)} s)`],
    [
      'end-to-end (Email confirmed + stored)',
      `${(latencies.length / e2eSecs).toFixed(1)} msg/s  (${e2eSecs.toFixed(2)} s)`,
    ],
    [
      'latency 250 → confirmed',
      `p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms`,
    ],
    ['failed deliveries', String(failed)],
  ];
  for (const [k, v] of rows) process.stdout.write(`${(k ?? '').padEnd(40)} ${v}\n`);
  await events.close();
  // QueueEvents does not close a connection it was given.
  eventsRedis.disconnect();
} finally {
  const { prefix } = loadConfig(stack.summary.config_file).redis;
  await stack.close();
  // The run's queues and windows live under the stack's own prefix: leave nothing behind.
  await dropRedisPrefix(stack.summary.redis.url, prefix);
  rmSync(dataDir, { recursive: true, force: true });
}
