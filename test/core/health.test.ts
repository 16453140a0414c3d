// GET /health and GET /ready over real sockets on every listener that has
// them: the account API, a worker's metrics listener, pind (both roles) and
// domaind. Dependencies are real (Redis, SQLite, devnet, pind); a dependency
// is "down" by pointing the process at a loopback port nothing listens on,
// never by stopping the shared Redis.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Pind, startPind } from '../../pinning/pind/server.ts';
import { type Config, parseConfig } from '../../src/core/config/index.ts';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { createLogger } from '../../src/core/log.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { buildApi } from '../../src/edge/api/server.ts';
import { startDomaind } from '../../src/edge/domaind/server.ts';
import { startServe } from '../../src/run/serve/serve.ts';
import { startTestChain } from '../support/devnet.ts';
import { startServeRig } from '../support/serve-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

/** A loopback port that was free a moment ago and has nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Probe {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: inspected field by field.
  body: any;
}

async function get(url: string): Promise<Probe> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

function expectAllUp(probe: Probe, names: string[]): void {
  expect(probe.status).toBe(200);
  expect(probe.body.status).toBe('ok');
  expect(Object.keys(probe.body.dependencies).sort()).toEqual([...names].sort());
  for (const name of names) {
    expect(probe.body.dependencies[name].state, name).toBe('up');
    expect(probe.body.dependencies[name].error).toBeUndefined();
    expect(typeof probe.body.dependencies[name].latency_ms).toBe('number');
  }
}

function expectDown(probe: Probe, down: string, up: string[]): void {
  expect(probe.status).toBe(503);
  expect(probe.body.status).toBe('unavailable');
  expect(probe.body.dependencies[down].state).toBe('down');
  expect(probe.body.dependencies[down].error).toMatch(/\S/);
  expect(probe.body.dependencies[down].error.length).toBeLessThanOrEqual(200);
  for (const name of up) expect(probe.body.dependencies[name].state, name).toBe('up');
}

async function pind(dir: string): Promise<Pind> {
  const p = await startPind({
    dataDir: dir,
    pin: { host: '127.0.0.1', port: 0 },
    gateway: { host: '127.0.0.1', port: 0 },
    maxPinBytes: 1024 * 1024,
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(() => p.close());
  return p;
}

/** The account API alone over a SQLite store, with the given Redis, chain RPC and pind URLs. */
async function api(opts: {
  redisUrl: string;
  rpcUrl: string;
  pindUrl: string;
  log?: string[];
  rateLimit?: number;
}): Promise<{ url: string; app: FastifyInstance; config: Config; store: Store }> {
  const dir = tempDir('sealpost-health-');
  const prefix = `sptest-${randomBytes(6).toString('hex')}`;
  createCredentialKeyFile(join(dir, 'credential.key'));
  const toml = `
[chain]
rpc_url = "${opts.rpcUrl}"
[ipfs]
pind_url = "${opts.pindUrl}"
[redis]
url = "${opts.redisUrl}"
prefix = "${prefix}"
[api]
rate_limit_ip_per_min = ${opts.rateLimit ?? 600}
`;
  writeFileSync(join(dir, 'sealpost.toml'), toml);
  const config = parseConfig(toml, { configDir: dir, dataDirOverride: dir, source: 'health test' });
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  const redis = createRedis(config.redis, { maxRetriesPerRequest: null, retryStrategy: () => 200 });
  redis.on('error', () => {});
  const lines = opts.log;
  const logger = lines
    ? createLogger({
        level: 'info',
        destination: new Writable({
          write(chunk, _enc, done) {
            lines.push(String(chunk));
            done();
          },
        }),
      })
    : undefined;
  const app = await buildApi({ config, store, redis, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    await app.close();
    const keys = redis.status === 'ready' ? await redis.keys(`${prefix}:*`) : [];
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await store.close();
  });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, app, config, store };
}

describe('health and readiness', () => {
  it('serve and a worker: the API and the metrics listener report Redis, store, chain RPC and operator pin', async () => {
    const rig = await startServeRig();
    const apiUrl = rig.serving.apiUrl as string;
    expect(await get(`${apiUrl}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    expectAllUp(await get(`${apiUrl}/ready`), [
      'redis',
      'spool_reconcile',
      'store',
      'chain_rpc',
      'operator_pin',
    ]);

    const worker = await startServe({
      config: rig.config,
      logger: pino({ level: 'silent' }),
      components: { smtp: false, workers: true, api: false },
      metricsListen: { host: '127.0.0.1', port: 0 },
    });
    cleanups.push(() => worker.close());
    expect(await get(`${worker.metricsUrl}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    expectAllUp(await get(`${worker.metricsUrl}/ready`), [
      'redis',
      'spool_reconcile',
      'store',
      'chain_rpc',
      'operator_pin',
    ]);

    // The rig's pind (one listener, both roles) answers too, without its token.
    expect(await get(`${rig.pinUrl}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    expectAllUp(await get(`${rig.pinUrl}/ready`), ['store']);

    // The chain goes away: every /ready that uses it says so (results are cached for a second).
    await rig.chain.devnet.close();
    await new Promise((r) => setTimeout(r, 1100));
    expectDown(await get(`${apiUrl}/ready`), 'chain_rpc', ['redis', 'store', 'operator_pin']);
    expectDown(await get(`${worker.metricsUrl}/ready`), 'chain_rpc', ['redis', 'store', 'operator_pin']);
    expect((await get(`${apiUrl}/health`)).status).toBe(200);
  }, 120_000);

  it('API: 503 naming Redis when Redis is unreachable; /health still 200', async () => {
    const chain = await startTestChain();
    const p = await pind(tempDir('sealpost-pind-'));
    const a = await api({
      redisUrl: `redis://127.0.0.1:${await closedPort()}`,
      rpcUrl: chain.devnet.rpcUrl,
      pindUrl: p.pinUrl,
    });
    const ready = await get(`${a.url}/ready`);
    expectDown(ready, 'redis', ['store', 'chain_rpc', 'operator_pin']);
    expect(ready.body.dependencies.redis.error).toMatch(/not connected|ECONNREFUSED/);
    expect(await get(`${a.url}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
  }, 60_000);

  it('API: 503 naming the chain RPC when it is down; probes are documented, never rate-limited, not logged at info', async () => {
    const p = await pind(tempDir('sealpost-pind-'));
    const log: string[] = [];
    const a = await api({
      redisUrl: 'redis://127.0.0.1:6379',
      rpcUrl: `http://127.0.0.1:${await closedPort()}`,
      pindUrl: p.pinUrl,
      rateLimit: 3,
      log,
    });
    const doc = await a.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    const paths = JSON.parse(doc.body).paths ?? {};
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/health', '/ready']));
    expect(Object.keys(paths['/ready'].get.responses).sort()).toEqual(['200', '503']);
    const ready = await get(`${a.url}/ready`);
    expectDown(ready, 'chain_rpc', ['redis', 'store', 'operator_pin']);
    expect(ready.body.dependencies.chain_rpc.error).toMatch(/ECONNREFUSED|fetch failed/);
    // Far past the per-IP limit of 3 a minute: probes still answer; other routes get 429.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${a.url}/${i % 2 ? 'health' : 'ready'}`).then((r) => r.status),
      ),
    );
    expect(new Set(answers)).toEqual(new Set([200, 503]));
    const limited = [];
    for (let i = 0; i < 5; i++) limited.push((await fetch(`${a.url}/v1/openapi.json`)).status);
    expect(limited).toContain(429);
    expect(log.filter((l) => /"url":"\/(health|ready)"/.test(l))).toEqual([]);
    expect(log.some((l) => l.includes('/v1/openapi.json'))).toBe(true);
  }, 60_000);

  it('worker metrics listener: 503 naming Redis when Redis is unreachable', async () => {
    const chain = await startTestChain();
    const dir = tempDir('sealpost-worker-');
    const toml = `
[chain]
rpc_url = "${chain.devnet.rpcUrl}"
authority_key_file = "${join(dir, 'authority.json')}"
[api]
credential_key_file = "${join(dir, 'credential.key')}"
[redis]
url = "redis://127.0.0.1:${await closedPort()}"
[log]
level = "silent"
`;
    createCredentialKeyFile(join(dir, 'credential.key'));
    const { writeKeypairFile, generateKeypair } = await import('../../src/core/keys/keypair-file.ts');
    writeKeypairFile(join(dir, 'authority.json'), generateKeypair());
    const config = parseConfig(toml, { configDir: dir, dataDirOverride: dir, source: 'health test' });
    // The metrics listener of a process whose queues are elsewhere: Redis, store and chain, no pinning.
    const proc = await startServe({
      config,
      logger: pino({ level: 'silent' }),
      components: { smtp: false, workers: false, api: false, spooler: false },
      metricsListen: { host: '127.0.0.1', port: 0 },
    });
    cleanups.push(() => proc.close());
    expect(await get(`${proc.metricsUrl}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await get(`${proc.metricsUrl}/ready`);
    expectDown(ready, 'redis', ['store', 'chain_rpc']);
    // The spool reconcile's figures live in Redis too: unreadable with it.
    expect(Object.keys(ready.body.dependencies).sort()).toEqual([
      'chain_rpc',
      'redis',
      'spool_reconcile',
      'store',
    ]);
  }, 60_000);

  it('domaind: /health, /ready with the chain RPC up, 503 naming it when down', async () => {
    const chain = await startTestChain();
    const config = (rpcUrl: string) =>
      parseConfig(`[chain]\nrpc_url = "${rpcUrl}"\n[log]\nlevel = "silent"\n`, {
        dataDirOverride: tempDir(),
        source: 'health test',
      });
    const up = await startDomaind({ config: config(chain.devnet.rpcUrl), host: '127.0.0.1', port: 0 });
    cleanups.push(() => up.close());
    expect(await get(`${up.url}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await get(`${up.url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.dependencies.chain_rpc.state).toBe('up');
    expect(ready.body.local_domains.status).toBe('unchecked');

    const down = await startDomaind({
      config: config(`http://127.0.0.1:${await closedPort()}`),
      host: '127.0.0.1',
      port: 0,
    });
    cleanups.push(() => down.close());
    expect((await get(`${down.url}/health`)).status).toBe(200);
    expectDown(await get(`${down.url}/ready`), 'chain_rpc', []);
  }, 60_000);

  it('pind: both listeners answer without a token; 503 naming the store when its directory is gone', async () => {
    const dir = join(tempDir('sealpost-pind-'), 'store');
    const p = await startPind({
      dataDir: dir,
      pin: { host: '127.0.0.1', port: 0 },
      gateway: { host: '127.0.0.1', port: 0 },
      authToken: 'a-token-the-probes-do-not-need',
      maxPinBytes: 1024 * 1024,
      logger: pino({ level: 'silent' }),
    });
    cleanups.push(() => p.close());
    expect(p.pinUrl).not.toBe(p.gatewayUrl);
    for (const base of [p.pinUrl, p.gatewayUrl]) {
      expect(await get(`${base}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      expectAllUp(await get(`${base}/ready`), ['store']);
    }
    expect((await fetch(`${p.pinUrl}/pins`, { method: 'POST', body: 'x' })).status).toBe(401);
    rmSync(dir, { recursive: true, force: true });
    await new Promise((r) => setTimeout(r, 1100));
    expectDown(await get(`${p.gatewayUrl}/ready`), 'store', []);
    expect((await get(`${p.pinUrl}/health`)).status).toBe(200);
  }, 30_000);
});
