// Redis connections with the behaviour each role needs. The MX must fail
// fast (a 4xx now beats a 250 that cannot be queued), so its connection
// has no offline queue; workers block on Redis and retry forever. Both go
// through src/core/redis/client.ts (one URL or Redis Sentinel).
import type { Redis } from 'ioredis';
import type { Logger } from '../../core/log.ts';
import { createRedis, type RedisTarget } from '../../core/redis/client.ts';

export function edgeRedis(target: RedisTarget, log: Logger): Redis {
  const r = createRedis(target, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  r.on('error', (err) => log.warn({ err: err.message }, 'redis (mx) connection error'));
  return r;
}

export function workerRedis(target: RedisTarget, log: Logger): Redis {
  const r = createRedis(target, {
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(times * 200, 5000),
  });
  r.on('error', (err) => log.warn({ err: err.message }, 'redis (worker) connection error'));
  return r;
}
