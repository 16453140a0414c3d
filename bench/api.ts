// Account API latency and throughput: GET /v1/account/pin-provider with a
// valid JWT (token check, session state, per-IP and per-wallet rate windows
// spent from Redis leases, pin-provider read; docs/api.md "Caches across
// processes") next to a bare Fastify route answering
// the same JSON, both served by one child process, measured one after the
// other by autocannon from this process.
//
//   npm run bench:api -- [--duration 10] [--connections 50] [--store sqlite|postgres]
//
// Needs Redis (REDIS_URL or 127.0.0.1:6379); PostgreSQL only with --store postgres.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import Fastify from 'fastify';
import { parseConfig } from '../src/core/config/index.ts';
import { createCredentialKeyFile } from '../src/core/crypto/credential-seal.ts';
import { generateKeypair } from '../src/core/keys/keypair-file.ts';
import { createRedis } from '../src/core/redis/client.ts';
import { openStore } from '../src/core/store/index.ts';
import { buildApi } from '../src/edge/api/server.ts';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    store: { type: 'string', default: 'sqlite' },
    serve: { type: 'boolean', default: false },
  },
});

interface Targets {
  api: string;
  bare: string;
  token: string;
}

/** Child: both servers, an account with a pin provider, and a token; prints Targets as JSON. */
async function serve(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-api-'));
  const prefix = `bench-${randomBytes(6).toString('hex')}`;
  const schema = `sealpost_bench_${randomBytes(4).toString('hex')}`;
  const pgUrl = process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const storeUrl = values.store === 'postgres' ? `${pgUrl}?schema=${schema}` : 'sqlite:bench.sqlite';
  createCredentialKeyFile(join(dir, 'credential.key'));
  const toml = [
    '[store]',
    `url = "${storeUrl}"`,
    '[redis]',
    `prefix = "${prefix}"`,
    '[api]',
    // High enough never to answer 429; every request still counts against both windows.
    'rate_limit_ip_per_min = 100000000',
    'rate_limit_wallet_per_min = 100000000',
  ].join('\n');
  const config = parseConfig(toml, { configDir: dir, dataDirOverride: dir });
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  const redis = createRedis(config.redis);
  const api = await buildApi({ config, store, redis });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const bare = Fastify();
  bare.get('/bare', async () => ({ configured: true, kind: 'remote' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const apiUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;

  const wallet = generateKeypair();
  const sign = (m: string) =>
    bs58.encode(ed25519.sign(new TextEncoder().encode(m), wallet.secretKey.subarray(0, 32)));
  const post = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(apiUrl + path, {
      method: body === undefined ? 'POST' : path.endsWith('pin-provider') ? 'PUT' : 'POST',
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.status === 204 ? null : ((await res.json()) as Record<string, unknown>);
  };
  const { nonce } = (await post('/v1/auth/challenge', { wallet: wallet.address })) as { nonce: string };
  const { token } = (await post('/v1/auth/login', { wallet: wallet.address, signature: sign(nonce) })) as {
    token: string;
  };
  const auth = { authorization: `Bearer ${token}` };
  await post('/v1/account', undefined, auth);
  const stepUp = (await post('/v1/auth/step-up', undefined, auth)) as { nonce: string };
  await post(
    '/v1/account/pin-provider',
    { kind: 'remote' },
    { ...auth, 'x-sealpost-step-up': sign(stepUp.nonce) },
  );

  const targets: Targets = {
    api: `${apiUrl}/v1/account/pin-provider`,
    bare: `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/bare`,
    token,
  };
  process.stdout.write(`${JSON.stringify(targets)}\n`);
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await api.close();
  await bare.close();
  for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 })) {
    if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
  }
  await redis.quit();
  if (values.store === 'postgres') {
    const { sql } = await import('kysely');
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

async function measure(): Promise<void> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const child = spawn(
    process.execPath,
    [
      join(fileURLToPath(import.meta.url), '..', '..', 'bin', 'run-ts.js'),
      fileURLToPath(import.meta.url),
      '--serve',
      '--store',
      values.store as string,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
  });
  const targets = JSON.parse(first) as Targets;
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  try {
    const run = async (url: string, headers?: Record<string, string>) => {
      await autocannon({ url, connections, duration: 2, headers }); // warm-up
      return autocannon({ url, connections, duration, headers });
    };
    const bare = await run(targets.bare);
    const api = await run(targets.api, { authorization: `Bearer ${targets.token}` });
    if (api.non2xx > 0 || api.errors > 0)
      throw new Error(`API answered ${api.non2xx} non-2xx, ${api.errors} errors`);
    const row = (name: string, r: AutocannonResult) =>
      `${name.padEnd(44)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms`;
    process.stdout.write(
      [
        `account API benchmark: ${connections} connections, ${duration} s each, store ${values.store}`,
        row('bare Fastify route', bare),
        row('GET /v1/account/pin-provider (valid JWT)', api),
        `ratio API / bare: ${(api.requests.average / bare.requests.average).toFixed(3)} of the requests/s, ` +
          `${(api.latency.p99 / Math.max(bare.latency.p99, 1)).toFixed(2)}x the p99`,
        '',
      ].join('\n'),
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

if (values.serve) await serve();
else await measure();
