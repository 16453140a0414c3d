// Idle SMTP sessions kept for the next message to the same place, as
// Postfix's connection cache does: a burst of mail to one destination then
// costs one connect, greeting, EHLO and TLS handshake per connection, not
// per message. The key names the address, port, host name, TLS mode and
// the TLS policy the session was verified under, so a session is only ever
// reused for a delivery that would have accepted it. Sessions idle for
// more than a moment, used many times, or old are closed.
import type { SmtpSession } from './smtp-session.ts';

export interface SessionCache {
  take(key: string): SmtpSession | undefined;
  /** Offers a session back after a transaction; it is kept or closed. */
  put(key: string, session: SmtpSession): void;
  /** Closes every idle session. */
  close(): void;
}

export interface SessionCacheOptions {
  idleMs?: number;
  maxUses?: number;
  maxAgeMs?: number;
  maxIdlePerKey?: number;
}

export function createSessionCache(opts: SessionCacheOptions = {}): SessionCache {
  const idleMs = opts.idleMs ?? 2_000;
  const maxUses = opts.maxUses ?? 100;
  const maxAgeMs = opts.maxAgeMs ?? 300_000;
  const maxIdle = opts.maxIdlePerKey ?? 32;
  const idle = new Map<string, { session: SmtpSession; timer: NodeJS.Timeout }[]>();
  let closed = false;

  const remove = (key: string, session: SmtpSession) => {
    const list = idle.get(key);
    if (!list) return;
    const i = list.findIndex((e) => e.session === session);
    if (i >= 0) {
      clearTimeout(list[i]?.timer);
      list.splice(i, 1);
    }
    if (list.length === 0) idle.delete(key);
  };

  return {
    take(key) {
      const list = idle.get(key);
      while (list && list.length > 0) {
        const entry = list.pop();
        if (!entry) break;
        clearTimeout(entry.timer);
        if (list.length === 0) idle.delete(key);
        if (entry.session.alive) return entry.session;
      }
      return undefined;
    },
    put(key, session) {
      const list = idle.get(key) ?? [];
      const worn = session.uses >= maxUses || Date.now() - session.openedAt >= maxAgeMs;
      if (closed || !session.alive || worn || list.length >= maxIdle) {
        session.close();
        return;
      }
      const timer = setTimeout(() => {
        remove(key, session);
        session.close();
      }, idleMs);
      timer.unref();
      list.push({ session, timer });
      idle.set(key, list);
    },
    close() {
      closed = true;
      for (const list of idle.values()) {
        for (const { session, timer } of list) {
          clearTimeout(timer);
          session.close();
        }
      }
      idle.clear();
    },
  };
}
