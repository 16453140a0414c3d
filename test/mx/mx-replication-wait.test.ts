// With Redis replicas, the MX's group commit waits (WAIT) until a replica
// holds a batch's jobs before its 250s, so a failover right after cannot
// promote a replica without them; a replica that does not answer in
// `[redis] wait_timeout_ms` delays the 250 by that much, never refuses it,
// and is counted.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sendOne } from '../support/cost-guard-helpers.ts';
import { startSentinelRedis } from '../support/redis-sentinel.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

describe('[redis] wait_replicas', () => {
  it('holds the 250 for a replica, up to wait_timeout_ms, and counts a replica that is late', async () => {
    const sentinel = await startSentinelRedis({ replicas: 1, sentinels: 1, minReplicasToWrite: 0 });
    let rig: ServeRig | undefined;
    try {
      rig = await startServeRig({ redisToml: `${sentinel.toml()}\nwait_timeout_ms = 600` });
      const bob = await rig.mail.mailbox();
      const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
      const shortCount = () =>
        Number(
          /^sealpost_mx_replication_short_total (\d+)$/m.exec(rig?.serving.metrics.render() ?? '')?.[1] ?? 0,
        );

      // A replica that keeps up: the 250 comes at once and nothing is counted.
      const t0 = Date.now();
      expect((await sendOne(rig.mxPort, 'alice@remote.example', to, 'quick')).code).toBe(250);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(shortCount()).toBe(0);

      // The replica stopped: the 250 waits the 600 ms timeout, then goes out, and is counted.
      const master = await sentinel.masterPort();
      const replicaPort = sentinel.nodePorts.find((p) => p !== master) as number;
      const replica = new Redis({ port: replicaPort, host: '127.0.0.1', lazyConnect: true });
      await replica.connect();
      const pid = Number(/process_id:(\d+)/.exec(await replica.info('server'))?.[1]);
      replica.disconnect();
      expect(pid).toBeGreaterThan(0);
      // Stopped, the replica acknowledges nothing (DEBUG SLEEP is off by default in Redis 7).
      process.kill(pid, 'SIGSTOP');
      let late: { code: number };
      let waited: number;
      try {
        const t1 = Date.now();
        late = await sendOne(rig.mxPort, 'alice@remote.example', to, 'late');
        waited = Date.now() - t1;
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      expect(late.code).toBe(250);
      expect(waited).toBeGreaterThanOrEqual(550);
      expect(shortCount()).toBe(1);
    } finally {
      await rig?.stop();
      rig?.redis.disconnect();
      await sentinel.close();
    }
  }, 120_000);
});
