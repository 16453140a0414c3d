// Sealpost's MX alone, run again and again against one stack: what one
// accepted message costs in CPU once the processes are warm. The MX-accept
// rows of `npm run bench` run each system once, after a short warm-up, and
// a change of a tenth of a millisecond per message is lost in their noise;
// here every run after the first is steady state and the runs show the
// spread.
//
//   npm run bench:mx -- [--runs 5] [--messages 3000] [--sessions 20] [--one-per-connection]
//                       [--blobs fs,postgres]
//
// --blobs: one stack per `[blobs] backend`, in this run, one after another
// (postgres: a schema of its own on SEALPOST_TEST_PG_URL, dropped after).
//
// The stack is the MX rows' own: `sealpost serve --no-workers --workers N`
// (N = cores) with `sealpost devnet` and `sealpost pind` as processes, the
// load from Postfix's smtp-source (installed by bench/harness/install-peers.sh).
// Each run prints messages/s and the CPU milliseconds per accepted message
// of serve's processes (supervisor and serving processes, from /proc).
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { startDrillStack } from './drill/rig.ts';
import { installPeers } from './harness/install-peers.ts';
import { processCpuMs, treePids } from './harness/proc-tree.ts';
import { smtpSource } from './harness/smtp-source.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    messages: { type: 'string', default: '3000' },
    sessions: { type: 'string', default: '20' },
    'one-per-connection': { type: 'boolean', default: false },
    blobs: { type: 'string', default: 'fs' },
  },
});
const runs = Number(values.runs);
const messages = Number(values.messages);
const sessions = Number(values.sessions);
const reuse = !values['one-per-connection'];
const backends = values.blobs.split(',').map((b) => b.trim());
if (backends.some((b) => b !== 'fs' && b !== 'postgres')) {
  console.error('--blobs takes fs, postgres or both (fs,postgres)');
  process.exit(2);
}
const PG_URL = process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
for (const [name, n] of [
  ['--runs', runs],
  ['--messages', messages],
  ['--sessions', sessions],
] as const) {
  if (!Number.isInteger(n) || n < 1) {
    console.error(`${name} must be a whole number of at least 1`);
    process.exit(2);
  }
}

const peers = installPeers((line) => console.error(line));
if (!peers.get('postfix')?.startsWith('ok')) {
  console.error(`smtp-source is missing: ${peers.get('postfix')}`);
  process.exit(1);
}
const processes = availableParallelism();
const summary: string[] = [];
for (const backend of backends) {
  const stack = await startDrillStack({
    label: 'mx-cpu',
    wallets: 1,
    workers: 0,
    serveArgs: ['--workers', String(processes)],
    ...(backend === 'postgres' ? { postgresUrl: PG_URL, extraToml: '[blobs]\nbackend = "postgres"' } : {}),
  });
  try {
    const servePid = stack.serve.pid as number;
    const cpu = () => treePids(servePid).reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
    const rcpt = stack.addresses()[0] as string;
    const load = { port: stack.mxPort, rcpt, sessions, bytes: 10 * 1024, reuse };
    console.log(
      `MX accept, [blobs] backend = ${backend}, serve --no-workers --workers ${processes}, ${sessions} sessions × 10 KB, ${reuse ? 'reused connections' : 'one message per connection'}, ${messages} messages a run`,
    );
    await smtpSource({ ...load, messages: Math.min(400, messages) });
    const perMessage: number[] = [];
    const rates: number[] = [];
    for (let i = 1; i <= runs; i++) {
      const before = cpu();
      const r = await smtpSource({ ...load, messages });
      const ms = (cpu() - before) / messages;
      perMessage.push(ms);
      rates.push(r.perSecond);
      console.log(`run ${i}: ${r.perSecond.toFixed(0)} msg/s, ${ms.toFixed(2)} CPU ms/msg`);
    }
    const sorted = [...perMessage].sort((a, b) => a - b);
    console.log(
      `CPU ms/msg: median ${(sorted[Math.floor(sorted.length / 2)] as number).toFixed(2)}, min ${(sorted[0] as number).toFixed(2)}, max ${(sorted.at(-1) as number).toFixed(2)}`,
    );
    const byRate = [...rates].sort((a, b) => a - b);
    summary.push(
      `${backend}: median ${(byRate[Math.floor(byRate.length / 2)] as number).toFixed(0)} msg/s, ${(sorted[Math.floor(sorted.length / 2)] as number).toFixed(2)} CPU ms/msg`,
    );
  } finally {
    await stack.close();
  }
}
if (summary.length > 1) console.log(`per backend: ${summary.join('; ')}`);
