// The one place Sealpost makes a Redis client. `[redis]` is either one URL
// or Redis Sentinel (`sentinels` + `name`); every role (MX edge, workers,
// CLI, probes, BullMQ's connections, which are these clients or their
// duplicates) keeps its own options and gets the same way to the master.
//
// During a Sentinel failover commands fail or wait, depending on the role's
// options; the client finds the new master by itself:
// - `failoverDetector`: each client listens for `+switch-master` on the
//   sentinels and drops its connection at once, instead of writing to a
//   demoted master until something else notices;
// - the ready check asks the node its role (ioredis's SentinelConnector
//   check), so a reconnect that lands on a node that is no longer master
//   tries again;
// - `reconnectOnError`: a node that answers READONLY (a master demoted to a
//   replica) or NOREPLICAS (a master cut off from its replicas by
//   `min-replicas-to-write`) makes the client reconnect, so the next command
//   goes to the master Sentinel names. The command that got the error fails
//   (it is not re-sent: inside a MULTI that would run its parts one by one);
//   its caller answers 451 or retries.
import { Redis, type RedisOptions } from 'ioredis';
import { splitHostPort } from '../config/fields.ts';
import type { RedisConfig, RedisSentinelConfig } from '../config/types.ts';
import { readSecretFile } from './secret-file.ts';

/** Where Redis is: a `redis://` URL, or the `[redis]` table (its URL or its Sentinel keys). */
export type RedisTarget = string | Omit<RedisConfig, 'prefix'>;

/** The Sentinel settings of a target, or undefined when it is a URL. */
export function sentinelOf(target: RedisTarget): RedisSentinelConfig | undefined {
  if (typeof target === 'string' || !target.sentinels?.length || !target.name) return undefined;
  return { ...target, sentinels: target.sentinels, name: target.name };
}

function urlOf(target: RedisTarget): string {
  const url = typeof target === 'string' ? target : target.url;
  if (url === undefined) throw new Error('[redis] has neither url nor sentinels and name');
  return url;
}

/** For messages: `HOST:PORT`, or `Sentinel master "NAME" via HOST:PORT, …`. */
export function describeRedis(target: RedisTarget): string {
  const s = sentinelOf(target);
  if (s) return `Sentinel master "${s.name}" via ${s.sentinels.join(', ')}`;
  try {
    const u = new URL(urlOf(target));
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'the configured Redis';
  }
}

/** The config keys an operator fixes when Redis cannot be reached. */
export function redisKeys(target: RedisTarget): string {
  return sentinelOf(target) ? '[redis] sentinels, name' : '[redis] url';
}

/** READONLY / NOREPLICAS: this node is not (or no longer) a writable master. */
export function isFailoverError(err: Error): boolean {
  return /^(READONLY|NOREPLICAS)\b/.test(err.message);
}

/** ioredis `reconnectOnError`: reconnect (and fail the command) on a failover error. */
export function reconnectOnFailoverError(err: Error): 1 | false {
  return isFailoverError(err) ? 1 : false;
}

/**
 * A client for `target` with the role's `options` (they win over the
 * defaults here). With Sentinel, `sentinelRetryStrategy` is ioredis's
 * (retry the sentinels forever) unless the caller gives one: a caller that
 * must fail fast (the CLI) passes `() => null`.
 */
export function createRedis(target: RedisTarget, options: RedisOptions = {}): Redis {
  const s = sentinelOf(target);
  if (!s) return new Redis(urlOf(target), { reconnectOnError: reconnectOnFailoverError, ...options });
  return closesDetectorOnEnd(
    new Redis({ ...sentinelOptions(s), reconnectOnError: reconnectOnFailoverError, ...options }),
  );
}

/**
 * ioredis 5 leaves the failover detector's sentinel subscriptions open after
 * `quit()` (redis/ioredis#1362): a process that quit every client would
 * never exit. Once the client has ended, `disconnect()` closes them; the
 * same for its duplicates (BullMQ's blocking connections).
 */
function closesDetectorOnEnd(client: Redis): Redis {
  client.on('end', () => client.disconnect());
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override) => closesDetectorOnEnd(duplicate(override));
  return client;
}

/** The connection options for a Sentinel deployment (passwords read from their files now). */
export function sentinelOptions(s: RedisSentinelConfig): RedisOptions {
  const tls = s.tls ? {} : undefined;
  return {
    sentinels: s.sentinels.map((hp) => splitHostPort(hp, 26379)),
    name: s.name,
    role: 'master',
    ...(s.username !== undefined ? { username: s.username } : {}),
    ...(s.password_file !== undefined ? { password: readSecretFile(s.password_file) } : {}),
    ...(s.db !== undefined ? { db: s.db } : {}),
    ...(tls ? { tls, enableTLSForSentinelMode: true } : {}),
    ...(s.sentinel_username !== undefined ? { sentinelUsername: s.sentinel_username } : {}),
    ...(s.sentinel_password_file !== undefined
      ? { sentinelPassword: readSecretFile(s.sentinel_password_file) }
      : {}),
    ...(s.sentinel_tls ? { sentinelTLS: {} } : {}),
    failoverDetector: true,
    // A sentinel that accepts the connection and stays silent is skipped for the next one.
    sentinelCommandTimeout: 3000,
  };
}
