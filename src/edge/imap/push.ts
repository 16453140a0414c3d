// IMAP IDLE push (docs/imap-pop3.md "IDLE push"): a committed change of the mail
// store wakes the IDLE sessions that show it, in every process, at once.
//
// - Publishing: `MailPush` is the store's change sink (src/core/store/mail-events.ts)
//   in every process that writes mail (`sealpost serve`, `sealpost worker`).
//   After each commit it PUBLISHes `{w: wallet, m: [mailbox ids], o: origin}`
//   on `<prefix>:imap:mail-changed` over a connection of its own (while it
//   reconnects a notification waits for one attempt, then is dropped: a
//   late one only costs a look), and wakes this process's own sessions
//   directly, without the round trip.
// - Subscribing: a process that serves IMAP also holds one subscriber
//   connection (named `sealpost-imap-push:<prefix>` in CLIENT LIST). A
//   message from another process wakes the IDLE sessions of that wallet
//   whose selected mailbox is named (all of them when `m` is absent); its
//   own echoes (`o` is its token) are skipped.
// - Fallback: a session still polls, every `[imap] idle_push_poll_ms` while
//   the subscription is live (a notification lost with its publisher's
//   connection), every `[imap] idle_poll_ms` while it is not. When the
//   subscription comes (back) every session looks once ("resync", spread
//   over half a second), since changes made meanwhile were not heard. A
//   PING every 15 s finds a connection that died without closing.
//
// Payloads carry only a wallet (a public key) and mailbox row ids.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { mailChangeChannel } from '../../core/limits/redis-keys.ts';
import type { Logger } from '../../core/log.ts';
import type { IdleWakeCause, ImapPushMetrics } from '../../core/metrics/types.ts';
import { createRedis, type RedisTarget } from '../../core/redis/client.ts';
import type { MailChangeSink } from '../../core/store/mail-events.ts';

export type { IdleWakeCause, ImapPushMetrics };

/**
 * What the sessions one notification wakes read once between them: the
 * first session's read of a mailbox (for a reader) runs, the others get its
 * result. Each read starts after the notification arrived, so it sees the
 * commit that caused it. Made per notification, never kept.
 */
export class SharedRead {
  private readonly reads = new Map<string, Promise<unknown>>();

  once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let p = this.reads.get(key) as Promise<T> | undefined;
    if (!p) {
      p = read();
      this.reads.set(key, p);
    }
    return p;
  }
}

/** One IDLE session as the push sees it. */
export interface IdleWatcher {
  /** The mailbox the session has selected. */
  readonly mailboxId: string;
  /** Look at the store now (the session coalesces bursts), sharing the reads of `shared`. */
  wake(cause: IdleWakeCause, shared?: SharedRead): void;
  /** The subscription went up or down: the poll interval in force changed. */
  rearm(): void;
}

/** What an IDLE session needs of the push (MailPush; tests may run IMAP without one). */
export interface IdlePush {
  /** Registers an IDLE session of `wallet`; returns its removal. */
  watch(wallet: string, watcher: IdleWatcher): () => void;
  /** The poll interval in force now. */
  pollMs(): number;
}

export interface MailPushOptions {
  redis: RedisTarget;
  prefix: string;
  logger: Logger;
  metrics?: ImapPushMetrics;
  /** Poll interval of IDLE sessions while the subscription is live. */
  livePollMs: number;
  /** Poll interval while it is not (or push is off). */
  fallbackPollMs: number;
}

/** CLIENT SETNAME of a process's subscription (CLIENT LIST shows which connections these are). */
export function pushSubscriberName(prefix: string): string {
  return `sealpost-imap-push:${prefix.replace(/[^\w:.-]/g, '_')}`;
}

/** CLIENT SETNAME of a process's publishing connection. */
export function pushPublisherName(prefix: string): string {
  return `sealpost-imap-pub:${prefix.replace(/[^\w:.-]/g, '_')}`;
}

const PING_EVERY_MS = 15_000;
const PING_TIMEOUT_MS = 5_000;
const SUBSCRIBE_RETRY_MS = 2_000;
/** Sessions told to resync after a (re)subscription look within this long, not all at once. */
const RESYNC_SPREAD_MS = 500;
/** A payload names at most this many mailboxes; more, or a bad payload, wakes the whole wallet. */
const MAX_MAILBOXES = 64;

interface Payload {
  w: string;
  m?: string[];
  o?: string;
}

function parsePayload(text: string): Payload | null {
  try {
    const p = JSON.parse(text) as unknown;
    if (typeof p !== 'object' || p === null) return null;
    const { w, m, o } = p as Record<string, unknown>;
    if (typeof w !== 'string' || w.length === 0 || w.length > 64) return null;
    const boxes =
      Array.isArray(m) && m.length <= MAX_MAILBOXES && m.every((x) => typeof x === 'string')
        ? (m as string[])
        : undefined;
    return { w, m: boxes, o: typeof o === 'string' ? o : undefined };
  } catch {
    return null;
  }
}

export class MailPush implements MailChangeSink, IdlePush {
  /** This process's token in payloads, so its own echoes are skipped. */
  readonly origin = randomBytes(8).toString('hex');
  readonly channel: string;
  private readonly publisher: Redis;
  private subscriber: Redis | null = null;
  private readonly watchers = new Map<string, Set<IdleWatcher>>();
  private live = false;
  private closed = false;
  private pingTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private publishWarned = false;

  constructor(private readonly opts: MailPushOptions) {
    this.channel = mailChangeChannel(opts.prefix);
    this.publisher = createRedis(opts.redis, {
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 200, 2000),
      connectionName: pushPublisherName(opts.prefix),
    });
    this.publisher.on('error', () => {});
    this.publisher.on('ready', () => {
      this.publishWarned = false;
    });
  }

  /** Whether the subscription is live (sessions then poll only every `livePollMs`). */
  get subscribed(): boolean {
    return this.live;
  }

  /** The poll interval IDLE sessions use now. */
  pollMs(): number {
    return this.live ? this.opts.livePollMs : this.opts.fallbackPollMs;
  }

  // ── Publishing (MailChangeSink) ─────────────────────────────────────────

  mailChanged(wallet: string, mailboxIds?: readonly string[]): void {
    if (this.closed) return;
    const boxes = mailboxIds && mailboxIds.length <= MAX_MAILBOXES ? [...mailboxIds] : undefined;
    if (this.watchers.has(wallet)) queueMicrotask(() => this.dispatch(wallet, boxes, 'push'));
    const payload: Payload = { w: wallet, ...(boxes ? { m: boxes } : {}), o: this.origin };
    this.publisher.publish(this.channel, JSON.stringify(payload)).then(
      () => this.opts.metrics?.pushNotification('published'),
      (err: Error) => {
        this.opts.metrics?.pushNotification('publish_failed');
        if (!this.publishWarned) {
          this.publishWarned = true;
          this.opts.logger.warn(
            { err: err.message },
            'IMAP push: could not publish a mail change (IDLE sessions elsewhere see it at their next poll)',
          );
        }
      },
    );
  }

  // ── Subscribing ─────────────────────────────────────────────────────────

  /** Opens the subscription (a process that serves IMAP); idempotent. */
  startSubscriber(): void {
    if (this.subscriber || this.closed) return;
    const sub = createRedis(this.opts.redis, {
      autoResubscribe: false,
      lazyConnect: true,
      maxRetriesPerRequest: null,
      retryStrategy: (times) => Math.min(times * 100, 1000),
      connectionName: pushSubscriberName(this.opts.prefix),
    });
    this.subscriber = sub;
    sub.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const p = parsePayload(text);
      if (!p || p.o === this.origin) return;
      this.opts.metrics?.pushNotification('received');
      this.dispatch(p.w, p.m, 'push');
    });
    const down = () => this.setLive(false);
    sub.on('close', down);
    sub.on('reconnecting', down);
    sub.on('end', down);
    // Errors also show as close/reconnecting; the listener keeps them from being thrown.
    sub.on('error', () => {});
    sub.on('ready', () => this.subscribe(sub));
    sub.connect().catch(() => {});
  }

  private subscribe(sub: Redis): void {
    clearTimeout(this.retryTimer);
    if (this.subscriber !== sub || this.closed) return;
    sub.subscribe(this.channel).then(
      () => {
        if (this.subscriber === sub && sub.status === 'ready') this.setLive(true);
      },
      (err: Error) => {
        this.opts.logger.warn(
          { err: err.message, channel: this.channel },
          'IMAP push: could not subscribe; IDLE sessions poll meanwhile',
        );
        if (this.subscriber === sub && sub.status === 'ready' && !this.closed)
          this.retryTimer = setTimeout(() => this.subscribe(sub), SUBSCRIBE_RETRY_MS).unref();
      },
    );
  }

  private setLive(live: boolean): void {
    if (live === this.live) return;
    this.live = live;
    this.opts.metrics?.pushSubscribed(live);
    clearInterval(this.pingTimer);
    if (live) {
      this.opts.logger.info({ channel: this.channel }, 'IMAP push subscribed');
      this.pingTimer = setInterval(() => this.ping(), PING_EVERY_MS).unref();
    } else if (!this.closed) {
      this.opts.logger.warn({ channel: this.channel }, 'IMAP push subscription lost; IDLE sessions poll');
    }
    for (const set of this.watchers.values()) {
      for (const w of set) {
        w.rearm();
        // Changes made while nothing was heard: every session looks once, spread out.
        if (live) setTimeout(() => w.wake('resync'), Math.random() * RESYNC_SPREAD_MS).unref();
      }
    }
  }

  private ping(): void {
    const sub = this.subscriber;
    if (!sub || !this.live) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('PING timed out')), PING_TIMEOUT_MS);
    });
    Promise.race([sub.ping(), timeout])
      .catch(() => {
        // A connection that answers nothing is as good as gone: drop it and connect again.
        if (this.subscriber === sub) sub.disconnect(true);
      })
      .finally(() => clearTimeout(timer));
  }

  // ── Sessions ────────────────────────────────────────────────────────────

  /** Registers an IDLE session of `wallet`; returns its removal. */
  watch(wallet: string, watcher: IdleWatcher): () => void {
    let set = this.watchers.get(wallet);
    if (!set) {
      set = new Set();
      this.watchers.set(wallet, set);
    }
    set.add(watcher);
    return () => {
      const s = this.watchers.get(wallet);
      if (!s) return;
      s.delete(watcher);
      if (s.size === 0) this.watchers.delete(wallet);
    };
  }

  /** IDLE sessions registered now (tests, the bench). */
  get watching(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }

  private dispatch(wallet: string, mailboxIds: readonly string[] | undefined, cause: IdleWakeCause): void {
    const set = this.watchers.get(wallet);
    if (!set) return;
    // Several sessions of one account (phones, laptops) read the same rows once.
    const shared = new SharedRead();
    for (const w of set) if (!mailboxIds || mailboxIds.includes(w.mailboxId)) w.wake(cause, shared);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.retryTimer);
    const sub = this.subscriber;
    this.subscriber = null;
    this.live = false;
    sub?.disconnect();
    await this.publisher.quit().catch(() => this.publisher.disconnect());
  }
}
