// `appendfsync everysec` and a host crash (docs/operations.md "Redis
// settings"): a private redis-server with everysec is SIGKILLed together
// with the worker while mail is in flight, its append-only file is cut back
// by its tail (the writes of about its last second that a crash loses:
// here the last quarter of the newest AOF file, at most 256 KiB, then
// `redis-check-aof --fix`), Redis and the worker start again, the load goes
// on, and `sealpost queue reconcile` runs once it is done. Jobs rolled back
// to older checkpoints find their SendMail in the store; jobs that vanished
// are rebuilt from the spool. 0 lost, 0 doubled.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../harness/net.ts';
import type { Drill } from '../drill.ts';
import {
  account,
  accountingOk,
  describeAccounting,
  formatReplies,
  readInboxes,
  sendLoad,
  waitForInboxes,
} from '../mail.ts';
import { privateRedis } from '../procs.ts';
import { startDrillStack } from '../rig.ts';
import { reconcileNow } from './redis-flush.ts';

const MESSAGES = 300;

/** Cuts the newest append-only file (Redis 7: appendonlydir/*.incr.aof; older: appendonly.aof) by its tail. */
function cutAofTail(dir: string): { file: string; cut: number } {
  const aofDir = join(dir, 'appendonlydir');
  const candidates = (() => {
    try {
      return readdirSync(aofDir)
        .filter((f) => f.endsWith('.incr.aof'))
        .map((f) => join(aofDir, f));
    } catch {
      return [join(dir, 'appendonly.aof')];
    }
  })();
  const file = candidates.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0] as string;
  const size = statSync(file).size;
  const cut = Math.min(Math.floor(size / 4), 256 * 1024);
  truncateSync(file, size - cut);
  try {
    const target =
      candidates.length && file.includes('appendonlydir')
        ? readdirSync(aofDir).find((f) => f.endsWith('.manifest'))
        : undefined;
    execFileSync('redis-check-aof', ['--fix', target ? join(aofDir, target) : file], {
      input: 'y\n',
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    // A cut on a command boundary needs no fix; Redis loads a truncated tail anyway (aof-load-truncated).
  }
  return { file, cut };
}

export const redisEverysecCrash: Drill = {
  name: 'redis-everysec-crash',
  summary: `SIGKILL an everysec Redis and the worker mid-run (${MESSAGES} messages), cut the AOF tail, restart`,
  budgetMs: 15 * 60_000,
  async run(log) {
    const port = await freePort();
    const dir = join(tmpdir(), `sealpost-drill-redis-everysec-${port}`);
    mkdirSync(dir, { recursive: true });
    const redis = privateRedis(port, dir, 'everysec');
    await redis.start();
    const stack = await startDrillStack({
      label: 'redis-everysec',
      wallets: 5,
      redisUrl: `redis://127.0.0.1:${port}`,
    });
    try {
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
        deadlineMs: 5 * 60_000,
        tag: 'everysec',
        onAck: (n) => n >= MESSAGES / 3 && third(),
      });
      await Promise.race([atThird, sending]);
      // The host goes: Redis and the worker at once, mid-flight.
      await Promise.all([redis.stop('SIGKILL'), ...stack.workers.map((w) => w.stop('SIGKILL'))]);
      const { cut } = cutAofTail(dir);
      log(`redis-server and the worker SIGKILLed; AOF cut back by ${cut} bytes`);
      await sleep(2000);
      await redis.start();
      for (const w of stack.workers) await w.start();
      const load = await sending;
      const r = reconcileNow(stack);
      log(
        `sent: ${load.acked.length} acknowledged (${formatReplies(load.replies)}); reconcile recovered ${r.recovered} entries (${r.recoveredJobs} jobs)`,
      );
      await waitForInboxes(
        stack.connection,
        stack.programId,
        stack.wallets,
        load.acked.length,
        5 * 60_000,
      ).catch(() => undefined);
      await sleep(3000);
      const a = account(
        load.acked,
        await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets),
      );
      return {
        pass: accountingOk(a) && a.acked > 0,
        detail: `${describeAccounting(a)}; AOF cut ${cut} bytes`,
      };
    } finally {
      await stack.close();
      await redis.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
