// Shared rig of the account API tests: a real API on a loopback port over a
// real store (SQLite file or a PostgreSQL schema of its own), real Redis with
// a random key prefix, real key files, and a clock the test can move.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Redis } from 'ioredis';
import { type Config, parseConfig } from '../../src/core/config/index.ts';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { generateKeypair, type Keypair } from '../../src/core/keys/keypair-file.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { buildApi } from '../../src/edge/api/server.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from './postgres.ts';
import { tempDir } from './temp-dir.ts';

export type Dialect = 'sqlite' | 'postgres';
export const DIALECTS: Dialect[] = ['sqlite', 'postgres'];

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON, or undefined for an empty or non-JSON body. */
  // biome-ignore lint/suspicious/noExplicitAny: test replies are inspected field by field.
  body: any;
}

export interface RequestOptions {
  token?: string;
  /** Serialized as JSON with Content-Type: application/json. */
  json?: unknown;
  /** Sent as is. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface ApiRig {
  url: string;
  app: FastifyInstance;
  config: Config;
  store: Store;
  redis: Redis;
  prefix: string;
  dir: string;
  credentialKey: Uint8Array;
  adminToken: string;
  clock: { now: number };
  request(method: string, path: string, opts?: RequestOptions): Promise<Reply>;
  admin(method: string, path: string, opts?: RequestOptions): Promise<Reply>;
  /** Logs the wallet in through the API and returns its token. */
  login(wallet: Keypair): Promise<string>;
  /** A fresh step-up challenge, signed by `signer` (default: the token's wallet). */
  stepUp(token: string, signer: Keypair): Promise<{ nonce: string; proof: string }>;
  /** Keys under this rig's prefix. */
  redisKeys(): Promise<string[]>;
  close(): Promise<void>;
}

export function sign(wallet: Keypair, message: string): string {
  return bs58.encode(ed25519.sign(new TextEncoder().encode(message), wallet.secretKey.subarray(0, 32)));
}

export const newWallet = generateKeypair;

export interface RigOptions {
  /** `[api]` keys over the rig's defaults (rate limits off in effect). */
  api?: Record<string, string | number | boolean | string[]>;
  plugins?: FastifyPluginAsync[];
}

export async function startRig(dialect: Dialect, opts: RigOptions = {}): Promise<ApiRig> {
  const dir = tempDir('sealpost-api-');
  const prefix = `sptest-${randomBytes(6).toString('hex')}`;
  const schema = dialect === 'postgres' ? uniqueSchemaName('sealpost_api') : null;
  const storeUrl = schema ? `${TEST_PG_URL}?schema=${schema}` : 'sqlite:api.sqlite';
  const adminToken = randomBytes(32).toString('hex');
  writeFileSync(join(dir, 'admin.token'), `${adminToken}\n`, { mode: 0o600 });
  const credentialKey = createCredentialKeyFile(join(dir, 'credential.key'));
  const toml = [
    '[smtp]',
    'local_domains = ["mail.test", "other.test"]',
    '[store]',
    `url = "${storeUrl}"`,
    '[redis]',
    `prefix = "${prefix}"`,
    '[api]',
    ...Object.entries({ rate_limit_ip_per_min: 100000, rate_limit_wallet_per_min: 100000, ...opts.api }).map(
      ([k, v]) => `${k} = ${JSON.stringify(v)}`,
    ),
  ].join('\n');
  const configPath = join(dir, 'sealpost.toml');
  writeFileSync(configPath, toml);
  const config = parseConfig(toml, { configDir: dir, dataDirOverride: dir, source: configPath });
  const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
  const redis = createRedis(config.redis, { maxRetriesPerRequest: null });
  const clock = { now: Date.now() };
  const app = await buildApi({ config, store, redis, now: () => clock.now, plugins: opts.plugins });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
    let body: string | Uint8Array | undefined;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] ??= 'application/json';
    } else if (o.raw !== undefined) body = o.raw;
    const res = await fetch(url + path, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  const rig: ApiRig = {
    url,
    app,
    config,
    store,
    redis,
    prefix,
    dir,
    credentialKey,
    adminToken,
    clock,
    request,
    admin: (method, path, o = {}) =>
      request(method, path, { ...o, headers: { authorization: `Bearer ${adminToken}`, ...o.headers } }),
    async login(wallet) {
      const c = await request('POST', '/v1/auth/challenge', { json: { wallet: wallet.address } });
      if (c.status !== 200) throw new Error(`challenge: ${c.status} ${c.text}`);
      const l = await request('POST', '/v1/auth/login', {
        json: { wallet: wallet.address, signature: sign(wallet, c.body.nonce) },
      });
      if (l.status !== 200) throw new Error(`login: ${l.status} ${l.text}`);
      return l.body.token as string;
    },
    async stepUp(token, signer) {
      const r = await request('POST', '/v1/auth/step-up', { token });
      if (r.status !== 200) throw new Error(`step-up: ${r.status} ${r.text}`);
      return { nonce: r.body.nonce, proof: sign(signer, r.body.nonce) };
    },
    async redisKeys() {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
      return keys.sort();
    },
    async close() {
      await app.close();
      const keys = await rig.redisKeys();
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await store.close();
      if (schema) await dropSchema(schema);
    },
  };
  return rig;
}
