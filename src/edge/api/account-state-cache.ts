// Per-process cache of what every authenticated request reads: the wallet's
// session epoch and account-deletion mark (the request guard) and its
// pin-provider status (GET /v1/account/pin-provider). Correct across API
// processes on one Redis and store:
//   - every writer (revoke-sessions, the pin-provider routes, the account
//     sweep) publishes the wallet on `accountChangeChannel` after its write
//     and before it answers; each process drops that wallet on receipt;
//   - the cache serves only while its subscription is live; a lost
//     connection empties it and reads go to the store and Redis until the
//     subscription is back;
//   - a read that started before an invalidation (or a reconnect) is not
//     stored, so a late answer cannot put an old value back;
//   - `fresh()` lets the event loop finish its current I/O round before a
//     request reads the cache: a change whose publication reached this
//     process before the request did is applied first.
// Entries also expire after TTL_MS, a bound for a message lost without the
// connection noticing. docs/api.md "Caches across processes".
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { accountChangeChannel, accountDeletedKey } from '../../core/limits/redis-keys.ts';
import type { AccountsRepo } from '../../core/store/accounts-repo.ts';
import type { SettingsRepo } from '../../core/store/settings-repo.ts';

export interface SessionState {
  epoch: number;
  /** The account-deletion mark (Unix ms), or null. */
  deletedAt: number | null;
}

export interface PinProviderStatus {
  configured: boolean;
  kind: string | null;
}

interface Entry {
  session?: SessionState;
  pinProvider?: PinProviderStatus;
  expires: number;
}

export const TTL_MS = 5_000;

/** CLIENT SETNAME of a cache's subscription, so CLIENT LIST shows which connections these are. */
export function subscriberName(prefix: string): string {
  return `sealpost-api-cache:${prefix.replace(/[^\w:.-]/g, '_')}`;
}
const MAX_ENTRIES = 100_000;

/** Tells every API process that `wallet`'s session state or pin provider changed. */
export async function publishAccountChange(redis: Redis, prefix: string, wallet: string): Promise<void> {
  await redis.publish(accountChangeChannel(prefix), wallet);
}

export interface AccountStateCacheDeps {
  redis: Redis;
  prefix: string;
  accounts: AccountsRepo;
  settings: SettingsRepo;
}

export class AccountStateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly channel: string;
  private subscriber: Redis | null = null;
  private live = false;
  /** Moves on every invalidation and connection change; a read stores only if it did not move. */
  private generation = 0;
  private round: Promise<void> | null = null;

  constructor(private readonly deps: AccountStateCacheDeps) {
    this.channel = accountChangeChannel(deps.prefix);
  }

  /** Opens the subscription; the cache serves once it is live (reads go through until then). */
  start(): void {
    if (this.subscriber) return;
    const sub = this.deps.redis.duplicate({
      autoResubscribe: false,
      lazyConnect: true,
      connectionName: subscriberName(this.deps.prefix),
    });
    this.subscriber = sub;
    const down = () => {
      this.live = false;
      this.clear();
    };
    sub.on('message', (channel: string, wallet: string) => {
      if (channel === this.channel) this.drop(wallet);
    });
    sub.on('close', down);
    sub.on('reconnecting', down);
    sub.on('end', down);
    // Errors show as 'close'/'reconnecting'; the listener keeps them from being thrown.
    sub.on('error', () => {});
    sub.on('ready', () => {
      sub.subscribe(this.channel).then(
        () => {
          if (this.subscriber !== sub || sub.status !== 'ready') return;
          this.clear();
          this.live = true;
        },
        () => down(),
      );
    });
    sub.connect().catch(() => {});
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = null;
    this.live = false;
    this.clear();
    if (sub) sub.disconnect();
  }

  /** Whether reads are served from memory (for tests and the docs' guarantees). */
  get serving(): boolean {
    return this.live;
  }

  /**
   * Resolves after the event loop's current I/O round, so invalidations
   * already received are applied. Requests of one round share one wait.
   */
  fresh(): Promise<void> {
    if (!this.live) return Promise.resolve();
    this.round ??= new Promise((resolve) =>
      setImmediate(() => {
        this.round = null;
        resolve();
      }),
    );
    return this.round;
  }

  /** The session state, after `fresh()`. */
  async session(wallet: string): Promise<SessionState> {
    await this.fresh();
    const hit = this.lookup(wallet)?.session;
    if (hit) return hit;
    const gen = this.generation;
    const [epoch, mark] = await Promise.all([
      this.deps.settings.sessionEpoch(wallet),
      this.deps.redis.get(accountDeletedKey(this.deps.prefix, wallet)),
    ]);
    const value = { epoch, deletedAt: mark === null ? null : Number(mark) };
    if (this.live && gen === this.generation) this.store(wallet).session = value;
    return value;
  }

  /** The pin-provider status; JWT routes call it after the guard's `session()`, so it is fresh. */
  async pinProvider(wallet: string): Promise<PinProviderStatus> {
    const hit = this.lookup(wallet)?.pinProvider;
    if (hit) return hit;
    const gen = this.generation;
    const stored = await this.deps.accounts.getPinProvider(wallet);
    const value = { configured: stored !== undefined, kind: stored?.kind ?? null };
    if (this.live && gen === this.generation) this.store(wallet).pinProvider = value;
    return value;
  }

  /** After a write: drops the wallet here and tells every other process (before the writer answers). */
  async changed(wallet: string): Promise<void> {
    this.drop(wallet);
    await publishAccountChange(this.deps.redis, this.deps.prefix, wallet);
  }

  private lookup(wallet: string): Entry | undefined {
    if (!this.live) return undefined;
    const entry = this.entries.get(wallet);
    if (entry && entry.expires <= performance.now()) {
      this.entries.delete(wallet);
      return undefined;
    }
    return entry;
  }

  private store(wallet: string): Entry {
    let entry = this.lookup(wallet);
    if (!entry) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      entry = { expires: performance.now() + TTL_MS };
      this.entries.set(wallet, entry);
    }
    return entry;
  }

  private drop(wallet: string): void {
    this.generation++;
    this.entries.delete(wallet);
  }

  private clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
