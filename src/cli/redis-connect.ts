// One Redis connection for a CLI command run against a deployment: it
// answers within CONNECT_TIMEOUT_MS or the command ends with one line naming
// the target and the cause — never a hang, whether nothing listens or a peer
// accepts the connection and stays silent.
import { Redis } from 'ioredis';
import { CliError } from './errors.ts';

/** Redis must answer within this, or the command says so and exits. */
export const CONNECT_TIMEOUT_MS = 3000;
/** A Redis that stops answering mid-command ends the command with an error, not a hang. */
export const COMMAND_TIMEOUT_MS = 15_000;

function redisTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'the configured Redis';
  }
}

function describeCause(err: Error): string {
  if (/ETIMEDOUT/.test(err.message)) return `no answer within ${CONNECT_TIMEOUT_MS / 1000} s`;
  return err.message || 'no answer';
}

export async function connectCliRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // The PING below is the readiness check; ioredis's own would keep a silent peer's socket open.
    enableReadyCheck: false,
    retryStrategy: () => null,
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
      `cannot reach Redis at ${redisTarget(url)} ([redis] url): ${describeCause(cause ?? (err as Error))}`,
    );
  } finally {
    clearTimeout(timer);
  }
  return redis;
}
