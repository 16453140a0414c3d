// What the cost guard adds per message at the MX, against real Redis: the
// reserve at RCPT (one script run charging the sender's, the recipient's and
// the overall window; a local sender also under each local domain) and the
// refund when a transaction ends without a 250.
//
//   npm run bench:cost-guard -- [--messages 20000] [--concurrency 50]
//
// Reports: one Redis round trip (PING) as the floor; the reserve
// sequentially (the latency one RCPT gains: mean, p50, p99); the reserve from
// `concurrency` sessions at once (throughput: µs of wall time per message);
// reserve + refund. Limits are set so nothing is refused (a refusal costs
// the same script run). Keys live under a random prefix, removed at the end.
// Redis: REDIS_URL, default redis://127.0.0.1:6379.
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { generateKeypair } from '../src/core/keys/keypair-file.ts';
import { CostGuard } from '../src/core/limits/cost-guard.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '50' },
  },
});
const MESSAGES = Number(values.messages);
const CONCURRENCY = Number(values.concurrency);
const TARGET_US = 200;

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `bench-cg-${randomBytes(6).toString('hex')}`;
const huge = { limit: 1_000_000_000, windowMs: 3_600_000 };
const guard = new CostGuard({
  redis,
  prefix,
  limits: { sender: huge, recipient: huge, overall: huge, nullSender: huge },
  localDomains: ['bench.test', 'bench2.test'],
});
const wallets = Array.from({ length: 200 }, () => generateKeypair().address);
// Two of three senders remote, one a local wallet (charged under both local domains).
const sender = (i: number) =>
  i % 3 === 2 ? `${wallets[i % wallets.length]}@bench.test` : `user${i % 5000}@remote${i % 50}.example`;
const recipient = (i: number) => wallets[(i * 7) % wallets.length] as string;

function stats(samplesNs: bigint[]): { mean: number; p50: number; p99: number } {
  const us = samplesNs.map((n) => Number(n) / 1000).sort((a, b) => a - b);
  const at = (p: number) => us[Math.min(us.length - 1, Math.floor(p * us.length))] ?? Number.NaN;
  return { mean: us.reduce((a, b) => a + b, 0) / us.length, p50: at(0.5), p99: at(0.99) };
}

const fmt = (n: number) => n.toFixed(1).padStart(7);

async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<bigint[]> {
  const out: bigint[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await op(i);
    out.push(process.hrtime.bigint() - t);
  }
  return out;
}

async function cleanup(): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

try {
  // Warm-up: connection, script cache (EVALSHA), JIT.
  for (let i = 0; i < 500; i++) await guard.reserve(sender(i), recipient(i));
  const sequential = Math.max(1000, Math.floor(MESSAGES / 4));

  const ping = stats(await timed(sequential, () => redis.ping()));
  const reserve = stats(await timed(sequential, (i) => guard.reserve(sender(i), recipient(i))));
  const refund = stats(
    await timed(sequential, async (i) => {
      const held = await guard.reserve(sender(i), recipient(i));
      if (held.ok) await guard.release([held.reservation]);
    }),
  );

  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < MESSAGES; i = next++) {
        const held = await guard.reserve(sender(i), recipient(i));
        if (!held.ok) throw new Error('a bench window filled up');
      }
    }),
  );
  const wallNs = Number(process.hrtime.bigint() - started);
  const perMessageUs = wallNs / 1000 / MESSAGES;

  console.log(`cost guard per message against real Redis (${MESSAGES} messages, ${CONCURRENCY} sessions)`);
  console.log('                                   mean µs   p50 µs   p99 µs');
  console.log(`Redis PING (one round trip)       ${fmt(ping.mean)}  ${fmt(ping.p50)}  ${fmt(ping.p99)}`);
  console.log(
    `reserve at RCPT, sequential       ${fmt(reserve.mean)}  ${fmt(reserve.p50)}  ${fmt(reserve.p99)}`,
  );
  console.log(
    `reserve + refund, sequential      ${fmt(refund.mean)}  ${fmt(refund.p50)}  ${fmt(refund.p99)}`,
  );
  console.log(
    `reserve, ${CONCURRENCY} concurrent sessions: ${perMessageUs.toFixed(1)} µs of wall time per message ` +
      `(${Math.round(1e6 / perMessageUs)} messages/s)`,
  );
  const verdict = (us: number) => (us < TARGET_US ? 'under' : 'OVER');
  const load = loadavg()[0] ?? 0;
  console.log(
    `added per accepted message: median ${reserve.p50.toFixed(1)} µs per RCPT (${verdict(reserve.p50)} the ` +
      `${TARGET_US} µs target), ${perMessageUs.toFixed(1)} µs under load (${verdict(perMessageUs)} the target)`,
  );
  if (load > cpus().length) {
    console.log(
      `note: load average ${load.toFixed(1)} on ${cpus().length} CPUs: means and p99 include time this process ` +
        "and Redis spent waiting for a CPU; the medians and the concurrent figure are the guard's own cost",
    );
  }
} finally {
  await cleanup();
  redis.disconnect();
}
