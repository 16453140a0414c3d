// Wallet-keyed leases: short-lived Redis locks held on behalf of one wallet
// (e.g. the SendMail lease that keeps one pipeline at a time on a
// recipient's mail_count, so Email PDA indexes never collide across
// workers). A lease is a random token under `walletLeaseKey` with a PX
// expiry: a crashed holder frees it by expiring; release and renewal touch
// the key only while it still holds our token (it may have expired and been
// taken by someone else). The admin sweep deletes a wallet's leases by pattern.
import type { Redis } from 'ioredis';
import { walletLeaseKey } from './redis-keys.ts';

// Compare-and-delete / compare-and-extend on the token.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

export interface LeaseOptions {
  /** How long the lease lives without renewal. */
  ttlMs: number;
  /** How long to keep trying while someone else holds it; 0 tries once. */
  waitMs?: number;
  /** Pause between attempts. */
  retryMs?: number;
  /** Renew every ttlMs / 3 while held, so a slow holder does not lose it; default true. */
  keepAlive?: boolean;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** The token's randomness (tests may fix it). */
  random?: (bytes: number) => Uint8Array;
}

export interface Lease {
  readonly key: string;
  readonly token: string;
  /** False once a renewal found the key gone or held by someone else. */
  readonly held: boolean;
  /** Extends the expiry to ttlMs from now; false when the lease was lost. */
  renew(): Promise<boolean>;
  /** Deletes the key if it still holds our token; false when it did not. */
  release(): Promise<boolean>;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const defaultRandom = (n: number) => crypto.getRandomValues(new Uint8Array(n));

/** Takes the lease at `key`, waiting up to `waitMs`; null when it stayed busy. */
export async function acquireLease(redis: Redis, key: string, opts: LeaseOptions): Promise<Lease | null> {
  const sleep = opts.sleep ?? defaultSleep;
  const now = opts.now ?? Date.now;
  const token = Buffer.from((opts.random ?? defaultRandom)(16)).toString('hex');
  const deadline = now() + (opts.waitMs ?? 0);
  const ttl = Math.max(1, Math.round(opts.ttlMs));
  for (;;) {
    if ((await redis.set(key, token, 'PX', ttl, 'NX')) === 'OK') break;
    if (now() >= deadline) return null;
    await sleep(opts.retryMs ?? 25);
  }

  let held = true;
  let timer: ReturnType<typeof setInterval> | undefined;
  const renew = async (): Promise<boolean> => {
    if (!held) return false;
    held = Number(await redis.eval(RENEW, 1, key, token, ttl)) === 1;
    if (!held && timer) clearInterval(timer);
    return held;
  };
  if (opts.keepAlive ?? true) {
    timer = setInterval(
      () => {
        // A failed renewal (Redis hiccup) is retried at the next tick; expiry is the backstop.
        renew().catch(() => {});
      },
      Math.max(1, Math.floor(ttl / 3)),
    );
    timer.unref();
  }
  return {
    key,
    token,
    get held() {
      return held;
    },
    renew,
    async release() {
      if (timer) clearInterval(timer);
      const wasHeld = held;
      held = false;
      if (!wasHeld) return false;
      return Number(await redis.eval(RELEASE, 1, key, token)) === 1;
    },
  };
}

/** A lease named `name` held on behalf of `wallet` (`<prefix>:lease:<wallet>:<name>`). */
export function acquireWalletLease(
  redis: Redis,
  prefix: string,
  wallet: string,
  name: string,
  opts: LeaseOptions,
): Promise<Lease | null> {
  return acquireLease(redis, walletLeaseKey(prefix, wallet, name), opts);
}
