// `sealpost dev` needs Redis (BullMQ has no embedded form). Use the one at
// REDIS_URL when it answers; otherwise start a private redis-server when the
// binary exists; otherwise fail with instructions.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createRedis } from '../../core/redis/client.ts';

export interface DevRedis {
  url: string;
  /** True when this process started the server (and stops it on close). */
  started: boolean;
  close(): Promise<void>;
}

export async function redisAnswers(url: string, timeoutMs = 1500): Promise<boolean> {
  const client = createRedis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A loopback port nothing listens on right now (for a server that cannot be told to pick one). */
async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('could not find a free loopback port');
  return address.port;
}

export async function ensureRedis(opts: {
  url: string;
  dataDir: string;
  binary?: string;
  /** When a server must be started here: on a free port rather than the URL's (several stacks side by side). */
  randomPort?: boolean;
}): Promise<DevRedis> {
  if (await redisAnswers(opts.url)) {
    return { url: opts.url, started: false, close: async () => {} };
  }
  const parsed = new URL(opts.url);
  const host = parsed.hostname || '127.0.0.1';
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) {
    throw new Error(
      `Redis at ${opts.url} does not answer, and it is not a loopback address this command could start a server on. Start Redis there or set REDIS_URL.`,
    );
  }
  const port = opts.randomPort ? await freeLoopbackPort() : Number(parsed.port || 6379);
  parsed.port = String(port);
  const url = parsed.toString().replace(/\/$/, '');
  const dir = join(opts.dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const binary = opts.binary ?? 'redis-server';
  let child: ChildProcess;
  try {
    child = spawn(
      binary,
      // Every write fsynced before Redis answers (docs/operations.md "Redis settings"): a crash loses no job state.
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(port),
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
  } catch (err) {
    throw redisMissing(url, err);
  }
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  for (let i = 0; i < 50; i++) {
    const failed = await Promise.race([spawnError, sleep(100).then(() => null)]);
    if (failed) throw redisMissing(url, failed);
    if (await redisAnswers(url, 300)) {
      return {
        url,
        started: true,
        close: async () => {
          if (child.exitCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
  }
  child.kill('SIGKILL');
  throw redisMissing(url, new Error('redis-server did not answer within 5 s'));
}

function redisMissing(url: string, cause: unknown): Error {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `Redis does not answer at ${url} and no redis-server could be started (${why}). ` +
      'Install Redis (Debian: apt-get install redis-server) or start one and set REDIS_URL=redis://HOST:PORT.',
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
