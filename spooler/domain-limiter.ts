// Sessions per destination domain, counted across every spooler process:
// a Redis sorted set per domain of lease tokens scored by expiry. A lease
// is renewed while its session runs; a crashed process's leases lapse on
// their own. This is what keeps one slow domain from taking every delivery
// slot: it can hold at most `per_domain_concurrency` of them.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

// Redis's own clock (TIME) keeps every process on one time line; one
// round trip per acquire.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
`;

export interface DomainLease {
  /** Gives the slot back: kept idle in this process for a moment, then returned to Redis. */
  release(): Promise<void>;
}

export interface DomainLimiter {
  /** A lease, or null when the domain is at its limit. */
  tryAcquire(domain: string): Promise<DomainLease | null>;
  /** Returns every idle slot to Redis; later releases go straight back. */
  close(): Promise<void>;
}

interface Held {
  key: string;
  token: string;
  renew: NodeJS.Timeout;
  idleTimer?: NodeJS.Timeout;
}

/**
 * `holdMs`: how long a released slot stays with this process for the next
 * job to the same domain (which then needs no round trip), like the idle
 * SMTP session it usually goes with. While held it still counts against the
 * domain's limit, so the limit holds across processes as before.
 */
export function createDomainLimiter(
  redis: Redis,
  prefix: string,
  limit: number,
  leaseMs = 120_000,
  holdMs = 500,
): DomainLimiter {
  const keyOf = (domain: string) => `${prefix}:spooler:domain-slots:${domain}`;
  const idle = new Map<string, Held[]>();
  let closed = false;

  const giveBack = async (held: Held) => {
    clearInterval(held.renew);
    clearTimeout(held.idleTimer);
    await redis.zrem(held.key, held.token).catch(() => {});
  };
  const unpark = (domain: string, held: Held) => {
    const list = idle.get(domain);
    const i = list?.indexOf(held) ?? -1;
    if (list && i >= 0) list.splice(i, 1);
    if (list?.length === 0) idle.delete(domain);
  };
  const lease = (domain: string, held: Held): DomainLease => {
    let released = false;
    return {
      async release() {
        if (released) return;
        released = true;
        if (closed || holdMs <= 0) return giveBack(held);
        held.idleTimer = setTimeout(() => {
          unpark(domain, held);
          void giveBack(held);
        }, holdMs);
        held.idleTimer.unref();
        const list = idle.get(domain) ?? [];
        list.push(held);
        idle.set(domain, list);
      },
    };
  };

  return {
    async tryAcquire(domain) {
      const parked = idle.get(domain)?.pop();
      if (parked) {
        clearTimeout(parked.idleTimer);
        if (idle.get(domain)?.length === 0) idle.delete(domain);
        return lease(domain, parked);
      }
      const key = keyOf(domain);
      const token = randomBytes(9).toString('base64url');
      const ok = await redis.eval(ACQUIRE, 1, key, limit, leaseMs, token);
      if (Number(ok) !== 1) return null;
      const renew = setInterval(() => {
        void redis.eval(RENEW, 1, key, leaseMs, token).catch(() => {});
      }, leaseMs / 3);
      renew.unref();
      return lease(domain, { key, token, renew });
    },
    async close() {
      closed = true;
      const all = [...idle.values()].flat();
      idle.clear();
      await Promise.all(all.map(giveBack));
    },
  };
}
