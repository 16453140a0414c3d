// The building blocks of the cost guard against real Redis (random key
// prefix, removed after each test): token-bucket windows (all-or-nothing
// across keys, refunds, concurrency from several connections), wallet
// leases (own-only release, expiry, keep-alive) and the metrics registry.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/core/config/index.ts';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { publicationLimitsFromConfig } from '../../src/core/limits/cost-guard.ts';
import { acquireLease, acquireWalletLease, LeaseSet } from '../../src/core/limits/lease.ts';
import { costGuardMetrics, MetricsRegistry } from '../../src/core/limits/metrics.ts';
import {
  walletLeaseKey,
  walletLeasePattern,
  walletRateWindowPattern,
} from '../../src/core/limits/redis-keys.ts';
import { WindowLimiter, type WindowSpec } from '../../src/core/limits/window.ts';
import { DAY_MS, HOUR_MS, SendRate } from '../../src/edge/submission/send-rate.ts';

let redis: Redis;
let prefix: string;
const extra: Redis[] = [];

beforeEach(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  prefix = `sptest-cg-${randomBytes(6).toString('hex')}`;
});

afterEach(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  for (const r of extra.splice(0)) r.disconnect();
  redis.disconnect();
});

/** A clock the test moves by hand. */
function manualClock(start = 1_800_000_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const win = (name: string, limit: number, windowMs: number): WindowSpec => ({
  key: `${prefix}:w:${name}`,
  limit,
  windowMs,
});

describe('WindowLimiter', () => {
  it('lets `limit` through at once, then one per window/limit, with the exact wait as retry hint', async () => {
    const clock = manualClock();
    const limiter = new WindowLimiter(redis, clock.now);
    const w = win('a', 3, 60_000);
    for (let i = 0; i < 3; i++) expect((await limiter.take([w])).ok).toBe(true);
    const refused = await limiter.take([w]);
    expect(refused).toEqual({ ok: false, window: w, retryAfterMs: 20_000 });
    clock.advance(19_999);
    expect((await limiter.take([w])).ok).toBe(false);
    clock.advance(1);
    expect((await limiter.take([w])).ok).toBe(true);
    expect((await limiter.take([w])).ok).toBe(false);
    // After a whole window of silence the bucket is full again.
    clock.advance(60_000);
    for (let i = 0; i < 3; i++) expect((await limiter.take([w])).ok).toBe(true);
    expect((await limiter.take([w])).ok).toBe(false);
  });

  it('keeps the last unit of buckets whose interval is not a whole number of ms', async () => {
    const clock = manualClock();
    const limiter = new WindowLimiter(redis, clock.now);
    for (const [limit, windowMs] of [
      [7, 1000],
      [3001, 3_600_000],
    ] as const) {
      const w = win(`odd-${limit}`, limit, windowMs);
      let ok = 0;
      for (let i = 0; i < limit + 3; i++) if ((await limiter.take([w])).ok) ok++;
      expect(ok).toBe(limit);
    }
  });

  it('charges all windows or none', async () => {
    const clock = manualClock();
    const limiter = new WindowLimiter(redis, clock.now);
    const roomy = win('roomy', 5, 60_000);
    const tight = win('tight', 1, 60_000);
    expect(await limiter.take([roomy, tight])).toEqual({ ok: true, windows: [roomy, tight] });
    const refused = await limiter.take([roomy, tight]);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.window.key).toBe(tight.key);
    // The refused take left the roomy window alone.
    expect(await limiter.usage([roomy, tight])).toEqual([1, 1]);
  });

  it('refunds exactly and never below empty; peek changes nothing; limit 0 is off', async () => {
    const clock = manualClock();
    const limiter = new WindowLimiter(redis, clock.now);
    const w = win('r', 2, 60_000);
    await limiter.take([w]);
    await limiter.take([w]);
    expect((await limiter.peek([w])).ok).toBe(false);
    await limiter.refund([w]);
    expect(await limiter.usage([w])).toEqual([1]);
    expect((await limiter.peek([w])).ok).toBe(true);
    expect(await limiter.usage([w])).toEqual([1]);
    await limiter.refund([w], 5);
    expect(await redis.exists(w.key)).toBe(0);
    for (let i = 0; i < 2; i++) expect((await limiter.take([w])).ok).toBe(true);
    expect((await limiter.take([w])).ok).toBe(false);

    const off = win('off', 0, 60_000);
    for (let i = 0; i < 5; i++) expect(await limiter.take([off])).toEqual({ ok: true, windows: [] });
    expect(await redis.exists(off.key)).toBe(0);
  });

  it('expires a key once its bucket would be full again', async () => {
    const limiter = new WindowLimiter(redis);
    const w = win('ttl', 4, 10_000);
    await limiter.take([w]);
    const ttl = await redis.pttl(w.key);
    // One unit refills in 2.5 s; the key lives that long plus a 1 s margin.
    expect(ttl).toBeGreaterThan(2_000);
    expect(ttl).toBeLessThanOrEqual(3_500);
  });

  it('refuses a cost larger than the whole bucket, and bad arguments', async () => {
    const limiter = new WindowLimiter(redis);
    const w = win('big', 2, 5_000);
    expect(await limiter.take([w], 3)).toEqual({ ok: false, window: w, retryAfterMs: 5_000 });
    await expect(limiter.take([w], 0)).rejects.toThrow(/cost/);
    await expect(limiter.take([{ ...w, windowMs: 0 }])).rejects.toThrow(/windowMs/);
  });

  it('counts fixed clock-aligned windows under `<key>:<start>` and refunds the window that was charged', async () => {
    const clock = manualClock(1_800_000_030_000); // 30 s into a minute
    const limiter = new WindowLimiter(redis, clock.now);
    const minute: WindowSpec = { ...win('fixed', 2, 60_000), kind: 'fixed' };
    const start = 1_800_000_000_000;
    const first = await limiter.take([minute]);
    expect(first).toEqual({ ok: true, windows: [{ ...minute, start }] });
    await limiter.take([minute]);
    expect(await redis.get(`${minute.key}:${start}`)).toBe('2');
    expect(await redis.pttl(`${minute.key}:${start}`)).toBeGreaterThan(60_000);
    expect(await limiter.take([minute])).toEqual({
      ok: false,
      window: { ...minute, start },
      retryAfterMs: 30_000,
    });
    // The next clock minute is a fresh window; a refund still reaches the one that was charged.
    clock.advance(30_000);
    expect((await limiter.take([minute])).ok).toBe(true);
    if (first.ok) await limiter.refund(first.windows);
    expect(await redis.get(`${minute.key}:${start}`)).toBe('1');
    expect(await limiter.usage([minute])).toEqual([1]);

    // Buckets and fixed windows in one all-or-nothing take.
    const bucket = win('mixed', 5, 60_000);
    const full = await limiter.take([bucket, { ...minute, limit: 1 }]);
    expect(full.ok).toBe(false);
    expect(await redis.exists(bucket.key)).toBe(0);
  });

  it('never lets more than `limit` through when many connections race for one bucket', async () => {
    const w = win('race', 37, 3_600_000);
    const limiters = Array.from({ length: 4 }, () => {
      const r = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
      extra.push(r);
      return new WindowLimiter(r);
    });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (limiters[i % limiters.length] as WindowLimiter).take([w])),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(37);
  });
});

describe('wallet leases', () => {
  const wallet = generateKeypair().address;

  it('is exclusive, named by walletLeaseKey, and released only by its holder', async () => {
    const a = await acquireWalletLease(redis, prefix, wallet, 'sendmail', { ttlMs: 5_000, keepAlive: false });
    expect(a?.key).toBe(walletLeaseKey(prefix, wallet, 'sendmail'));
    expect(await redis.keys(walletLeasePattern(prefix, wallet))).toEqual([a?.key]);
    expect(await acquireWalletLease(redis, prefix, wallet, 'sendmail', { ttlMs: 5_000 })).toBeNull();
    // A different lease name of the same wallet is independent.
    const other = await acquireWalletLease(redis, prefix, wallet, 'other', {
      ttlMs: 5_000,
      keepAlive: false,
    });
    expect(other).not.toBeNull();
    expect(await a?.release()).toBe(true);
    expect(await a?.release()).toBe(false);
    await other?.release();
    expect(await redis.keys(walletLeasePattern(prefix, wallet))).toEqual([]);
  });

  it('frees itself by expiry; the stale holder cannot release the next holder', async () => {
    const key = walletLeaseKey(prefix, wallet, 'x');
    const a = await acquireLease(redis, key, { ttlMs: 150, keepAlive: false });
    expect(a).not.toBeNull();
    await new Promise((r) => setTimeout(r, 250));
    const b = await acquireLease(redis, key, { ttlMs: 5_000, keepAlive: false });
    expect(b).not.toBeNull();
    expect(await a?.release()).toBe(false);
    expect(await redis.get(key)).toBe(b?.token);
    expect(await a?.renew()).toBe(false);
    await b?.release();
  });

  it('waits for a busy lease up to waitMs', async () => {
    const key = walletLeaseKey(prefix, wallet, 'wait');
    const a = await acquireLease(redis, key, { ttlMs: 5_000, keepAlive: false });
    setTimeout(() => void a?.release(), 200);
    const started = Date.now();
    const b = await acquireLease(redis, key, { ttlMs: 5_000, waitMs: 5_000, retryMs: 20, keepAlive: false });
    expect(b).not.toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    await b?.release();
    const c = await acquireLease(redis, key, { ttlMs: 5_000, keepAlive: false });
    const d = await acquireLease(redis, key, { ttlMs: 5_000, waitMs: 100, retryMs: 20 });
    expect(d).toBeNull();
    await c?.release();
  });

  it('stays held past its ttl while kept alive', async () => {
    const key = walletLeaseKey(prefix, wallet, 'alive');
    // Renewed every third of its ttl: a second's ttl rides out a loaded machine's event-loop stalls.
    const a = await acquireLease(redis, key, { ttlMs: 1_000 });
    await new Promise((r) => setTimeout(r, 2_500));
    expect(a?.held).toBe(true);
    expect(await redis.get(key)).toBe(a?.token);
    expect(await acquireLease(redis, key, { ttlMs: 1_000 })).toBeNull();
    expect(await a?.release()).toBe(true);
    expect(await redis.exists(key)).toBe(0);
  });

  it('takes many in one call: the free ones are held, a busy one is left to its holder', async () => {
    const wallets = Array.from({ length: 3 }, () => generateKeypair().address);
    const busy = await acquireWalletLease(redis, prefix, wallets[1] as string, 'sendmail', {
      ttlMs: 5_000,
      keepAlive: false,
    });
    const keys = wallets.map((w) => walletLeaseKey(prefix, w, 'sendmail'));
    const set = await LeaseSet.acquire(redis, keys, { ttlMs: 5_000 });
    expect(keys.map((k) => set.holds(k))).toEqual([true, false, true]);
    expect(set.size).toBe(2);
    expect(await redis.mget(...keys)).toEqual([set.token, busy?.token, set.token]);
    // A taken key is exclusive to the set, as a single lease is.
    expect(
      await acquireWalletLease(redis, prefix, wallets[0] as string, 'sendmail', { ttlMs: 5_000 }),
    ).toBeNull();
    // Released in the same turn (one call): each is told, the busy key is not the set's to free.
    expect(
      await Promise.all([
        set.release(keys[0] as string),
        set.release(keys[1] as string),
        set.release(keys[2] as string),
      ]),
    ).toEqual([true, false, true]);
    expect(await redis.exists(keys[0] as string, keys[2] as string)).toBe(0);
    expect(await redis.get(keys[1] as string)).toBe(busy?.token);
    expect(await set.release(keys[0] as string)).toBe(false);
    await busy?.release();
  });

  it('renews its held keys together past their ttl, drops a lost one, never frees the next holder', async () => {
    const keys = ['a', 'b', 'c'].map((n) => walletLeaseKey(prefix, wallet, `set-${n}`));
    const set = await LeaseSet.acquire(redis, keys, { ttlMs: 1_000 });
    // b is lost (expired and taken by someone else, as after a long pause).
    await redis.set(keys[1] as string, 'someone-else');
    await new Promise((r) => setTimeout(r, 2_500));
    expect(keys.map((k) => set.holds(k))).toEqual([true, false, true]);
    expect(await redis.pttl(keys[0] as string)).toBeGreaterThan(0);
    expect(await Promise.all(keys.map((k) => set.release(k)))).toEqual([true, false, true]);
    expect(await redis.get(keys[1] as string)).toBe('someone-else');
    expect(await redis.exists(keys[0] as string, keys[2] as string)).toBe(0);
    // Without keep-alive a key expires, and a stale set's release leaves the next holder's lease alone.
    const stale = await LeaseSet.acquire(redis, [keys[0] as string], { ttlMs: 150, keepAlive: false });
    await new Promise((r) => setTimeout(r, 250));
    const next = await acquireLease(redis, keys[0] as string, { ttlMs: 5_000, keepAlive: false });
    expect(next).not.toBeNull();
    expect(await stale.release(keys[0] as string)).toBe(false);
    expect(await redis.get(keys[0] as string)).toBe(next?.token);
    await next?.release();
  });
});

describe('submission send-rate windows on the shared limiter', () => {
  it('counts fixed hour windows under the wallet scope, refuses the third and refunds what take returned', async () => {
    const wallet = generateKeypair().address;
    const t = 1_800_000_900_000; // 15 minutes into an hour
    const rate = new SendRate(redis, prefix, { perHour: 2, perDay: 10 }, () => t);
    const first = await rate.take(wallet);
    const hourStart = 1_800_000_000_000 - (1_800_000_000_000 % HOUR_MS);
    expect(first.ok && first.keys).toContain(`${prefix}:rl:wallet:${wallet}:submit-hour:${hourStart}`);
    expect((await rate.take(wallet)).ok).toBe(true);
    const refused = await rate.take(wallet);
    expect(refused).toEqual({
      ok: false,
      limit: 2,
      window: 'hour',
      retryAfterSecs: (hourStart + HOUR_MS - t) / 1000,
    });
    expect((await rate.peek(wallet)).ok).toBe(false);
    if (first.ok) await rate.refund(first.keys);
    expect((await rate.peek(wallet)).ok).toBe(true);
    expect((await rate.take(wallet)).ok).toBe(true);
    // Both windows are wallet-scoped rate windows, which the admin sweep removes.
    expect((await redis.keys(walletRateWindowPattern(prefix, wallet))).sort()).toEqual([
      `${prefix}:rl:wallet:${wallet}:submit-day:${t - (t % DAY_MS)}`,
      `${prefix}:rl:wallet:${wallet}:submit-hour:${hourStart}`,
    ]);
  });
});

describe('[limits] and [chain] min_authority_lamports', () => {
  it('fills defaults, maps them for the guard and names bad keys', () => {
    const c = parseConfig('[limits]\nsender_messages = 5\nsender_window_secs = 60\n', { env: {} });
    expect(c.chain.min_authority_lamports).toBe('auto');
    expect(
      parseConfig('[chain]\nmin_authority_lamports = 0\n', { env: {} }).chain.min_authority_lamports,
    ).toBe(0);
    expect(publicationLimitsFromConfig(c.limits)).toEqual({
      sender: { limit: 5, windowMs: 60_000 },
      recipient: { limit: 200, windowMs: 3_600_000 },
      overall: { limit: 10_000, windowMs: 3_600_000 },
      nullSender: { limit: 200, windowMs: 3_600_000 },
    });
    const bad = () =>
      parseConfig(
        '[chain]\nmin_authority_lamports = -1\n[limits]\nsender_window_secs = 0\nnul_sender_messages = 1\n',
        {
          env: {},
        },
      );
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/chain\.min_authority_lamports: expected "auto" or an integer >= 0 \(lamports\)/);
    expect(bad).toThrow(/limits\.sender_window_secs: expected integer >= 1/);
    expect(bad).toThrow(/unknown key limits\.nul_sender_messages/);
  });
});

describe('metrics registry', () => {
  it('renders counters and gauges in the Prometheus text format', () => {
    const registry = new MetricsRegistry();
    const m = costGuardMetrics(registry);
    m.deferred.inc({ reason: 'sender' });
    m.deferred.inc({ reason: 'sender' });
    m.deferred.inc({ reason: 'null_sender' });
    m.balance.set(123);
    m.low.set(1);
    expect(m.deferred.get({ reason: 'sender' })).toBe(2);
    expect(costGuardMetrics(registry).deferred).toBe(m.deferred);
    const text = registry.render();
    expect(text).toContain('# TYPE sealpost_mx_deferred_total counter');
    expect(text).toContain('sealpost_mx_deferred_total{reason="sender"} 2');
    expect(text).toContain('sealpost_mx_deferred_total{reason="null_sender"} 1');
    expect(text).toContain('sealpost_authority_balance_lamports 123');
    expect(text).toContain('sealpost_authority_balance_low 1');
    expect(() => registry.gauge('sealpost_mx_deferred_total', 'x')).toThrow(/already registered/);
    expect(() => m.deferred.inc({}, -1)).toThrow(/only goes up/);
  });
});
