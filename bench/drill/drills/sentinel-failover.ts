// Redis Sentinel: a private deployment (a master and two replicas,
// appendonly with fsync on every write, `min-replicas-to-write 1`, three
// sentinels with quorum 2; test/support/redis-sentinel.ts) behind a stack
// whose config says `[redis] sentinels` and `name`. Mid-run the operator's
// `SENTINEL FAILOVER` promotes a replica; later the master is SIGKILLed (a
// host lost) and the sentinels elect another. Each is a burst of 4xx for
// what cannot be queued, never a 250 without the jobs written: afterwards
// every acknowledged message is delivered exactly once, and serve and the
// worker carry on without a restart.
import { setTimeout as sleep } from 'node:timers/promises';
import { startSentinelRedis } from '../../../test/support/redis-sentinel.ts';
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
import { startDrillStack } from '../rig.ts';

const MESSAGES = 300;

export const sentinelFailover: Drill = {
  name: 'sentinel-failover',
  summary: `SENTINEL FAILOVER, then SIGKILL of the new master, mid-run (${MESSAGES} messages) through Redis Sentinel`,
  budgetMs: 12 * 60_000,
  async run(log) {
    const sentinel = await startSentinelRedis({ replicas: 2, sentinels: 3 });
    log(`sentinels ${sentinel.sentinels.join(', ')}, master on ${await sentinel.masterPort()}`);
    try {
      const stack = await startDrillStack({
        label: 'sentinel',
        wallets: 5,
        redisUrl: `redis://127.0.0.1:${sentinel.nodePorts[0]}`,
        redisToml: sentinel.toml(),
      });
      try {
        const marks = [MESSAGES / 3, (2 * MESSAGES) / 3].map((at) => {
          let hit: () => void = () => {};
          const reached = new Promise<void>((r) => {
            hit = r;
          });
          return { at, hit, reached };
        });
        const sending = sendLoad({
          mxPort: stack.mxPort,
          to: stack.addresses(),
          count: MESSAGES,
          connections: 5,
          paceMs: 100,
          deadlineMs: 6 * 60_000,
          tag: 'sentinel',
          onAck: (n) => {
            for (const m of marks) if (n >= m.at) m.hit();
          },
        });
        const outages: string[] = [];
        await Promise.race([marks[0]?.reached, sending]);
        let t0 = Date.now();
        const planned = await sentinel.failover();
        const plannedSecs = ((Date.now() - t0) / 1000).toFixed(1);
        outages.push(`SENTINEL FAILOVER ${planned.from}→${planned.to} (${plannedSecs} s)`);
        log(
          `SENTINEL FAILOVER: master ${planned.from} → ${planned.to}, replicas back after ${plannedSecs} s`,
        );
        await Promise.race([marks[1]?.reached, sending]);
        t0 = Date.now();
        const lost = await sentinel.killMaster();
        const killSecs = ((Date.now() - t0) / 1000).toFixed(1);
        outages.push(`SIGKILL ${lost.from}→${lost.to} (${killSecs} s)`);
        log(`master ${lost.from} SIGKILLed; the sentinels promoted ${lost.to} after ${killSecs} s`);
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
        const refused = [...load.replies.entries()]
          .filter(([c]) => c.startsWith('5'))
          .reduce((n, [, v]) => n + v, 0);
        const alive = [stack.serve, ...stack.workers].every((p) => p.running);
        return {
          pass: accountingOk(a) && deferred > 0 && refused === 0 && load.unacked === 0 && alive,
          detail:
            `${describeAccounting(a)}; ${deferred} attempts deferred, ${refused} refused during ` +
            `${outages.join(', ')} (${formatReplies(load.replies)})${alive ? '' : '; a process died'}`,
        };
      } finally {
        await stack.close();
      }
    } finally {
      await sentinel.close();
    }
  },
};
