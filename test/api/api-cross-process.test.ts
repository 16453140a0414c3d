// The account API's per-process caches across processes: two API servers on
// one store and one Redis prefix — the rig's, and a second one in its own
// process (test/fixtures/api/api-process.ts) — must agree at once: a session
// revoked, an account deleted or a pin provider changed through one is seen
// by the other's very next request, and rate windows hold across both.
// The cache itself (src/edge/api/account-state-cache.ts) is also checked
// directly: it does serve from memory, drops a wallet on a publication, and
// empties itself when its subscription connection is lost.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { SettingsRepo } from '../../src/core/store/settings-repo.ts';
import {
  AccountStateCache,
  publishAccountChange,
  subscriberName,
} from '../../src/edge/api/account-state-cache.ts';
import { leaseSize, RateLimiter } from '../../src/edge/api/rate-limit.ts';
import {
  type ApiRig,
  DIALECTS,
  newWallet,
  type Reply,
  type RigOptions,
  startRig,
} from '../support/api-rig.ts';

const STEP_UP = 'x-sealpost-step-up';
const REMOTE = { kind: 'remote', endpoint: 'http://127.0.0.1:9999', auth_token: 'daemon-token' };
const S3 = { kind: 's3_bucket', access_key: 'AKIA-test', secret_key: 'very-secret-key', bucket: 'mail-pins' };

interface Other {
  url: string;
  child: ChildProcess;
  get(path: string, token: string): Promise<Reply>;
}

async function startOther(rig: ApiRig): Promise<Other> {
  const child = spawn(
    process.execPath,
    ['bin/run-ts.js', 'test/fixtures/api/api-process.ts', join(rig.dir, 'sealpost.toml')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`second API process exited with ${code}`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  return {
    url,
    child,
    async get(path, token) {
      const res = await fetch(url + path, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      return {
        status: res.status,
        headers: res.headers,
        text,
        body: text === '' ? undefined : JSON.parse(text),
      };
    },
  };
}

async function stopOther(other: Other): Promise<void> {
  if (other.child.exitCode !== null) return;
  const exited = new Promise((resolve) => other.child.once('exit', resolve));
  other.child.kill('SIGTERM');
  await exited;
}

describe.each(DIALECTS)('two API processes on one store and Redis (%s)', (dialect) => {
  let rig: ApiRig;
  let other: Other;

  const start = async (opts: RigOptions = {}) => {
    rig = await startRig(dialect, opts);
    other = await startOther(rig);
  };
  afterEach(async () => {
    if (other) await stopOther(other);
    if (rig) await rig.close();
  });

  const account = async () => {
    const alice = newWallet();
    const token = await rig.login(alice);
    expect((await rig.request('POST', '/v1/account', { token })).status).toBe(201);
    return { alice, token };
  };

  it('sessions revoked on one process are refused by the other at once, every time', async () => {
    await start();
    const { alice } = await account();
    for (let round = 0; round < 5; round++) {
      const token = await rig.login(alice);
      // Warm the other process: several reads, so it answers from its cache.
      for (let i = 0; i < 3; i++)
        expect((await other.get('/v1/account/pin-provider', token)).status).toBe(200);
      const { proof } = await rig.stepUp(token, alice);
      const r = await rig.request('POST', '/v1/auth/revoke-sessions', {
        token,
        headers: { [STEP_UP]: proof },
      });
      expect(r.status).toBe(204);
      const after = await other.get('/v1/account/pin-provider', token);
      expect([after.status, after.body?.error]).toEqual([401, 'session_revoked']);
      // A new login works on both.
      const fresh = await rig.login(alice);
      expect((await other.get('/v1/account/pin-provider', fresh)).status).toBe(200);
    }
  });

  it('a pin provider set, replaced or removed on one process reads back from the other at once', async () => {
    await start();
    const { alice, token } = await account();
    const write = async (method: 'PUT' | 'DELETE', body?: unknown) => {
      const { proof } = await rig.stepUp(token, alice);
      const r = await rig.request(method, '/v1/account/pin-provider', {
        token,
        json: body,
        headers: { [STEP_UP]: proof },
      });
      expect(r.status).toBe(204);
    };
    const readOther = async () => (await other.get('/v1/account/pin-provider', token)).body;
    expect(await readOther()).toEqual({ configured: false, kind: null });
    for (let round = 0; round < 3; round++) {
      await write('PUT', REMOTE);
      expect(await readOther()).toEqual({ configured: true, kind: 'remote' });
      expect(await readOther()).toEqual({ configured: true, kind: 'remote' });
      await write('PUT', S3);
      expect(await readOther()).toEqual({ configured: true, kind: 's3_bucket' });
      await write('DELETE');
      expect(await readOther()).toEqual({ configured: false, kind: null });
    }
  });

  it('an account deleted through one process retires its tokens on the other at once', async () => {
    await start();
    const { alice, token } = await account();
    expect((await other.get('/v1/account', token)).status).toBe(200);
    const { proof } = await rig.stepUp(token, alice);
    expect(
      (await rig.request('DELETE', '/v1/account', { token, headers: { [STEP_UP]: proof } })).status,
    ).toBe(204);
    const after = await other.get('/v1/account/pin-provider', token);
    expect([after.status, after.body?.error]).toEqual([401, 'session_revoked']);
  });

  it('a wallet rate window holds across both processes', async () => {
    // Both processes must be in the same fixed minute: the rig's clock is set once, the other's is real.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    await start({ api: { rate_limit_wallet_per_min: 4 } });
    rig.clock.now = Date.now();
    const { token } = await account();
    // POST /v1/account used one request of the window; three remain in total.
    const statuses: number[] = [];
    for (const target of ['rig', 'other', 'rig', 'other', 'rig', 'other']) {
      const r =
        target === 'rig'
          ? await rig.request('GET', '/v1/account/pin-provider', { token })
          : await other.get('/v1/account/pin-provider', token);
      statuses.push(r.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });
});

describe('the account-state cache', () => {
  let rig: ApiRig;
  let cache: AccountStateCache;
  beforeEach(async () => {
    rig = await startRig('sqlite');
    cache = new AccountStateCache({
      redis: rig.redis,
      prefix: rig.prefix,
      accounts: new AccountsRepo(rig.store.db),
      settings: new SettingsRepo(rig.store.db),
    });
    cache.start();
    await until(() => cache.serving);
  });
  afterEach(async () => {
    await cache?.close();
    await rig?.close();
  });

  async function until(condition: () => boolean): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('serves from memory until a publication drops the wallet', async () => {
    const wallet = newWallet().address;
    const accounts = new AccountsRepo(rig.store.db);
    await accounts.create(wallet, { source: 'self' });
    expect(await cache.pinProvider(wallet)).toEqual({ configured: false, kind: null });
    expect(await cache.session(wallet)).toEqual({ epoch: 0, deletedAt: null });
    // Written behind the cache's back, without a publication: still the cached values.
    await accounts.setPinProvider(wallet, { kind: 'remote', sealedCredentials: 'v1:a:b' });
    const epoch = await new SettingsRepo(rig.store.db).bumpSessionEpoch(wallet);
    expect(await cache.pinProvider(wallet)).toEqual({ configured: false, kind: null });
    expect(await cache.session(wallet)).toEqual({ epoch: 0, deletedAt: null });
    // Published (by anyone on the prefix): once the message reaches this process (PUBLISH
    // returns when Redis has it; the subscriber gets it a moment later, longer on a loaded
    // machine) the wallet is dropped and the next read is fresh. Until then: the cached values.
    await publishAccountChange(rig.redis, rig.prefix, wallet);
    const deadline = Date.now() + 5000;
    for (;;) {
      const seen = await cache.session(wallet);
      if (seen.epoch === epoch) break;
      expect(seen).toEqual({ epoch: 0, deletedAt: null });
      if (Date.now() > deadline) throw new Error('the publication did not reach the cache within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await cache.session(wallet)).toEqual({ epoch, deletedAt: null });
    expect(await cache.pinProvider(wallet)).toEqual({ configured: true, kind: 'remote' });
  });

  it('empties itself and reads through while its subscription is down, then serves again', async () => {
    const wallet = newWallet().address;
    const accounts = new AccountsRepo(rig.store.db);
    await accounts.create(wallet, { source: 'self' });
    expect(await cache.pinProvider(wallet)).toEqual({ configured: false, kind: null });
    await accounts.setPinProvider(wallet, { kind: 'remote', sealedCredentials: 'v1:a:b' });
    const list = (await rig.redis.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((l) => l.includes(` name=${subscriberName(rig.prefix)} `))
      .map((l) => /(?:^| )id=(\d+)/.exec(l)?.[1]);
    // This cache's subscription and the rig API's, both on this test's random prefix.
    expect(ids).toHaveLength(2);
    for (const id of ids) await rig.redis.client('KILL', 'ID', id as string);
    await until(() => !cache.serving);
    expect(await cache.pinProvider(wallet)).toEqual({ configured: true, kind: 'remote' });
    await until(() => cache.serving);
    await accounts.deletePinProvider(wallet);
    expect(await cache.pinProvider(wallet)).toEqual({ configured: false, kind: null });
  });
});

describe('rate windows spent from leases', () => {
  it('two limiters on one Redis never admit more than the limit, and strand at most one lease', async () => {
    const rig = await startRig('sqlite');
    const second = rig.redis.duplicate();
    try {
      const now = () => 1_800_000_000_000 + 30_000;
      const limiters = [
        new RateLimiter(rig.redis, rig.prefix, now),
        new RateLimiter(second, rig.prefix, now),
      ];
      const limit = 500;
      expect(leaseSize(limit)).toBe(5);
      const check = { scope: 'wallet' as const, subject: newWallet().address, bucket: 'api', limit };
      let admitted = 0;
      let refused = 0;
      for (let i = 0; i < 700; i++) {
        try {
          await (limiters[i % 3 === 0 ? 1 : 0] as RateLimiter).hit([check]);
          admitted++;
        } catch (err) {
          expect((err as { statusCode?: number }).statusCode).toBe(429);
          refused++;
        }
      }
      expect(admitted + refused).toBe(700);
      expect(admitted).toBeLessThanOrEqual(limit);
      expect(admitted).toBeGreaterThanOrEqual(limit - leaseSize(limit));
      // Redis counted exactly what it granted: the limit.
      const keys = (await rig.redisKeys()).filter((k) => k.includes(check.subject));
      expect(keys).toHaveLength(1);
      expect(Number(await rig.redis.get(keys[0] as string))).toBe(limit);
    } finally {
      second.disconnect();
      await rig.close();
    }
  });
});
