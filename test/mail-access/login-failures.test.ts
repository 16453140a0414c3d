// The failed-password counter shared by SMTP AUTH and the IMAP/POP3 login,
// against real Redis (random key prefix, removed after each test).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { type LoginBackoff, LoginFailures } from '../../src/core/limits/login-failures.ts';
import { walletRateWindowPattern } from '../../src/core/limits/redis-keys.ts';

let redis: Redis;
let prefix: string;

beforeEach(() => {
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  prefix = `sptest-lf-${randomBytes(6).toString('hex')}`;
});

afterEach(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

const backoff = (over: Partial<LoginBackoff> = {}): LoginBackoff => ({
  windowMs: 60_000,
  maxPerIp: 5,
  maxPerAccount: 3,
  baseDelayMs: 100,
  maxDelayMs: 700,
  ...over,
});

describe('LoginFailures', () => {
  it('locks an account after its limit, for the rest of the window that began at the first failure', async () => {
    const wallet = generateKeypair().address;
    const f = new LoginFailures(redis, prefix, 'mail-login-fail', backoff());
    expect(await f.check('192.0.2.1', wallet)).toEqual({ locked: false, counted: 0 });
    expect(await f.record('192.0.2.1', wallet)).toBe(1);
    expect(await f.record('192.0.2.2', wallet)).toBe(2);
    expect(await f.check('192.0.2.3', wallet)).toEqual({ locked: false, counted: 2 });
    expect(await f.record('192.0.2.3', wallet)).toBe(3);
    // Locked from any address, for about the whole window (the TTL from the first failure).
    const locked = await f.check('198.51.100.7', wallet);
    expect(locked.locked).toBe(true);
    if (!locked.locked) throw new Error('unreachable');
    expect(locked.retryAfterSecs).toBeGreaterThanOrEqual(55);
    expect(locked.retryAfterSecs).toBeLessThanOrEqual(60);
    // Later failures do not move the window's end.
    const ttlBefore = await redis.pttl(`${prefix}:rl:wallet:${wallet}:mail-login-fail`);
    await f.record('192.0.2.3', wallet);
    const ttlAfter = await redis.pttl(`${prefix}:rl:wallet:${wallet}:mail-login-fail`);
    expect(ttlAfter).toBeLessThanOrEqual(ttlBefore);
    // Another account is not locked by it, and the key is one the admin sweep finds.
    const other = generateKeypair().address;
    expect((await f.check('192.0.2.9', other)).locked).toBe(false);
    const swept = await redis.keys(walletRateWindowPattern(prefix, wallet));
    expect(swept).toEqual([`${prefix}:rl:wallet:${wallet}:mail-login-fail`]);
  });

  it('locks an IP across accounts and unknown login names, and unlocks when the window ends', async () => {
    const f = new LoginFailures(redis, prefix, 'smtp-auth-fail', backoff({ windowMs: 600, maxPerIp: 3 }));
    await f.record('203.0.113.5', null);
    await f.record('203.0.113.5', generateKeypair().address);
    expect(await f.record('203.0.113.5', null)).toBe(3);
    const fresh = generateKeypair().address;
    const locked = await f.check('203.0.113.5', fresh);
    expect(locked).toEqual({ locked: true, retryAfterSecs: 1 });
    expect((await f.check('203.0.113.6', fresh)).locked).toBe(false);
    await new Promise((r) => setTimeout(r, 900));
    expect(await f.check('203.0.113.5', fresh)).toEqual({ locked: false, counted: 0 });
  });

  it('keeps the SMTP AUTH and IMAP/POP3 counts apart', async () => {
    const wallet = generateKeypair().address;
    const smtp = new LoginFailures(redis, prefix, 'smtp-auth-fail', backoff({ maxPerAccount: 1 }));
    const imap = new LoginFailures(redis, prefix, 'mail-login-fail', backoff({ maxPerAccount: 1 }));
    await smtp.record('192.0.2.1', wallet);
    expect((await smtp.check('192.0.2.1', wallet)).locked).toBe(true);
    expect((await imap.check('192.0.2.1', wallet)).locked).toBe(false);
  });

  it('doubles the answer delay per failure up to the cap', () => {
    const f = new LoginFailures(redis, prefix, 'x', backoff());
    expect([1, 2, 3, 4, 5].map((n) => f.delayFor(n))).toEqual([100, 200, 400, 700, 700]);
  });

  it('reports a Redis outage as an error rather than a pass', async () => {
    const dead = new Redis({
      port: 1,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const f = new LoginFailures(dead, prefix, 'x', backoff());
    await expect(f.check('192.0.2.1', null)).rejects.toThrow();
    dead.disconnect();
  });
});
