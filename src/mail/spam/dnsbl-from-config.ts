// The MX's DnsblChecker from `[spam] dnsbl`/`dnswl` (docs/config.md), or
// undefined when no list is configured. The lists apply whether or not
// `[spam] enabled` turns rspamd on. Look-ups go through `[dns] resolvers`
// (the system's only when that list is empty).
import type { DnsConfig, SpamConfig } from '../../core/config/types.ts';
import { createDnsResolver } from '../../core/dns/resolver.ts';
import type { Logger } from '../../core/log.ts';
import type { DnsblMetrics } from '../../core/metrics/types.ts';
import { DnsblChecker } from './dnsbl.ts';

export function dnsblFromConfig(
  config: { spam: SpamConfig; dns: DnsConfig },
  logger: Logger,
  metrics?: DnsblMetrics,
): DnsblChecker | undefined {
  const spam = config.spam;
  if (spam.dnsbl.length === 0 && spam.dnswl.length === 0) return undefined;
  // One try per server: the whole look-up is bounded by dnsbl_timeout_ms.
  const resolver = createDnsResolver({
    servers: config.dns.resolvers,
    timeoutMs: spam.dnsbl_timeout_ms,
    tries: 1,
  });
  return new DnsblChecker({
    blocklists: spam.dnsbl,
    allowlists: spam.dnswl,
    query: (name, type, opts) => resolver.query(name, type, opts),
    timeoutMs: spam.dnsbl_timeout_ms,
    junkScore: spam.dnsbl_junk_score,
    rejectScore: spam.dnsbl_reject_score,
    maxCacheSecs: spam.dnsbl_cache_secs,
    probeSecs: spam.dnsbl_probe_secs,
    skipNetworks: spam.dnsbl_skip_networks,
    publishJunk: spam.publish_junk,
    logger: logger.child({ component: 'dnsbl' }),
    metrics,
  });
}
