// `npm run bench`: Sealpost next to real peers, on this machine, in one run,
// in one table (also written as JSON under bench/results/).
//
//   npm run bench -- [--quick] [--only mx,e2e,hot,many,paced,outbound,api,floor,cli,workers,soak]
//
// Rows: MX accept (smtp-source, 20 sessions × 10 KB reusing connections, and
// 100 sessions with a connection per message, against Sealpost's MX,
// Postfix queueing locally and Haraka with a disk queue), end to end (250 →
// confirmed Email with pind; a hot recipient, many recipients, an offered
// 200 msg/s: bench/harness/pipeline-load.ts), outbound (spooler vs Postfix to smtp-sink),
// the account API (vs a bare Fastify route) and the floor (seal + CID +
// blake3 per message), and the CLI's start-up (`--help`, `--version`,
// `config check`, from dist/ and through tsx). Peers are installed by bench/harness/install-peers.sh;
// one that cannot be installed or started is reported `missing`, with why.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runApi, runOutbound } from './harness/child-benches.ts';
import { measureCliStart } from './harness/cli-start.ts';
import { measureEndToEnd } from './harness/end-to-end.ts';
import { measureFloor } from './harness/floor.ts';
import { installPeers } from './harness/install-peers.ts';
import { measureMxAccept } from './harness/mx-accept.ts';
import { perMessageOf, pipelineRows } from './harness/pipeline-load.ts';
import { measureSoak } from './harness/soak.ts';
import { type Cell, formatTable, type Row } from './harness/table.ts';
import { measureWorkersScale } from './harness/workers-scale.ts';

const PARTS = [
  'floor',
  'mx',
  'e2e',
  'hot',
  'many',
  'paced',
  'outbound',
  'api',
  'cli',
  'workers',
  'soak',
] as const;
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string', default: PARTS.join(',') },
  },
});
const only = new Set(String(values.only).split(','));
const quick = values.quick === true;
const load = {
  sessions: 20,
  bytes: 10 * 1024,
  mxMessages: quick ? 400 : 2000,
  e2eMessages: quick ? 200 : 600,
  outboundMessages: quick ? 1000 : 5000,
  apiSecs: quick ? 3 : 8,
  floorMessages: quick ? 500 : 2000,
  cliRuns: quick ? 8 : 20,
  workersMessages: quick ? 200 : 600,
  soakMinutes: quick ? 1 : 10,
};
const root = resolve(import.meta.dirname, '..');
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const errors: Record<string, string> = {};
const missing = (why: string): Cell => ({ missing: why.length > 90 ? `${why.slice(0, 87)}...` : why });
/** The first line of the error for the table; all of it goes into the JSON. */
function reason(err: unknown, part = 'error'): string {
  const text = err instanceof Error ? err.message : String(err);
  errors[part] = text;
  return text.split('\n')[0] ?? '';
}

const rows: Row[] = [];
const results: Record<string, unknown> = {};
const started = new Date();

let floorRate: number | undefined;
if (only.has('floor')) {
  log(`floor: seal + CID + blake3 of a ${load.bytes}-byte message × ${load.floorMessages}`);
  const floor = await measureFloor({ messages: load.floorMessages, bytes: load.bytes });
  floorRate = floor.perSecond;
  results.floor = floor;
  rows.push({
    name: 'floor: seal + CID + blake3, 10 KB (one core)',
    unit: 'µs/msg',
    sealpost: {
      value: floor.microsPerMessage,
      note: `seal ${floor.sealMicros.toFixed(0)} + CID ${floor.cidMicros.toFixed(0)} + blake3 ${floor.blake3Micros.toFixed(0)} µs = ${floor.perSecond.toFixed(0)} msg/s`,
    },
  });
}

const peers = only.has('mx') || only.has('outbound') ? installPeers(log) : new Map<string, string>();

if (only.has('mx')) {
  const bytes = load.bytes;
  for (const mxLoad of [
    { sessions: load.sessions, messages: load.mxMessages, bytes, reuse: true },
    { sessions: 100, messages: load.mxMessages, bytes, reuse: false },
  ]) {
    const mx = await measureMxAccept(mxLoad, peers, log);
    results[mxLoad.reuse ? 'mxAccept' : 'mxAcceptPerConnection'] = mx.results;
    Object.assign(errors, mx.errors);
    rows.push(mx.row);
  }
}

if (only.has('e2e')) {
  log(
    `end to end: ${load.e2eMessages} msgs from ${load.sessions} SMTP clients to 20 wallets, pind as the operator pin`,
  );
  const name = `end to end: 250 → confirmed Email (pind), ${load.e2eMessages} msgs`;
  try {
    const e = await measureEndToEnd({
      messages: load.e2eMessages,
      clients: load.sessions,
      bytes: load.bytes,
      recipients: 20,
    });
    results.endToEnd = e;
    rows.push({
      name,
      unit: 'msg/s',
      sealpost: {
        value: e.perSecond,
        note: `p50 ${e.p50Ms} ms, p99 ${e.p99Ms} ms, ${e.undelivered} undelivered`,
      },
      perMessage: perMessageOf(e),
      fromFloor: true,
    });
    const stages = Object.entries(e.stages)
      .map(([stage, m]) => `${stage} ${m.meanMs.toFixed(0)}`)
      .join(', ');
    if (stages)
      rows.push({
        name: '  where a delivery spends its time (mean ms)',
        unit: 'ms',
        sealpost: { text: stages },
      });
  } catch (err) {
    rows.push({ name, unit: 'msg/s', sealpost: missing(reason(err, 'e2e')) });
  }
}

if (only.has('hot') || only.has('many') || only.has('paced')) {
  const p = await pipelineRows({
    hot: only.has('hot'),
    many: only.has('many'),
    paced: only.has('paced'),
    quick,
    bytes: load.bytes,
    log,
  });
  rows.push(...p.rows);
  Object.assign(results, p.results);
  Object.assign(errors, p.errors);
}

if (only.has('outbound')) {
  log(`outbound: bench/spooler.ts, ${load.outboundMessages} msgs to smtp-sink`);
  const name = `outbound: ${load.outboundMessages} msgs relayed to smtp-sink`;
  try {
    const o = await runOutbound({ messages: load.outboundMessages, timeoutMs: (quick ? 5 : 15) * 60_000 });
    results.outbound = o;
    rows.push({
      name,
      unit: 'msg/s',
      sealpost: { value: o.sealpostPerSecond, note: 'spooler, relay route' },
      postfix:
        o.postfixPerSecond !== undefined
          ? { value: o.postfixPerSecond, note: 'relayhost' }
          : missing(o.postfixMissing ?? 'not run'),
    });
  } catch (err) {
    rows.push({ name, unit: 'msg/s', sealpost: missing(reason(err, 'outbound')) });
  }
}

if (only.has('api')) {
  log(`account API: bench/api.ts, ${load.apiSecs} s, 50 connections`);
  const name = 'account API: GET /v1/account/pin-provider';
  try {
    const a = await runApi({ durationSecs: load.apiSecs, connections: 50 });
    results.api = a;
    rows.push({
      name,
      unit: 'req/s',
      sealpost: { value: a.apiPerSecond, note: `p99 ${a.apiP99Ms} ms` },
      bare: { value: a.barePerSecond, note: `p99 ${a.bareP99Ms} ms` },
    });
  } catch (err) {
    rows.push({ name, unit: 'req/s', sealpost: missing(reason(err, 'api')) });
  }
}

if (only.has('cli')) {
  log(`CLI start-up: --help, --version, config check × ${load.cliRuns} (dist/), fewer through tsx`);
  try {
    const c = measureCliStart({ runs: load.cliRuns, before: true });
    results.cliStart = c;
    for (const r of c.rows.filter((x) => x.mode === 'dist')) {
      const tsx = c.rows.find((x) => x.mode === 'tsx' && x.command === r.command);
      rows.push({
        name: `CLI start to exit: ${r.command} (median)`,
        unit: 'ms',
        sealpost: {
          value: r.medianMs,
          note: `p90 ${r.p90Ms.toFixed(0)} ms; through tsx: median ${tsx?.medianMs.toFixed(0) ?? '?'} ms, p90 ${tsx?.p90Ms.toFixed(0) ?? '?'} ms`,
        },
      });
    }
  } catch (err) {
    rows.push({ name: 'CLI start to exit', unit: 'ms', sealpost: missing(reason(err, 'cli')) });
  }
}

if (only.has('workers')) {
  log('scale-out: devnet, pind, serve --no-workers and 1, then 2 `sealpost worker` processes');
  const name = `scale-out: end to end, ${load.workersMessages} msgs to 100 wallets, concurrency 16 per process`;
  try {
    const w = await measureWorkersScale({
      messages: load.workersMessages,
      wallets: 100,
      concurrency: 16,
      log,
    });
    results.workersScale = w;
    for (const p of w.phases)
      rows.push({
        name: `${name}, ${p.workerProcesses} worker process${p.workerProcesses > 1 ? 'es' : ''}`,
        unit: 'msg/s',
        sealpost: {
          value: p.perSecond,
          note: `${p.undelivered} undelivered${p.workerProcesses > 1 ? `; ${w.speedup.toFixed(2)}× one process` : ''}`,
        },
        fromFloor: true,
      });
  } catch (err) {
    rows.push({ name, unit: 'msg/s', sealpost: missing(reason(err, 'workers')) });
  }
}

if (only.has('soak')) {
  const name = `soak: RSS of sealpost serve (all processes), ${load.soakMinutes} min`;
  try {
    const s = await measureSoak({ minutes: load.soakMinutes, wallets: quick ? 50 : 200, rate: 20, log });
    results.soak = s;
    rows.push({
      name,
      unit: 'MB',
      sealpost: {
        value: s.maxMb,
        note: `max; start ${s.startMb.toFixed(0)}, end ${s.endMb.toFixed(0)}, slope ${s.slopeMbPerMin.toFixed(1)} MB/min, ${s.processes} serving processes, ${s.acked} msgs acknowledged, ${s.unacked} not`,
      },
    });
  } catch (err) {
    rows.push({ name, unit: 'MB', sealpost: missing(reason(err, 'soak')) });
  }
}

const table = formatTable(rows, floorRate);
const legend = [
  'Sealpost ÷ peer: above 1 Sealpost is faster. floor ÷ Sealpost: how many times the floor (one core sealing,',
  'computing the CID and blake3 of each message, nothing else) outruns that path. Every system ran on this',
  "machine in this run, one after another; Sealpost's MX answers 250 only after the spool fsync and the jobs in Redis.",
  'RPC calls/msg: JSON-RPC calls devnet received from the stack during the measured window (a batch counts each',
  "call) ÷ messages delivered. lamports/msg: the domain authority's balance before − after ÷ delivered; fees are the",
  'meta.fee of its transactions in the window (failed ones too), rent what they moved out besides (Email accounts).',
].join('\n');
process.stdout.write(
  `\nSealpost benchmark, ${started.toISOString()}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}\n\n${table}\n\n${legend}\n`,
);
const dir = join(root, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  `${JSON.stringify({ started: started.toISOString(), machine: { cores: cpus().length, node: process.version }, load, peers: Object.fromEntries(peers), rows, results, errors }, null, 2)}\n`,
);
process.stdout.write(`\nJSON: ${file}\n`);
process.exit(0);
