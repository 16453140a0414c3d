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

// The same, for many keys under one token: SET NX PX per key, and
// compare-then-delete / compare-then-extend per key.
const ACQUIRE_MANY = `
local got = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'PX', ARGV[2], 'NX') then got[i] = 1 else got[i] = 0 end
end
return got`;
const RELEASE_MANY = `
local freed = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then freed[i] = redis.call('DEL', key) else freed[i] = 0 end
end
return freed`;
const RENEW_MANY = `
local held = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then held[i] = redis.call('PEXPIRE', key, ARGV[2]) else held[i] = 0 end
end
return held`;

/**
 * Leases on many keys taken together (the SendMail batcher's recipients of
 * one flush): one script call takes every free key under one token, one
 * timer renews the held ones with one call, and the releases asked for in
 * the same turn go out as one call. Each key is held and freed on its own
 * terms, exactly as a Lease: expiry frees it after a crash, and only a key
 * still holding the token is extended or deleted.
 */
export class LeaseSet {
  private readonly held = new Set<string>();
  private readonly releasing = new Map<string, (released: boolean) => void>();
  private flushing = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  private constructor(
    private readonly redis: Redis,
    readonly token: string,
    private readonly ttl: number,
  ) {}

  /** Takes every key of `keys` that is free (one round trip); the others are simply not held. */
  static async acquire(
    redis: Redis,
    keys: string[],
    opts: Pick<LeaseOptions, 'ttlMs' | 'keepAlive' | 'random'>,
  ): Promise<LeaseSet> {
    const token = Buffer.from((opts.random ?? defaultRandom)(16)).toString('hex');
    const set = new LeaseSet(redis, token, Math.max(1, Math.round(opts.ttlMs)));
    if (keys.length === 0) return set;
    const got = (await redis.eval(ACQUIRE_MANY, keys.length, ...keys, token, set.ttl)) as number[];
    keys.forEach((key, i) => {
      if (Number(got[i]) === 1) set.held.add(key);
    });
    if ((opts.keepAlive ?? true) && set.held.size > 0) {
      set.timer = setInterval(
        () => {
          // A failed renewal (Redis hiccup) is retried at the next tick; expiry is the backstop.
          set.renew().catch(() => {});
        },
        Math.max(1, Math.floor(set.ttl / 3)),
      );
      set.timer.unref();
    }
    return set;
  }

  /** True while `key` is held (taken, not released, not found lost by a renewal). */
  holds(key: string): boolean {
    return this.held.has(key);
  }

  get size(): number {
    return this.held.size;
  }

  /** Extends every held key to ttl from now; the keys found lost are dropped. Returns how many are still held. */
  async renew(): Promise<number> {
    const keys = [...this.held];
    if (keys.length === 0) return 0;
    const extended = (await this.redis.eval(
      RENEW_MANY,
      keys.length,
      ...keys,
      this.token,
      this.ttl,
    )) as number[];
    keys.forEach((key, i) => {
      if (Number(extended[i]) !== 1) this.held.delete(key);
    });
    if (this.held.size === 0) this.stop();
    return this.held.size;
  }

  /**
   * Frees `key` if it still holds the token; resolves true when it did. The
   * releases asked for in one turn share one call.
   */
  release(key: string): Promise<boolean> {
    if (!this.held.delete(key)) return Promise.resolve(false);
    if (this.held.size === 0) this.stop();
    return new Promise<boolean>((resolve) => {
      this.releasing.set(key, resolve);
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flushReleases());
      }
    });
  }

  private async flushReleases(): Promise<void> {
    const batch = [...this.releasing];
    this.releasing.clear();
    this.flushing = false;
    const keys = batch.map(([key]) => key);
    let freed: number[] = [];
    try {
      freed = (await this.redis.eval(RELEASE_MANY, keys.length, ...keys, this.token)) as number[];
    } catch {
      // Redis unreachable: the keys expire on their own.
    }
    batch.forEach(([, resolve], i) => {
      resolve(Number(freed[i]) === 1);
    });
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
