// Inbound pipeline load (issue 20, targets 1 and 2): SMTP clients send 10 KB
// messages through the MX; each message's latency runs from its 250 to its
// delivery job finishing (Email account confirmed on devnet, copy stored),
// taken from the queue's `completed` events (the MX keeps only the last
// 1,000 completed jobs, so their finishedOn cannot be read back after a
// larger run). Three shapes:
//   hot   — every message to ONE wallet (closed loop, sessions reused);
//   many  — messages spread over many wallets (closed loop);
//   paced — open loop: message i is handed to the client pool at t0 + i/rate,
//           whatever the server does, so queueing shows in the latency.
// The stack is started by `startPipelineStack` only, so it can be switched
// to separate processes (serve --workers N, devnet and pind on their own)
// in one place. Devnet runs at its default 400 ms slots.
// What a delivered message costs on chain is measured over the same window
// (`chain` in the result): the JSON-RPC calls devnet received from the stack
// (counted at a proxy in front of it, bench/harness/stack.ts
// startRpcCounter; SEALPOST_BENCH_COUNT_CHAIN=0 leaves it out), and the
// lamports the domain authority paid (its balance before − after), split
// into fees (meta.fee of each of its transactions in the window, base and
// priority) and rent (what those transactions moved out besides the fee:
// the Email accounts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, PublicKey } from '@solana/web3.js';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { startDrillStack } from '../drill/rig.ts';
import { processCpuMs, treePids } from './proc-tree.ts';
import { deliverJobCount, type SealpostMx, type SealpostMxOptions, startSealpostMx } from './sealpost-mx.ts';
import { SmtpLoad } from './smtp-load.ts';
import { type RpcCount, type RpcCounter, rpcCountSince, startRpcCounter } from './stack.ts';
import type { PerMessage, Row } from './table.ts';

/**
 * SEALPOST_BENCH_SERVE_PROCESSES=N: `serve --workers N` for the pipeline rows
 * (default: serve's own, one serving process per core), to compare one
 * serving process with several on the same machine.
 */
function serveProcessesArgs(): string[] {
  const text = process.env.SEALPOST_BENCH_SERVE_PROCESSES;
  if (text === undefined || text === '') return [];
  if (!/^[1-9]\d{0,2}$/.test(text))
    throw new Error(
      `SEALPOST_BENCH_SERVE_PROCESSES must be a process count (1 to 999), got ${JSON.stringify(text)}`,
    );
  return ['--workers', text];
}

/** Said in a row's name when SEALPOST_BENCH_SERVE_PROCESSES sets the serving processes. */
function serveProcessesNote(): string {
  if (process.env.SEALPOST_BENCH_IN_PROCESS === '1') return '';
  const args = serveProcessesArgs();
  return args.length ? ` (serve --workers ${args[1]})` : '';
}

/**
 * The stack the pipeline rows run against: the way an operator runs it, as
 * processes of their own (`sealpost devnet`, `sealpost pind` and `sealpost
 * serve`, which forks one serving process per core, each with its MX and its
 * pipeline workers; bench/drill/rig.ts). The load generator stays in this
 * process. The stack's CPU is read from /proc for every process of the three
 * trees; Redis's own is not counted.
 */
export async function startServeStack(opts: SealpostMxOptions): Promise<SealpostMx> {
  const stack = await startDrillStack({
    label: 'pipeline',
    wallets: opts.wallets ?? 1,
    manyWallets: opts.manyWallets,
    workers: 0,
    workersInServe: opts.workers ?? true,
    serveArgs: [
      ...serveProcessesArgs(),
      ...(opts.workerConcurrency ? ['--concurrency', String(opts.workerConcurrency)] : []),
    ],
    chain: opts.chain as Record<string, string | number | boolean> | undefined,
  });
  const roots = { devnet: stack.devnet.pid, pind: stack.pind.pid, serve: stack.serve.pid };
  const rcpts = stack.addresses();
  return {
    port: stack.mxPort,
    rcpt: rcpts[0] as string,
    rcpts,
    redisUrl: stack.redisUrl,
    prefix: stack.prefix,
    stageMeans: () => scrapeStageMeans(stack.apiUrl, stack.adminToken),
    queued: () => deliverJobCount(stack.redisUrl, stack.prefix),
    cpuMs: () => {
      const out: Record<string, number> = {};
      for (const [name, root] of Object.entries(roots)) {
        out[name] = 0;
        if (root !== undefined) for (const pid of treePids(root)) out[name] += processCpuMs(pid) ?? 0;
      }
      return out;
    },
    stop: () => stack.close(),
  };
}

/** Mean ms per pipeline stage from the deployment's GET /metrics (summed over its serving processes). */
async function scrapeStageMeans(
  apiUrl: string,
  adminToken: string,
): Promise<Record<string, { count: number; meanMs: number }>> {
  const res = await fetch(`${apiUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  const sums = new Map<string, { sum: number; count: number }>();
  const line = /^sealpost_pipeline_stage_seconds_(sum|count)\{stage="([^"]+)"\} (\S+)$/;
  for (const text of (await res.text()).split('\n')) {
    const m = line.exec(text);
    if (!m) continue;
    const entry = sums.get(m[2] as string) ?? { sum: 0, count: 0 };
    entry[m[1] as 'sum' | 'count'] = Number(m[3]);
    sums.set(m[2] as string, entry);
  }
  const out: Record<string, { count: number; meanMs: number }> = {};
  for (const [stage, { sum, count }] of sums)
    if (count > 0) out[stage] = { count, meanMs: (sum / count) * 1000 };
  return out;
}

/** The one place the harness starts the stack: SEALPOST_BENCH_IN_PROCESS=1 keeps it all in this process (one event loop). */
export const startPipelineStack: (opts: SealpostMxOptions) => Promise<SealpostMx> =
  process.env.SEALPOST_BENCH_IN_PROCESS === '1' ? startSealpostMx : startServeStack;

export interface LoadResult {
  messages: number;
  /** Delivered per second, from the first send to the last delivery. */
  perSecond: number;
  acceptPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  undelivered: number;
  /** Distinct SendMail transactions the delivered messages landed in. */
  transactions: number;
  /** CPU (user + system) per delivered message of this process (the load) and the stack's processes: MX, workers, devnet, pind. */
  cpuMsPerMessage: number;
  /** The same by process: `load` (this process) and `devnet`, `pind`, `serve` (each with its children), or `all` in process. */
  cpuMsByProcess: Record<string, number>;
  /** Mean ms per pipeline stage (the stack's /metrics histograms). */
  stages: Record<string, { count: number; meanMs: number }>;
  /** RPC calls and lamports over the load (absent when not counted; `chainError` says why). */
  chain?: ChainCost;
  chainError?: string;
}

/** What the load cost on chain, over the measured window. */
export interface ChainCost {
  /** JSON-RPC calls devnet received from the stack (a batch counts each call), by method. */
  rpc: RpcCount;
  rpcCallsPerMessage: number;
  /** The domain authority's balance before − after. */
  lamports: number;
  lamportsPerMessage: number;
  /** Σ meta.fee of the authority's transactions in the window (failed ones too). */
  feeLamports: number;
  /** Of which above the 5,000 lamports per signature. */
  priorityFeeLamports: number;
  /** What those transactions moved out of the authority besides their fee (the Email accounts' rent). */
  rentLamports: number;
  /** lamports − fees − rent: moved by anything else (0 when the transactions account for all of it). */
  otherLamports: number;
  feesPerMessage: number;
  rentPerMessage: number;
  /** The authority's transactions in the window, and how many of them failed on chain. */
  transactions: number;
  failedTransactions: number;
}

/** The table's per-message columns for a load result. */
export function perMessageOf(r: LoadResult): PerMessage | undefined {
  if (!r.chain) return undefined;
  return {
    rpcCalls: r.chain.rpcCallsPerMessage,
    lamports: r.chain.lamportsPerMessage,
    rent: r.chain.rentPerMessage,
    fees: r.chain.feesPerMessage,
  };
}

/** SEALPOST_BENCH_COUNT_CHAIN=0: no counting proxy (to see what it costs the load). */
const countChain = process.env.SEALPOST_BENCH_COUNT_CHAIN !== '0';

interface ChainMark {
  rpc: RpcCount;
  balance: number;
  /** The authority's newest signature before the window. */
  newest: string | undefined;
}

interface ChainView {
  counter: RpcCounter;
  connection: Connection;
  authority: PublicKey;
}

function chainView(counter: RpcCounter | undefined): ChainView | undefined {
  if (!counter?.target || !counter.keysDir) return undefined;
  return {
    counter,
    // Straight to devnet: the harness's own reads are not the stack's calls.
    connection: new Connection(counter.target, 'confirmed'),
    authority: new PublicKey(readKeypairFile(join(counter.keysDir, 'authority.json')).address),
  };
}

async function chainMark(v: ChainView): Promise<ChainMark> {
  const rpc = await v.counter.count();
  const [balance, newest] = await Promise.all([
    v.connection.getBalance(v.authority, 'confirmed'),
    v.connection.getSignaturesForAddress(v.authority, { limit: 1 }, 'confirmed'),
  ]);
  return { rpc, balance, newest: newest[0]?.signature };
}

async function chainCost(
  v: ChainView,
  before: ChainMark,
  rpcAfter: RpcCount,
  delivered: number,
): Promise<ChainCost> {
  const balance = await v.connection.getBalance(v.authority, 'confirmed');
  // Every transaction of the authority's since the window opened, newest first.
  const signatures: string[] = [];
  for (let page: string | undefined; ; ) {
    const rows = await v.connection.getSignaturesForAddress(
      v.authority,
      { limit: 1000, ...(before.newest ? { until: before.newest } : {}), ...(page ? { before: page } : {}) },
      'confirmed',
    );
    signatures.push(...rows.map((r) => r.signature));
    if (rows.length < 1000) break;
    page = rows.at(-1)?.signature;
  }
  let feeLamports = 0;
  let priorityFeeLamports = 0;
  let rentLamports = 0;
  let transactions = 0;
  let failedTransactions = 0;
  for (let i = 0; i < signatures.length; i += 100) {
    const txs = await v.connection.getTransactions(signatures.slice(i, i + 100), {
      commitment: 'confirmed',
      maxSupportedTransactionVersion: 0,
    });
    for (const tx of txs) {
      if (!tx?.meta) throw new Error('a transaction of the window has no meta');
      const keys = tx.transaction.message.staticAccountKeys;
      const at = keys.findIndex((k) => k.equals(v.authority));
      if (at < 0) continue;
      transactions++;
      if (tx.meta.err) failedTransactions++;
      const out = (tx.meta.preBalances[at] ?? 0) - (tx.meta.postBalances[at] ?? 0);
      if (at === 0) {
        feeLamports += tx.meta.fee;
        priorityFeeLamports += tx.meta.fee - 5000 * tx.transaction.signatures.length;
        rentLamports += out - tx.meta.fee;
      } else rentLamports += out;
    }
  }
  const lamports = before.balance - balance;
  const rpc = rpcCountSince(before.rpc, rpcAfter);
  const per = (n: number) => n / Math.max(1, delivered);
  return {
    rpc,
    rpcCallsPerMessage: per(rpc.calls),
    lamports,
    lamportsPerMessage: per(lamports),
    feeLamports,
    priorityFeeLamports,
    rentLamports,
    otherLamports: lamports - feeLamports - rentLamports,
    feesPerMessage: per(feeLamports),
    rentPerMessage: per(rentLamports),
    transactions,
    failedTransactions,
  };
}

export interface LoadOptions {
  messages: number;
  clients: number;
  bytes: number;
  /** Recipient addresses, used round robin. */
  rcpts?: (all: string[]) => string[];
  /** Open loop at this many messages per second (closed loop when absent). */
  ratePerSecond?: number;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * Starts a stack, runs the load against it, stops it. With `warmup`, that
 * load runs first and is not measured (the stack's processes past their
 * first, JIT-cold messages, as the MX rows warm every system).
 */
export async function measurePipelineLoad(
  stackOpts: SealpostMxOptions,
  load: LoadOptions,
  warmup?: LoadOptions,
): Promise<LoadResult> {
  // Taken by the stack's config (writeStackConfig): the servers' rpc_url.
  const counter = countChain ? await startRpcCounter() : undefined;
  try {
    const stack = await startPipelineStack({ workers: true, ...stackOpts });
    try {
      if (warmup) await runLoad(stack, warmup);
      return await runLoad(stack, load, counter);
    } finally {
      await stack.stop();
    }
  } finally {
    await counter?.close();
  }
}

/** Stage means over the deliveries between two /metrics snapshots (the histograms count from the start). */
function stagesSince(before: LoadResult['stages'], after: LoadResult['stages']): LoadResult['stages'] {
  const out: LoadResult['stages'] = {};
  for (const [stage, a] of Object.entries(after)) {
    const b = before[stage] ?? { count: 0, meanMs: 0 };
    const count = a.count - b.count;
    if (count > 0) out[stage] = { count, meanMs: (a.meanMs * a.count - b.meanMs * b.count) / count };
  }
  return out;
}

export async function runLoad(
  stack: SealpostMx,
  load: LoadOptions,
  counter?: RpcCounter,
): Promise<LoadResult> {
  const connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  const rcpts = load.rcpts ? load.rcpts(stack.rcpts) : stack.rcpts;
  const body = `${'0123456789abcdef'.repeat(4)}\r\n`.repeat(Math.ceil(load.bytes / 66));
  const ackedAt = new Map<string, number>();
  // Every delivery job's end: when, and the SendMail signature it returned.
  const finished = new Map<string, { at: number; signature?: string }>();
  let failed = 0;
  const events = new QueueEvents(QUEUE_DELIVER, { connection, prefix: stack.prefix });
  events.on('completed', ({ jobId, returnvalue }) => {
    const value = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as
      | { signature?: string }
      | undefined;
    finished.set(jobId, { at: Date.now(), signature: value?.signature });
  });
  events.on('failed', () => {
    failed++;
  });
  await events.waitUntilReady();
  // One message at a time per session, as an MTA without PIPELINING sends (bench/harness/smtp-load.ts).
  const transport = new SmtpLoad({ host: '127.0.0.1', port: stack.port, sessions: load.clients });
  const sendOne = async (i: number) => {
    const to = rcpts[i % rcpts.length] as string;
    const from = `client${i % load.clients}@load.example`;
    const response = await transport.send(
      from,
      to,
      `From: ${from}\r\nTo: ${to}\r\nSubject: load ${i}\r\n\r\n${body}`,
    );
    ackedAt.set(response.split(' ').pop() ?? '', Date.now());
  };
  // SEALPOST_BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of this process over the load alone
  // (not the set-up), written there as <part>-<time>.cpuprofile (open in Chrome DevTools).
  const profileDir = process.env.SEALPOST_BENCH_CPU_PROFILE;
  const profiler = profileDir ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  try {
    const stages0 = await stack.stageMeans();
    const view = chainView(counter);
    const mark0 = view ? await chainMark(view) : undefined;
    const cpu0 = process.cpuUsage();
    const stackCpu0 = stack.cpuMs?.() ?? {};
    const t0 = Date.now();
    if (load.ratePerSecond) {
      const rate = load.ratePerSecond;
      const sends: Promise<void>[] = [];
      for (let i = 0; i < load.messages; i++) {
        const due = t0 + (i * 1000) / rate;
        const wait = due - Date.now();
        if (wait > 0) await sleep(wait);
        sends.push(sendOne(i));
      }
      await Promise.all(sends);
    } else {
      let next = 0;
      await Promise.all(
        Array.from({ length: load.clients }, async () => {
          for (let i = next++; i < load.messages; i = next++) await sendOne(i);
        }),
      );
    }
    const acceptSecs = (Date.now() - t0) / 1000;
    const deadline = Date.now() + 20 * 60_000;
    while (finished.size + failed < load.messages && Date.now() < deadline) await sleep(100);
    const rpcAfter = await counter?.count();
    const cpu = process.cpuUsage(cpu0);
    // CPU ms by process: this one (the load, or the whole stack in process) and the stack's own.
    const cpuParts: Record<string, number> = {
      [stack.cpuMs ? 'load' : 'all']: (cpu.user + cpu.system) / 1000,
    };
    for (const [name, ms] of Object.entries(stack.cpuMs?.() ?? {}))
      cpuParts[name] = ms - (stackCpu0[name] ?? 0);
    if (profiler && profileDir) {
      const { profile } = await profiler.post('Profiler.stop');
      const name = `${load.ratePerSecond ? 'paced' : 'load'}-${load.messages}-${Date.now()}.cpuprofile`;
      // The stack's own profiles (--cpu-prof-dir) make the directory only when their processes exit.
      mkdirSync(profileDir, { recursive: true });
      writeFileSync(join(profileDir, name), JSON.stringify(profile));
    }
    const latencies: number[] = [];
    const signatures = new Set<string>();
    let last = t0;
    for (const [jobId, end] of finished) {
      const at = ackedAt.get(jobId.slice(0, jobId.lastIndexOf('.')));
      if (at === undefined) continue;
      latencies.push(end.at - at);
      last = Math.max(last, end.at);
      if (end.signature) signatures.add(end.signature);
    }
    latencies.sort((a, b) => a - b);
    let chain: ChainCost | undefined;
    let chainError: string | undefined;
    if (view && mark0 && rpcAfter) {
      try {
        chain = await chainCost(view, mark0, rpcAfter, latencies.length);
      } catch (err) {
        chainError = err instanceof Error ? err.message : String(err);
      }
    } else chainError = countChain ? 'no RPC counter in front of this stack' : 'SEALPOST_BENCH_COUNT_CHAIN=0';
    return {
      messages: load.messages,
      perSecond: latencies.length / ((last - t0) / 1000),
      acceptPerSecond: load.messages / acceptSecs,
      p50Ms: pct(latencies, 50),
      p99Ms: pct(latencies, 99),
      undelivered: load.messages - latencies.length,
      transactions: signatures.size,
      cpuMsPerMessage: Object.values(cpuParts).reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
      cpuMsByProcess: Object.fromEntries(
        Object.entries(cpuParts).map(([name, ms]) => [name, ms / Math.max(1, latencies.length)]),
      ),
      stages: stagesSince(stages0, await stack.stageMeans()),
      ...(chain ? { chain } : {}),
      ...(chainError ? { chainError } : {}),
    };
  } finally {
    profiler?.disconnect();
    transport.close();
    await events.close();
    connection.disconnect();
  }
}

/** `resolve 12, seal 30, …` (mean ms per stage). */
export function stageText(stages: LoadResult['stages']): string {
  return Object.entries(stages)
    .map(([stage, m]) => `${stage} ${m.meanMs.toFixed(0)}`)
    .join(', ');
}

/** The row note: latency, transactions, CPU. */
export function loadNote(r: LoadResult): string {
  const parts = Object.entries(r.cpuMsByProcess)
    .filter(([name]) => name !== 'all')
    .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
    .join(' + ');
  return `p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${r.transactions} txs, ${r.cpuMsPerMessage.toFixed(1)} ms CPU/msg${parts ? ` (${parts})` : ''}, ${r.undelivered} undelivered`;
}

export interface PipelineRowsResult {
  rows: Row[];
  results: Record<string, unknown>;
  errors: Record<string, string>;
}

/**
 * The bench rows of targets 1 and 2: `hot` (200 × 10 KB from 10 sessions to
 * one wallet, with the same load before batching — one SendMail per
 * transaction, confirmed — in the same run), `many` (5,000 messages to 1,000
 * wallets, with where time and CPU go) and `paced` (an offered 200 msg/s).
 * `quick` shrinks the counts.
 */
export async function pipelineRows(opts: {
  hot: boolean;
  many: boolean;
  paced: boolean;
  quick: boolean;
  bytes: number;
  log: (line: string) => void;
}): Promise<PipelineRowsResult> {
  const out: PipelineRowsResult = { rows: [], results: {}, errors: {} };
  const run = async (part: string, name: string, fn: () => Promise<Row[]>) => {
    try {
      out.rows.push(...(await fn()));
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      out.errors[part] = text;
      out.rows.push({ name, unit: 'msg/s', sealpost: { missing: text.split('\n')[0]?.slice(0, 87) ?? '' } });
    }
  };
  const one = (all: string[]) => all.slice(0, 1);
  if (opts.hot) {
    const messages = opts.quick ? 100 : 200;
    const before = opts.quick ? 30 : 100;
    const name = `hot recipient: ${messages} × 10 KB from 10 sessions to ONE wallet, 250 → confirmed${serveProcessesNote()}`;
    await run('hot', name, async () => {
      // Measured on a warm stack: first the same load to 20 other wallets, not measured.
      opts.log(
        `hot recipient: ${messages} msgs, batched + pipelined (the defaults), after ${messages} to others`,
      );
      const now = await measurePipelineLoad(
        { wallets: 1, manyWallets: 20 },
        { messages, clients: 10, bytes: opts.bytes, rcpts: one },
        { messages, clients: 10, bytes: opts.bytes, rcpts: (all) => all.slice(1) },
      );
      opts.log(`hot recipient: ${messages} msgs on a cold stack (its first messages)`);
      const cold = await measurePipelineLoad(
        { wallets: 1 },
        { messages, clients: 10, bytes: opts.bytes, rcpts: one },
      );
      opts.log(`hot recipient: ${before} msgs, one SendMail per transaction, confirmed (before)`);
      const old = await measurePipelineLoad(
        { wallets: 1, chain: { sendmail_batch_max: 1, pipeline_sendmail: false } },
        { messages: before, clients: 10, bytes: opts.bytes, rcpts: one },
      );
      out.results.hot = { now, cold, before: old };
      return [
        {
          name,
          unit: 'msg/s',
          sealpost: { value: now.perSecond, note: `warm stack; ${loadNote(now)}` },
          perMessage: perMessageOf(now),
          fromFloor: true,
        },
        {
          name: '  where a delivery spends its time (mean ms)',
          unit: 'ms',
          sealpost: { text: stageText(now.stages) },
        },
        {
          name: `  cold stack: its first ${messages} msgs`,
          unit: 'msg/s',
          sealpost: { value: cold.perSecond, note: loadNote(cold) },
          perMessage: perMessageOf(cold),
        },
        {
          name: `  before: one SendMail per tx, confirmed (${before} msgs)`,
          unit: 'msg/s',
          sealpost: { value: old.perSecond, note: loadNote(old) },
          perMessage: perMessageOf(old),
        },
      ];
    });
  }
  if (opts.many) {
    const messages = opts.quick ? 1000 : 5000;
    const wallets = opts.quick ? 200 : 1000;
    const name = `many recipients: ${messages} msgs to ${wallets} wallets, 400 ms slots, 250 → confirmed${serveProcessesNote()}`;
    await run('many', name, async () => {
      opts.log(`many recipients: ${messages} msgs to ${wallets} wallets (making the mailboxes first)`);
      const r = await measurePipelineLoad(
        { wallets: 1, manyWallets: wallets - 1 },
        { messages, clients: 20, bytes: opts.bytes },
      );
      out.results.many = r;
      return [
        {
          name,
          unit: 'msg/s',
          sealpost: { value: r.perSecond, note: loadNote(r) },
          perMessage: perMessageOf(r),
          fromFloor: true,
        },
        {
          name: '  where a delivery spends its time (mean ms)',
          unit: 'ms',
          sealpost: { text: stageText(r.stages) },
        },
      ];
    });
  }
  if (opts.paced) {
    const rate = 200;
    const messages = opts.quick ? 1000 : 3000;
    const wallets = opts.quick ? 200 : 1000;
    const name = `offered ${rate} msg/s (open loop), ${messages} msgs to ${wallets} wallets: 250 → confirmed${serveProcessesNote()}`;
    await run('paced', name, async () => {
      opts.log(`paced: ${messages} msgs at ${rate} msg/s to ${wallets} wallets`);
      const r = await measurePipelineLoad(
        { wallets: 1, manyWallets: wallets - 1 },
        { messages, clients: 50, bytes: opts.bytes, ratePerSecond: rate },
      );
      out.results.paced = r;
      return [
        {
          name,
          unit: 'ms p99',
          sealpost: {
            value: r.p99Ms,
            note: `p50 ${r.p50Ms} ms, delivered ${r.perSecond.toFixed(0)} msg/s, ${r.undelivered} undelivered`,
          },
          perMessage: perMessageOf(r),
        },
      ];
    });
  }
  return out;
}
