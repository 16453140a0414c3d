// A real Redis Sentinel deployment on loopback for tests and drills: one
// master and N replicas (`redis-server`, appendonly with fsync on every
// write, each in its own temp directory on a random port) and M sentinels
// (`redis-server <conf> --sentinel`) watching them with short timeouts.
// `failover()` is the operator's `SENTINEL FAILOVER`, `killMaster()` a host
// loss; `close()` stops every process and removes every directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

export interface SentinelRedisOptions {
  /** Replicas of the master (default 1). */
  replicas?: number;
  /** Sentinels (default 1); the quorum is a majority of them. */
  sentinels?: number;
  /** The master group name (default "sealpost"). */
  name?: string;
  /** `min-replicas-to-write` on every node (default 1: a master cut off from its replicas refuses writes). */
  minReplicasToWrite?: number;
  /** `sentinel down-after-milliseconds` (default 1000). */
  downAfterMs?: number;
}

export interface SentinelRedis {
  name: string;
  /** `127.0.0.1:PORT` of each sentinel, for `[redis] sentinels`. */
  sentinels: string[];
  /** The redis-server ports, the first master at the start. */
  nodePorts: number[];
  /** The port the sentinels name as master now. */
  masterPort(): Promise<number>;
  /** `SENTINEL FAILOVER`; resolves once a replica is the master and the sentinels name it. */
  failover(timeoutMs?: number): Promise<{ from: number; to: number }>;
  /** SIGKILLs the master; resolves once the sentinels have promoted a replica. */
  killMaster(timeoutMs?: number): Promise<{ from: number; to: number }>;
  /** The TOML lines of `[redis]` for this deployment (without the table header). */
  toml(): string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('no free loopback port');
  return address.port;
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`);
    }
    await sleep(100);
  }
}

/** One short-lived command to a server (never retried, never queued). */
async function ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1000,
    commandTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

export async function startSentinelRedis(opts: SentinelRedisOptions = {}): Promise<SentinelRedis> {
  const name = opts.name ?? 'sealpost';
  const replicas = opts.replicas ?? 1;
  const sentinelCount = opts.sentinels ?? 1;
  const quorum = Math.floor(sentinelCount / 2) + 1;
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-sentinel-'));
  const procs = new Map<number, ChildProcess>();
  const start = (port: number, args: string[]) => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    child.on('error', () => {});
    procs.set(port, child);
  };
  const stop = async (port: number, signal: NodeJS.Signals) => {
    const child = procs.get(port);
    procs.delete(port);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await Promise.race([exited, sleep(5000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const close = async () => {
    await Promise.all([...procs.keys()].map((p) => stop(p, 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const nodePorts: number[] = [];
    for (let i = 0; i <= replicas; i++) nodePorts.push(await freePort());
    const [first] = nodePorts as [number];
    for (const [i, port] of nodePorts.entries()) {
      const nodeDir = join(dir, `node-${port}`);
      mkdirSync(nodeDir);
      // A config file, so `CONFIG REWRITE` (sent by Sentinel on every role change) has one to write.
      const conf = join(nodeDir, 'redis.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${nodeDir}`,
          'appendonly yes',
          'appendfsync always',
          'save ""',
          'maxmemory-policy noeviction',
          `min-replicas-to-write ${opts.minReplicasToWrite ?? 1}`,
          'min-replicas-max-lag 10',
          'repl-diskless-sync no',
          ...(i === 0 ? [] : [`replicaof 127.0.0.1 ${first}`]),
          '',
        ].join('\n'),
      );
      start(port, [conf]);
    }
    for (const port of nodePorts) {
      await waitFor(`redis-server on ${port} did not answer`, 10_000, async () =>
        (await ask(port, (r) => r.ping())) === 'PONG' ? true : undefined,
      );
    }
    for (const port of nodePorts.slice(1)) {
      await waitFor(`replica ${port} did not sync`, 15_000, async () =>
        /master_link_status:up/.test(await ask(port, (r) => r.info('replication'))) ? true : undefined,
      );
    }
    const sentinelPorts: number[] = [];
    for (let i = 0; i < sentinelCount; i++) sentinelPorts.push(await freePort());
    for (const port of sentinelPorts) {
      const sDir = join(dir, `sentinel-${port}`);
      mkdirSync(sDir);
      const conf = join(sDir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${sDir}`,
          `sentinel monitor ${name} 127.0.0.1 ${first} ${quorum}`,
          `sentinel down-after-milliseconds ${name} ${opts.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      start(port, [conf, '--sentinel']);
    }
    // Ready when every sentinel knows every replica and (with several) the other sentinels.
    for (const port of sentinelPorts) {
      await waitFor(`sentinel ${port} did not see the replicas`, 30_000, async () => {
        const seen = (await ask(port, (r) => r.call('SENTINEL', 'REPLICAS', name))) as string[][];
        const ok = seen.filter((fields) => {
          const f = Object.fromEntries(fields.flatMap((v, i, a) => (i % 2 ? [] : [[v, a[i + 1] as string]])));
          return f.flags === 'slave' && f['master-link-status'] === 'ok';
        });
        return ok.length === replicas ? true : undefined;
      });
      if (sentinelCount > 1) {
        await waitFor(`sentinel ${port} did not see the other sentinels`, 30_000, async () => {
          const others = (await ask(port, (r) => r.call('SENTINEL', 'SENTINELS', name))) as unknown[];
          return others.length === sentinelCount - 1 ? true : undefined;
        });
      }
    }
    const sentinels = sentinelPorts.map((p) => `127.0.0.1:${p}`);
    const masterPort = async () => {
      for (const port of sentinelPorts) {
        try {
          const addr = (await ask(port, (r) =>
            r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name),
          )) as string[];
          return Number(addr[1]);
        } catch {
          // that sentinel is down: ask the next
        }
      }
      throw new Error('no sentinel answers');
    };
    /** Until a sentinel names another master than `from`, that node says it is master and has its replicas. */
    const promoted = async (from: number, timeoutMs: number, remaining: number) =>
      waitFor(`no replica was promoted from ${from}`, timeoutMs, async () => {
        const to = await masterPort();
        if (to === from) return undefined;
        const info = await ask(to, (r) => r.info('replication'));
        const connected = Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? 0);
        return /role:master/.test(info) && connected >= remaining ? { from, to } : undefined;
      });
    return {
      name,
      sentinels,
      nodePorts,
      masterPort,
      async failover(timeoutMs = 60_000) {
        const from = await masterPort();
        await ask(sentinelPorts[0] as number, (r) => r.call('SENTINEL', 'FAILOVER', name));
        // The old master comes back as a replica of the new one (Sentinel reconfigures it).
        return promoted(from, timeoutMs, replicas);
      },
      async killMaster(timeoutMs = 60_000) {
        const from = await masterPort();
        await stop(from, 'SIGKILL');
        return promoted(from, timeoutMs, replicas - 1);
      },
      toml: () => `sentinels = ${JSON.stringify(sentinels)}\nname = "${name}"`,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
