// MTA-STS policy discovery with a durable cache (RFC 8461 §5.1). The policy
// of a domain is cached in Redis (so it survives restarts and is shared by
// every spooler process) together with the id it was fetched under; it
// lives max_age seconds. On each use the `_mta-sts` TXT id is compared with
// the cached one: the same id reuses the cache, a new id re-fetches. A
// cached policy past half of its max_age is re-fetched in the background,
// so an active domain's policy never lapses. When discovery or the fetch
// fails, an unexpired cached policy still applies — that is the point of
// the cache: an attacker who blocks the policy host cannot downgrade.
import type { Redis } from 'ioredis';
import type { Logger } from '../src/core/log.ts';
import { fetchStsPolicyText, type StsFailureType, StsFetchError } from './mta-sts-fetch.ts';
import { parseStsPolicy, parseStsRecord, type StsPolicy, type StsPolicyError } from './mta-sts-policy.ts';
import { resolveAddresses } from './routing.ts';
import { type SecureDns, txtStrings } from './secure-dns.ts';

export interface CachedStsPolicy {
  id: string;
  policy: StsPolicy;
  fetchedAt: number;
  expiresAt: number;
}

export interface StsLookup {
  /** The policy in force (mode `none` counts as no policy for delivery), or null. */
  policy: CachedStsPolicy | null;
  /** A discovery or fetch failure met on the way (reported via TLS-RPT). */
  failure?: { type: StsFailureType; reason: string };
}

export interface MtaStsOptions {
  redis: Redis;
  prefix: string;
  dns: SecureDns;
  now?: () => number;
  /** HTTPS port of the policy hosts (443; tests use another). */
  port?: number;
  extraCa?: readonly string[];
  timeoutMs?: number;
  maxBytes?: number;
  logger?: Logger;
}

export interface MtaSts {
  lookup(domain: string): Promise<StsLookup>;
  /** Background refreshes still running (tests wait for them). */
  settled(): Promise<void>;
}

export const STS_POLICY_MAX_BYTES = 64 * 1024;

export function createMtaSts(opts: MtaStsOptions): MtaSts {
  const now = opts.now ?? Date.now;
  const keyOf = (domain: string) => `${opts.prefix}:spooler:mta-sts:${domain}`;
  const refreshing = new Map<string, Promise<unknown>>();

  const readCache = async (domain: string): Promise<CachedStsPolicy | null> => {
    const raw = await opts.redis.get(keyOf(domain));
    if (!raw) return null;
    try {
      const entry = JSON.parse(raw) as CachedStsPolicy;
      return entry.expiresAt > now() ? entry : null;
    } catch {
      return null;
    }
  };

  const fetchAndStore = async (domain: string, id: string): Promise<CachedStsPolicy> => {
    const { addresses } = await resolveAddresses(opts.dns, `mta-sts.${domain}`).catch((err: Error) => {
      throw new StsFetchError('sts-policy-fetch-error', `mta-sts.${domain}: ${err.message}`);
    });
    const text = await fetchStsPolicyText(domain, {
      addresses,
      port: opts.port ?? 443,
      extraCa: opts.extraCa,
      timeoutMs: opts.timeoutMs ?? 20_000,
      maxBytes: opts.maxBytes ?? STS_POLICY_MAX_BYTES,
    });
    let policy: StsPolicy;
    try {
      policy = parseStsPolicy(text);
    } catch (err) {
      throw new StsFetchError('sts-policy-invalid', (err as StsPolicyError).message);
    }
    const at = now();
    const entry: CachedStsPolicy = { id, policy, fetchedAt: at, expiresAt: at + policy.maxAgeSecs * 1000 };
    if (policy.maxAgeSecs > 0) {
      await opts.redis.set(keyOf(domain), JSON.stringify(entry), 'PX', policy.maxAgeSecs * 1000);
    }
    return entry;
  };

  const refreshInBackground = (domain: string, id: string) => {
    if (refreshing.has(domain)) return;
    const p = fetchAndStore(domain, id)
      .then(() => opts.logger?.debug({ domain }, 'MTA-STS policy refreshed before expiry'))
      .catch((err: Error) => opts.logger?.warn({ domain, err: err.message }, 'MTA-STS policy refresh failed'))
      .finally(() => refreshing.delete(domain));
    refreshing.set(domain, p);
  };

  return {
    async lookup(domain) {
      const cached = await readCache(domain);
      let id: string | null;
      try {
        const answer = await opts.dns.query(`_mta-sts.${domain}`, 'TXT');
        id = parseStsRecord(txtStrings(answer.records));
      } catch (err) {
        // Discovery failed: the cache (if any) decides; no policy is not a failure to report.
        return cached
          ? { policy: cached }
          : { policy: null, failure: { type: 'sts-policy-fetch-error', reason: (err as Error).message } };
      }
      if (id === null) return { policy: cached };
      if (cached && cached.id === id) {
        if (now() >= cached.fetchedAt + (cached.policy.maxAgeSecs * 1000) / 2)
          refreshInBackground(domain, id);
        return { policy: cached };
      }
      try {
        return { policy: await fetchAndStore(domain, id) };
      } catch (err) {
        const failure =
          err instanceof StsFetchError
            ? { type: err.type, reason: err.message }
            : { type: 'sts-policy-fetch-error' as const, reason: (err as Error).message };
        opts.logger?.warn(
          { domain, ...failure, usingCached: Boolean(cached) },
          'MTA-STS policy fetch failed',
        );
        return { policy: cached, failure };
      }
    },
    async settled() {
      await Promise.allSettled([...refreshing.values()]);
    },
  };
}
