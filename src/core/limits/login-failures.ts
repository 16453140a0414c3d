// Failed-password counting shared by SMTP AUTH (submission) and the IMAP/POP3
// login. Failures are counted per client IP and per account. A count's
// window starts at its first failure and lasts `windowMs` (the key's TTL),
// so a burst cannot straddle a clock-aligned boundary and get twice the
// allowance, and a lock always lasts until the window that filled ends.
// Each failure answers later than the one before; a full window refuses
// further attempts without checking the password.
//
// Keys come from redis-keys.ts: the account's is a wallet rate window
// (`<prefix>:rl:wallet:<wallet>:<bucket>`), which the admin sweep removes
// with the account; the IP's is `<prefix>:rl:ip:<ip>:<bucket>`.
import type { Redis } from 'ioredis';
import { ipBucketKey, walletWindowKey } from './redis-keys.ts';

export interface LoginBackoff {
  /** How long a failure count lives, from its first failure. */
  windowMs: number;
  /** Failures from one IP within a window before attempts are refused. */
  maxPerIp: number;
  /** Failures for one account within a window before attempts are refused. */
  maxPerAccount: number;
  /** Delay of the first failure answer; doubles per further failure up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_LOGIN_BACKOFF: LoginBackoff = {
  windowMs: 15 * 60_000,
  maxPerIp: 20,
  maxPerAccount: 10,
  baseDelayMs: 500,
  maxDelayMs: 8000,
};

export type FailureCheck = { locked: false; counted: number } | { locked: true; retryAfterSecs: number };

/** How one password attempt ended; `temporary` when Redis or the store could not answer. */
export type Attempt<T> =
  | { ok: true; value: T }
  | { ok: false; reason: 'locked'; retryAfterSecs: number }
  | { ok: false; reason: 'invalid' | 'temporary' };

export class LoginFailures {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** Names the counter, so SMTP AUTH and IMAP/POP3 logins do not share one. */
    private readonly bucket: string,
    readonly backoff: LoginBackoff = DEFAULT_LOGIN_BACKOFF,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /**
   * One password attempt: refused unchecked while a window is full; else
   * `verify` (null: wrong password or unknown account) decides, and a failure
   * is counted and answered only after its back-off delay.
   */
  async attempt<T>(ip: string, wallet: string | null, verify: () => Promise<T | null>): Promise<Attempt<T>> {
    let check: FailureCheck;
    try {
      check = await this.check(ip, wallet);
    } catch {
      return { ok: false, reason: 'temporary' };
    }
    if (check.locked) return { ok: false, reason: 'locked', retryAfterSecs: check.retryAfterSecs };
    let value: T | null;
    try {
      value = await verify();
    } catch {
      return { ok: false, reason: 'temporary' };
    }
    if (value !== null) return { ok: true, value };
    const count = await this.record(ip, wallet).catch(() => check.counted + 1);
    await this.sleep(this.delayFor(count));
    return { ok: false, reason: 'invalid' };
  }

  private keys(ip: string, wallet: string | null): { ip: string; wallet?: string } {
    return {
      ip: ipBucketKey(this.prefix, ip, this.bucket),
      wallet: wallet ? walletWindowKey(this.prefix, wallet, this.bucket) : undefined,
    };
  }

  /**
   * Whether this IP or account may try a password now. Throws when Redis
   * cannot answer (callers reply with a temporary failure).
   */
  async check(ip: string, wallet: string | null): Promise<FailureCheck> {
    const keys = this.keys(ip, wallet);
    const multi = this.redis.multi().get(keys.ip).pttl(keys.ip);
    if (keys.wallet) multi.get(keys.wallet).pttl(keys.wallet);
    const results = await multi.exec();
    if (!results) throw new Error('login failure check was aborted');
    for (const [err] of results) if (err) throw err;
    const value = (i: number) => Number(results[i]?.[1] ?? 0);
    const ipCount = value(0);
    const walletCount = keys.wallet ? value(2) : 0;
    const lockedMs: number[] = [];
    if (ipCount >= this.backoff.maxPerIp) lockedMs.push(value(1));
    if (walletCount >= this.backoff.maxPerAccount) lockedMs.push(value(3));
    if (lockedMs.length > 0) {
      // A count without a TTL (-1) cannot happen through record(); treat it as a full window.
      const ms = Math.max(...lockedMs.map((t) => (t > 0 ? t : this.backoff.windowMs)));
      return { locked: true, retryAfterSecs: Math.max(1, Math.ceil(ms / 1000)) };
    }
    return { locked: false, counted: Math.max(ipCount, walletCount) };
  }

  /** Counts one failure for the IP and, when known, the account; returns the larger count. */
  async record(ip: string, wallet: string | null): Promise<number> {
    const keys = this.keys(ip, wallet);
    const ttl = this.backoff.windowMs;
    const multi = this.redis.multi().incr(keys.ip).pexpire(keys.ip, ttl, 'NX');
    if (keys.wallet) multi.incr(keys.wallet).pexpire(keys.wallet, ttl, 'NX');
    const results = (await multi.exec()) ?? [];
    const ipCount = Number(results[0]?.[1] ?? 1);
    const walletCount = keys.wallet ? Number(results[2]?.[1] ?? 1) : 0;
    return Math.max(ipCount, walletCount);
  }

  /** How long to hold the answer to the `count`-th failure. */
  delayFor(count: number): number {
    return Math.min(this.backoff.baseDelayMs * 2 ** Math.max(0, count - 1), this.backoff.maxDelayMs);
  }
}
