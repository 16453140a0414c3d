// Login challenges under abuse: requests by anyone for a wallet never cancel
// its owner's pending challenge, a flood stores nothing, each nonce logs in
// once (also across the window boundary), and nothing signed before an
// account deletion logs in after it. Real API, real Redis.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import { loginChallengeKey } from '../../src/core/limits/redis-keys.ts';
import { LOGIN_WINDOW_SECS } from '../../src/edge/api/auth/challenges.ts';
import { type ApiRig, newWallet, sign, startRig } from '../support/api-rig.ts';

describe('login challenges', () => {
  let rig: ApiRig;
  let owner: Keypair;
  beforeEach(async () => {
    rig = await startRig('sqlite');
    owner = newWallet();
  });
  afterEach(async () => {
    await rig.close();
  });

  const challenge = async (wallet: string) => {
    const r = await rig.request('POST', '/v1/auth/challenge', { json: { wallet } });
    expect(r.status).toBe(200);
    return r.body as { nonce: string; expires_in: number };
  };
  const login = (wallet: Keypair, nonce: string) =>
    rig.request('POST', '/v1/auth/login', {
      json: { wallet: wallet.address, signature: sign(wallet, nonce) },
    });
  const authKeys = async () => (await rig.redisKeys()).filter((k) => k.startsWith(`${rig.prefix}:auth:`));

  it("survives 20 foreign challenge requests for the owner's wallet, spread over its lifetime", async () => {
    const mine = await challenge(owner.address);
    for (let i = 0; i < 20; i++) {
      await challenge(owner.address);
      rig.clock.now += 7_000; // 140 s in all: the next window has begun
    }
    const r = await login(owner, mine.nonce);
    expect(r.status).toBe(200);
    expect(typeof r.body.token).toBe('string');
  });

  it('stores nothing for a flood of challenge requests; the store holds only used logins', async () => {
    const others = Array.from({ length: 300 }, () => newWallet().address);
    const mine = await challenge(owner.address);
    for (let round = 0; round < 10; round++) {
      await Promise.all([
        ...Array.from({ length: 50 }, () => challenge(owner.address)),
        ...others.slice(round * 30, round * 30 + 30).map((w) => challenge(w)),
      ]);
    }
    expect(await authKeys()).toEqual([]);
    expect((await login(owner, mine.nonce)).status).toBe(200);
    const used = loginChallengeKey(rig.prefix, owner.address);
    expect(await authKeys()).toEqual([used]);
    expect(await rig.redis.zcard(used)).toBe(1);
    const ttl = await rig.redis.pttl(used);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300_000);
  });

  it('logs each nonce in once; the next challenge is a new nonce; a stale one expires', async () => {
    const first = await challenge(owner.address);
    const again = await challenge(owner.address);
    expect(again.nonce).toBe(first.nonce); // the same window, not used yet
    expect((await login(owner, first.nonce)).status).toBe(200);
    const replay = await login(owner, first.nonce);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe('login_failed');
    const second = await challenge(owner.address);
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.nonce.startsWith('Sealpost login nonce: ')).toBe(true);
    // A foreign key's signature over the owner's nonce does not use it up.
    const forged = await rig.request('POST', '/v1/auth/login', {
      json: { wallet: owner.address, signature: sign(newWallet(), second.nonce) },
    });
    expect(forged.status).toBe(401);
    expect((await login(owner, second.nonce)).status).toBe(200);
  });

  it('honours expires_in and no longer accepts a nonce after it', async () => {
    // A second into a window, so the whole-second expires_in is not rounded down to the
    // window's length (as it is when the real clock sits in a window's last second).
    const windowMs = LOGIN_WINDOW_SECS * 1000;
    rig.clock.now = Math.floor(rig.clock.now / windowMs) * windowMs + 1_000;
    const c = await challenge(owner.address);
    expect(c.expires_in).toBeGreaterThan(LOGIN_WINDOW_SECS);
    expect(c.expires_in).toBeLessThanOrEqual(300);
    rig.clock.now += c.expires_in * 1000 - 1_000;
    const later = await challenge(owner.address);
    expect(later.nonce).not.toBe(c.nonce); // a later window
    expect((await login(owner, c.nonce)).status).toBe(200); // still inside its lifetime
    const expired = await challenge(owner.address);
    rig.clock.now += 301_000;
    expect((await login(owner, expired.nonce)).status).toBe(401);
  });

  it('a signature made before the account was deleted never logs in afterwards', async () => {
    const token = await rig.login(owner);
    expect((await rig.request('POST', '/v1/account', { token })).status).toBe(201);
    const before = await challenge(owner.address);
    const signature = sign(owner, before.nonce);
    rig.clock.now += 1;
    expect((await rig.admin('DELETE', `/v1/admin/accounts/${owner.address}`)).status).toBe(204);
    rig.clock.now += 1;
    const stale = await rig.request('POST', '/v1/auth/login', {
      json: { wallet: owner.address, signature },
    });
    expect(stale.status).toBe(401);
    const fresh = await challenge(owner.address);
    expect(fresh.nonce).not.toBe(before.nonce);
    expect((await login(owner, fresh.nonce)).status).toBe(200);
  });
});
