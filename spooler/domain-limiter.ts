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
  release(): Promise<void>;
}

export interface DomainLimiter {
  /** A lease, or null when the domain is at its limit. */
  tryAcquire(domain: string): Promise<DomainLease | null>;
}

export function createDomainLimiter(
  redis: Redis,
  prefix: string,
  limit: number,
  leaseMs = 120_000,
): DomainLimiter {
  const keyOf = (domain: string) => `${prefix}:spooler:domain-slots:${domain}`;
  return {
    async tryAcquire(domain) {
      const key = keyOf(domain);
      const token = randomBytes(9).toString('base64url');
      const ok = await redis.eval(ACQUIRE, 1, key, limit, leaseMs, token);
      if (Number(ok) !== 1) return null;
      const renew = setInterval(() => {
        void redis.eval(RENEW, 1, key, leaseMs, token).catch(() => {});
      }, leaseMs / 3);
      renew.unref();
      return {
        async release() {
          clearInterval(renew);
          await redis.zrem(key, token).catch(() => {});
        },
      };
    },
  };
}
