// Scale-out: the same deployment as separate processes (`sealpost devnet`,
// `sealpost pind`, `sealpost serve --no-workers` as the MX), first with one
// `sealpost worker` process, then with two, against the same Redis and
// PostgreSQL store. Each phase sends the same load (10 KB messages over reused SMTP
// sessions to many wallets, two or so each, so the per-recipient ordering of
// sends is not the bound) and measures end to end: from the first message
// sent to the last delivery job finished (Email account confirmed on devnet,
// copy stored). Each worker process runs `--concurrency` deliveries at once,
// so one process's capacity, not the recipients, limits the first phase.
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { sendLoad } from '../drill/mail.ts';
import { Proc } from '../drill/procs.ts';
import { type DrillStack, startDrillStack } from '../drill/rig.ts';

export interface ScalePhase {
  workerProcesses: number;
  messages: number;
  /** Acknowledged by the MX. */
  acked: number;
  perSecond: number;
  seconds: number;
  /** Not finished (failed, or still waiting at the deadline). */
  undelivered: number;
}

export interface WorkersScaleResult {
  phases: ScalePhase[];
  concurrency: number;
  /** perSecond with 2 worker processes ÷ with 1. */
  speedup: number;
}

async function phase(
  stack: DrillStack,
  queue: Queue,
  workerProcesses: number,
  messages: number,
  tag: string,
): Promise<ScalePhase> {
  // Redis keeps only the last 1,000 completed jobs, so a phase is done when no
  // delivery job is left to run (every acknowledged message's job was queued
  // before its 250); failures are counted from the failed set (kept to 5,000).
  const failedNow = async () => (await queue.getJobCounts('failed')).failed ?? 0;
  const pending = async () => {
    const c = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(c).reduce((a, n) => a + (n ?? 0), 0);
  };
  const failedBefore = await failedNow();
  const t0 = Date.now();
  const load = await sendLoad({
    mxPort: stack.mxPort,
    to: stack.addresses(),
    count: messages,
    connections: 20,
    deadlineMs: 5 * 60_000,
    tag,
    bodyBytes: 10 * 1024,
  });
  const deadline = Date.now() + 15 * 60_000;
  let left = await pending();
  while (left > 0 && Date.now() < deadline) {
    await sleep(100);
    left = await pending();
  }
  const seconds = (Date.now() - t0) / 1000;
  const undelivered = left + (await failedNow()) - failedBefore;
  const delivered = load.acked.length - undelivered;
  return {
    workerProcesses,
    messages,
    acked: load.acked.length,
    perSecond: delivered / seconds,
    seconds,
    undelivered,
  };
}

export async function measureWorkersScale(opts: {
  messages: number;
  wallets: number;
  /** Deliveries each worker process runs at once. */
  concurrency: number;
  log: (line: string) => void;
}): Promise<WorkersScaleResult> {
  // The shape: every process against the same Redis and PostgreSQL.
  const stack = await startDrillStack({
    label: 'scale',
    wallets: opts.wallets,
    workers: 0,
    postgresUrl: process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  });
  const extra: Proc[] = [];
  const addWorker = async () => {
    const p = Proc.sealpost(
      `worker-${extra.length}`,
      ['worker', '--config', stack.configFile, '--concurrency', String(opts.concurrency)],
      /pipeline workers running/,
    );
    extra.push(p);
    await p.start();
  };
  const connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUE_DELIVER, { connection, prefix: stack.prefix });
  try {
    await addWorker();
    // A short warm-up (JIT, connections, the chain's first accounts), not counted.
    await phase(stack, queue, 1, Math.min(40, opts.messages), 'warm');
    opts.log(`workers: 1 worker process, ${opts.messages} msgs`);
    const one = await phase(stack, queue, 1, opts.messages, 'one');
    await addWorker();
    opts.log(`workers: 2 worker processes, ${opts.messages} msgs`);
    const two = await phase(stack, queue, 2, opts.messages, 'two');
    return {
      phases: [one, two],
      concurrency: opts.concurrency,
      speedup: one.perSecond > 0 ? two.perSecond / one.perSecond : 0,
    };
  } finally {
    await queue.close();
    connection.disconnect();
    for (const p of extra) await p.stop('SIGTERM').catch(() => undefined);
    await stack.close();
  }
}
