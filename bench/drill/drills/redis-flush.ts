// Redis losing its data loses no acknowledged mail (docs/operations.md
// "Redis settings"): a private redis-server (the machine's shared Redis is
// never touched) is FLUSHALLed twice. Phase 1, a backlog: the workers are
// stopped, ~300 messages are acknowledged, FLUSHALL, `sealpost queue
// reconcile` rebuilds the jobs from the spool, the workers start again.
// Phase 2, live: ~300 messages while the workers run, FLUSHALL in the middle
// of the load, `sealpost queue reconcile` once the load is done. Each phase
// must deliver every acknowledged message exactly once.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from '../../harness/net.ts';
import type { Drill } from '../drill.ts';
import {
  account,
  accountingOk,
  describeAccounting,
  readInboxes,
  type Sent,
  sendLoad,
  waitForInboxes,
} from '../mail.ts';
import { privateRedis } from '../procs.ts';
import { type DrillStack, startDrillStack } from '../rig.ts';

const MESSAGES = 300;
const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'sealpost.js');

/** `sealpost queue reconcile --grace-secs 0 --json` against the stack; its summary. */
export function reconcileNow(stack: DrillStack): {
  recovered: number;
  recoveredJobs: number;
  corrupt: number;
} {
  const out = execFileSync(
    process.execPath,
    [BIN, 'queue', 'reconcile', '--config', stack.configFile, '--grace-secs', '0', '--json'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return JSON.parse(out);
}

async function settle(stack: DrillStack, acked: Sent[]) {
  await waitForInboxes(stack.connection, stack.programId, stack.wallets, acked.length, 5 * 60_000).catch(
    () => undefined,
  );
  await sleep(3000);
  return account(
    acked,
    await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets),
  );
}

export const redisFlush: Drill = {
  name: 'redis-flush',
  summary: `FLUSHALL a private Redis with a backlog of ${MESSAGES} messages, then again under live load`,
  budgetMs: 20 * 60_000,
  async run(log) {
    const port = await freePort();
    const dir = join(tmpdir(), `sealpost-drill-redis-flush-${port}`);
    mkdirSync(dir, { recursive: true });
    const redis = privateRedis(port, dir, 'always');
    await redis.start();
    const url = `redis://127.0.0.1:${port}`;
    const stack = await startDrillStack({ label: 'redis-flush', wallets: 5, redisUrl: url });
    const admin = new Redis(url);
    try {
      // Phase 1: a backlog, the workers stopped.
      for (const w of stack.workers) await w.stop('SIGTERM');
      const backlog = await sendLoad({
        mxPort: stack.mxPort,
        to: stack.addresses(),
        count: MESSAGES,
        connections: 5,
        deadlineMs: 4 * 60_000,
        tag: 'flush-backlog',
      });
      await admin.flushall();
      log(`phase 1: ${backlog.acked.length} acknowledged with the workers stopped; FLUSHALL`);
      const r1 = reconcileNow(stack);
      log(
        `phase 1: reconcile recovered ${r1.recovered} entries (${r1.recoveredJobs} jobs), ${r1.corrupt} corrupt`,
      );
      for (const w of stack.workers) await w.start();
      const a1 = await settle(stack, backlog.acked);
      log(`phase 1: ${describeAccounting(a1)}`);

      // Phase 2: live, FLUSHALL once a third is acknowledged.
      let third: () => void = () => {};
      const atThird = new Promise<void>((r) => {
        third = r;
      });
      const sending = sendLoad({
        mxPort: stack.mxPort,
        to: stack.addresses(),
        count: MESSAGES,
        connections: 5,
        paceMs: 50,
        deadlineMs: 4 * 60_000,
        tag: 'flush-live',
        onAck: (n) => n >= MESSAGES / 3 && third(),
      });
      await Promise.race([atThird, sending]);
      await admin.flushall();
      log('phase 2: FLUSHALL under load');
      const live = await sending;
      const r2 = reconcileNow(stack);
      log(
        `phase 2: ${live.acked.length} acknowledged; reconcile recovered ${r2.recovered} entries (${r2.recoveredJobs} jobs)`,
      );
      await waitForInboxes(
        stack.connection,
        stack.programId,
        stack.wallets,
        backlog.acked.length + live.acked.length,
        5 * 60_000,
      ).catch(() => undefined);
      await sleep(3000);
      const inbox = await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets);
      const a2 = account(
        live.acked,
        inbox.filter((e) => e.subject.startsWith('flush-live')),
      );
      log(`phase 2: ${describeAccounting(a2)}`);
      return {
        pass: accountingOk(a1) && accountingOk(a2) && a1.acked > 0 && a2.acked > 0,
        detail: `backlog: ${describeAccounting(a1)}; live: ${describeAccounting(a2)}`,
      };
    } finally {
      admin.disconnect();
      await stack.close();
      await redis.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
