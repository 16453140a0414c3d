// A private redis-server (appendonly, fsync on every write, its own port and
// directory; the machine's shared Redis is never touched) is SIGKILLed in
// the middle of a run and started again on the same files. While it is down
// the MX must answer 4xx rather than 250; afterwards every acknowledged
// message is delivered.
import { mkdirSync, rmSync } from 'node:fs';
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

const MESSAGES = 300;

export const redisRestart: Drill = {
  name: 'redis-restart',
  summary: `SIGKILL a private appendonly Redis mid-run (${MESSAGES} messages) and restart it`,
  budgetMs: 10 * 60_000,
  async run(log) {
    const port = await freePort();
    const dir = join(tmpdir(), `sealpost-drill-redis-${port}`);
    mkdirSync(dir, { recursive: true });
    const redis = privateRedis(port, dir, 'always');
    await redis.start();
    const stack = await startDrillStack({
      label: 'redis',
      wallets: 5,
      redisUrl: `redis://127.0.0.1:${port}`,
    });
    try {
      // Redis dies once a third of the run is acknowledged, so the rest meets the outage.
      let third: () => void = () => {};
      const atThird = new Promise<void>((r) => {
        third = r;
      });
      const sending = sendLoad({
        mxPort: stack.mxPort,
        to: stack.addresses(),
        count: MESSAGES,
        connections: 5,
        paceMs: 100,
        deadlineMs: 4 * 60_000,
        tag: 'redis',
        onAck: (n) => n >= MESSAGES / 3 && third(),
      });
      await Promise.race([atThird, sending]);
      await redis.stop('SIGKILL');
      const downAt = Date.now();
      log('redis-server SIGKILLed');
      await sleep(5000);
      await redis.start();
      log(
        `redis-server back after ${((Date.now() - downAt) / 1000).toFixed(1)} s, replaying its append-only file`,
      );
      const load = await sending;
      log(
        `sent: ${load.acked.length} acknowledged, ${load.unacked} given up (${formatReplies(load.replies)})`,
      );
      await waitForInboxes(stack.connection, stack.programId, stack.wallets, load.acked.length, 5 * 60_000);
      await sleep(3000);
      const a = account(
        load.acked,
        await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets),
      );
      const deferred = [...load.replies.entries()]
        .filter(([c]) => c.startsWith('4') || c === 'conn')
        .reduce((n, [, v]) => n + v, 0);
      return {
        pass: accountingOk(a) && deferred > 0,
        detail: `${describeAccounting(a)}; ${deferred} attempts deferred while Redis was down (${formatReplies(load.replies)})`,
      };
    } finally {
      await stack.close();
      await redis.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
