// Login and step-up challenges in Redis. A nonce is the prefix plus a random
// part, signed verbatim (UTF-8) by the wallet. The two prefixes differ on
// purpose so a login signature never passes as a step-up proof.
//
// Step-up: one outstanding challenge per wallet (a new one replaces it),
// taken with GETDEL so that of two requests racing on one proof exactly one
// gets the nonce; the other finds nothing and answers 428.
// Login: a small sorted set per wallet (nonce → expiry) so a stranger asking
// for challenges for someone else's wallet cannot cancel the owner's.
import { randomBytes as nodeRandomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import { loginChallengeKey, stepUpChallengeKey } from '../../limits/redis-keys.ts';

export const LOGIN_NONCE_PREFIX = 'Sealpost login nonce: ';
export const STEP_UP_NONCE_PREFIX = 'Sealpost step-up nonce: ';
export const CHALLENGE_LIFETIME_SECS = 300;
/** Pending login challenges kept per wallet; older ones are dropped. */
export const MAX_PENDING_LOGINS = 8;

export interface Challenge {
  nonce: string;
  expires_in: number;
}

export interface ChallengeStoreOptions {
  redis: Redis;
  prefix: string;
  now?: () => number;
  randomBytes?: (n: number) => Uint8Array;
}

export class ChallengeStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly randomBytes: (n: number) => Uint8Array;

  constructor(opts: ChallengeStoreOptions) {
    this.redis = opts.redis;
    this.prefix = opts.prefix;
    this.now = opts.now ?? Date.now;
    this.randomBytes = opts.randomBytes ?? ((n) => new Uint8Array(nodeRandomBytes(n)));
  }

  private nonce(prefix: string): string {
    return prefix + bs58.encode(this.randomBytes(24));
  }

  async issueLogin(wallet: string): Promise<Challenge> {
    const nonce = this.nonce(LOGIN_NONCE_PREFIX);
    const now = this.now();
    const key = loginChallengeKey(this.prefix, wallet);
    await this.redis
      .multi()
      .zremrangebyscore(key, '-inf', now)
      .zadd(key, now + CHALLENGE_LIFETIME_SECS * 1000, nonce)
      .zremrangebyrank(key, 0, -(MAX_PENDING_LOGINS + 1))
      .pexpire(key, CHALLENGE_LIFETIME_SECS * 1000)
      .exec();
    return { nonce, expires_in: CHALLENGE_LIFETIME_SECS };
  }

  /**
   * Finds the pending login nonce `matches` accepts and removes it; true only
   * for the one caller whose removal succeeded.
   */
  async takeLogin(wallet: string, matches: (nonce: string) => boolean): Promise<boolean> {
    const key = loginChallengeKey(this.prefix, wallet);
    const pending = await this.redis.zrangebyscore(key, `(${this.now()}`, '+inf');
    const nonce = pending.find((n) => n.startsWith(LOGIN_NONCE_PREFIX) && matches(n));
    if (nonce === undefined) return false;
    return (await this.redis.zrem(key, nonce)) === 1;
  }

  async issueStepUp(wallet: string): Promise<Challenge> {
    const nonce = this.nonce(STEP_UP_NONCE_PREFIX);
    const exp = this.now() + CHALLENGE_LIFETIME_SECS * 1000;
    await this.redis.set(
      stepUpChallengeKey(this.prefix, wallet),
      JSON.stringify({ nonce, exp }),
      'PX',
      CHALLENGE_LIFETIME_SECS * 1000,
    );
    return { nonce, expires_in: CHALLENGE_LIFETIME_SECS };
  }

  /**
   * Atomically removes the wallet's step-up challenge and returns its nonce,
   * or null when there is none or it has expired (either way it is gone).
   */
  async takeStepUp(wallet: string): Promise<string | null> {
    const raw = await this.redis.getdel(stepUpChallengeKey(this.prefix, wallet));
    if (raw === null) return null;
    const { nonce, exp } = JSON.parse(raw) as { nonce: string; exp: number };
    return exp > this.now() ? nonce : null;
  }

  /** Deletes the wallet's pending login challenges and step-up challenge (the admin sweep). */
  async deleteAll(wallet: string): Promise<number> {
    return this.redis.del(loginChallengeKey(this.prefix, wallet), stepUpChallengeKey(this.prefix, wallet));
  }
}
