// One Redis connection for a CLI command run against a deployment: it
// answers within CONNECT_TIMEOUT_MS or the command ends with one line naming
// the target and the cause — never a hang, whether nothing listens or a peer
// accepts the connection and stays silent.
import type { Redis } from 'ioredis';
import { createRedis, describeRedis, type RedisTarget, redisKeys, sentinelOf } from '../core/redis/client.ts';
import { CliError } from './errors.ts';

/** Redis must answer within this, or the command says so and exits. */
export const CONNECT_TIMEOUT_MS = 3000;
/** A Redis that stops answering mid-command ends the command with an error, not a hang. */
export const COMMAND_TIMEOUT_MS = 15_000;

function describeCause(err: Error): string {
  if (/ETIMEDOUT/.test(err.message)) return `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
  return err.message || 'no answer';
}

export async function connectCliRedis(target: RedisTarget): Promise<Redis> {
  const viaSentinel = sentinelOf(target) !== undefined;
  const redis = createRedis(target, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // The PING below is the readiness check; ioredis's own would keep a silent peer's socket open.
    // With Sentinel it stays on: it is the check that the node Sentinel named is the master
    // (the race below still bounds it).
    enableReadyCheck: viaSentinel,
    retryStrategy: () => null,
    // Each sentinel is tried once; none answering ends the command.
    ...(viaSentinel ? { sentinelRetryStrategy: () => null } : {}),
  });
  // ioredis reports a timeout as "Connection is closed."; the error event has the cause.
  let cause: Error | undefined;
  redis.on('error', (err: Error) => {
    cause ??= err;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('ETIMEDOUT')), CONNECT_TIMEOUT_MS);
    });
    await Promise.race([redis.connect().then(() => redis.ping()), silent]);
  } catch (err) {
    redis.disconnect();
    (redis as unknown as { stream?: { destroy(): void } }).stream?.destroy();
    throw new CliError(
      `cannot reach Redis at ${describeRedis(target)} (${redisKeys(target)}): ${describeCause(cause ?? (err as Error))}`,
    );
  } finally {
    clearTimeout(timer);
  }
  return redis;
}
