// Login and step-up challenges. A nonce is the prefix plus a random-looking
// part, signed verbatim (UTF-8) by the wallet. The two prefixes differ on
// purpose so a login signature never passes as a step-up proof.
//
// Login challenges are derived, not stored: time is cut into windows of
// LOGIN_WINDOW_SECS, and the nonce of a wallet in a window is an HMAC (under
// a key derived from the API's signing key, so every API process agrees) of
// the wallet, the window, a generation and the wallet's account-deletion
// mark. Asking for a challenge computes it and writes nothing, so nobody
// asking for challenges — for their own wallet or anyone else's, at any
// rate — can evict, cancel or crowd out the owner's pending one, and a flood
// leaves nothing behind in Redis. Everyone asking in the same window gets
// the same nonce; that is harmless, because only the wallet's key can sign
// it. A nonce is valid until its window's start plus
// CHALLENGE_LIFETIME_SECS (so 150–300 s after it is handed out).
//
// What is stored is which generations are used: a successful login adds
// `<window>:<generation>` to the wallet's small sorted set (score = expiry),
// and the next challenge in that window is the next generation. Only the
// wallet's own signature adds an entry, entries leave when their nonce
// expires, so the set stays as small as the owner's own logins make it.
// Two clients of one wallet that ask within one window get the same nonce;
// the first to log in uses it and the other must ask again.
// The deletion mark is part of the HMAC, so after the admin sweep (which
// removes the used set) no nonce signed before the deletion works again.
//
// Step-up: one outstanding challenge per wallet (a new one replaces it),
// taken with GETDEL so that of two requests racing on one proof exactly one
// gets the nonce; the other finds nothing and answers 428. Only the token's
// holder can ask for one.
import { createHmac, hkdfSync, randomBytes as nodeRandomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import { accountDeletedKey, loginChallengeKey, stepUpChallengeKey } from '../../../core/limits/redis-keys.ts';

export const LOGIN_NONCE_PREFIX = 'Sealpost login nonce: ';
export const STEP_UP_NONCE_PREFIX = 'Sealpost step-up nonce: ';
export const CHALLENGE_LIFETIME_SECS = 300;
/** Login nonces are shared within a window of this length; two windows are alive at a time. */
export const LOGIN_WINDOW_SECS = CHALLENGE_LIFETIME_SECS / 2;

const WINDOW_MS = LOGIN_WINDOW_SECS * 1000;
const LIFETIME_MS = CHALLENGE_LIFETIME_SECS * 1000;

export interface Challenge {
  nonce: string;
  expires_in: number;
}

export interface ChallengeStoreOptions {
  redis: Redis;
  prefix: string;
  /** The API's token signing key (any secret every API process shares, ≥ 32 bytes). */
  secret: Uint8Array;
  now?: () => number;
  randomBytes?: (n: number) => Uint8Array;
}

interface LoginState {
  /** The account-deletion mark ('' when none). */
  epoch: string;
  /** Used `<window>:<generation>` entries. */
  used: Set<string>;
}

export class ChallengeStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly macKey: Buffer;
  private readonly now: () => number;
  private readonly randomBytes: (n: number) => Uint8Array;

  constructor(opts: ChallengeStoreOptions) {
    if (opts.secret.length < 32) throw new Error('the login challenge secret must be at least 32 bytes');
    this.redis = opts.redis;
    this.prefix = opts.prefix;
    this.macKey = Buffer.from(
      hkdfSync('sha256', opts.secret, new Uint8Array(0), 'sealpost/login-challenge/v1', 32),
    );
    this.now = opts.now ?? Date.now;
    this.randomBytes = opts.randomBytes ?? ((n) => new Uint8Array(nodeRandomBytes(n)));
  }

  private loginNonce(wallet: string, epoch: string, window: number, generation: number): string {
    const mac = createHmac('sha256', this.macKey)
      .update(`${wallet}\n${epoch}\n${window}\n${generation}`)
      .digest()
      .subarray(0, 24);
    return LOGIN_NONCE_PREFIX + bs58.encode(mac);
  }

  private async loginState(wallet: string, now: number): Promise<LoginState> {
    const [[, epoch], [, used]] = (await this.redis
      .multi()
      .get(accountDeletedKey(this.prefix, wallet))
      .zrangebyscore(loginChallengeKey(this.prefix, wallet), `(${now}`, '+inf')
      .exec()) as [[Error | null, string | null], [Error | null, string[]]];
    return { epoch: epoch ?? '', used: new Set(used) };
  }

  /** The lowest generation of `window` not used yet. */
  private static firstUnused(state: LoginState, window: number): number {
    let g = 0;
    while (state.used.has(`${window}:${g}`)) g++;
    return g;
  }

  /** The wallet's current login challenge. Writes nothing. */
  async issueLogin(wallet: string): Promise<Challenge> {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    const state = await this.loginState(wallet, now);
    const nonce = this.loginNonce(wallet, state.epoch, window, ChallengeStore.firstUnused(state, window));
    return { nonce, expires_in: Math.floor((window * WINDOW_MS + LIFETIME_MS - now) / 1000) };
  }

  /**
   * Finds the live, unused login nonce of the wallet that `verify` accepts
   * (the signature check) and marks it used; true only for the one caller
   * whose mark was new.
   */
  async takeLogin(wallet: string, verify: (nonce: string) => boolean): Promise<boolean> {
    const now = this.now();
    const current = Math.floor(now / WINDOW_MS);
    const state = await this.loginState(wallet, now);
    for (const window of [current, current - 1]) {
      const expiresAt = window * WINDOW_MS + LIFETIME_MS;
      if (expiresAt <= now) continue;
      // Every generation ever handed out in this window and not used is at most the first unused one.
      const last = ChallengeStore.firstUnused(state, window);
      for (let g = 0; g <= last; g++) {
        const entry = `${window}:${g}`;
        if (state.used.has(entry) || !verify(this.loginNonce(wallet, state.epoch, window, g))) continue;
        const key = loginChallengeKey(this.prefix, wallet);
        const [[, added]] = (await this.redis
          .multi()
          .zadd(key, 'NX', expiresAt, entry)
          .zremrangebyscore(key, '-inf', now)
          .pexpire(key, LIFETIME_MS)
          .exec()) as [[Error | null, number]];
        return added === 1;
      }
    }
    return false;
  }

  async issueStepUp(wallet: string): Promise<Challenge> {
    const nonce = STEP_UP_NONCE_PREFIX + bs58.encode(this.randomBytes(24));
    const exp = this.now() + LIFETIME_MS;
    await this.redis.set(
      stepUpChallengeKey(this.prefix, wallet),
      JSON.stringify({ nonce, exp }),
      'PX',
      LIFETIME_MS,
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

  /** Deletes the wallet's used-login set and step-up challenge. */
  async deleteAll(wallet: string): Promise<number> {
    return this.redis.del(loginChallengeKey(this.prefix, wallet), stepUpChallengeKey(this.prefix, wallet));
  }
}
