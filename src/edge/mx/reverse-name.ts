// The client's reverse DNS name for the Received field, forward-confirmed
// (FCrDNS): a PTR name counts only when its own A/AAAA records include the
// address, so a sender cannot pick the name our trace shows. The MX starts
// the lookup at connect and never waits past the deadline: a slow or broken
// resolver yields "unknown", never a slower reply. An answer (a confirmed
// name, or none that confirms) is kept per IP for a minute, and connections
// from an IP whose lookup is under way share it (each still waits at most the
// deadline): a client that opens a connection per message costs one lookup,
// not one per message. An IP without PTR records (NXDOMAIN or NODATA, the
// usual answer for a client without reverse DNS) is an answer too, kept as
// none. A lookup that fails (timeout, SERVFAIL) is not kept.
import { isIPv4 } from 'node:net';
import { DnsLookupError } from '../../core/dns/lookup-error.ts';
import type { DnsResolver } from '../../core/dns/resolver.ts';

export type ReverseNameLookup = (ip: string) => Promise<string | undefined>;

/** At most this many PTR names are tried (a PTR RRset can be long). */
const MAX_NAMES = 3;

export interface ReverseNameCache {
  /** How long a finished lookup is kept (default one minute; 0 keeps nothing). */
  ttlMs?: number;
  /** Most IPs kept; past it the oldest entry goes (default 10,000). */
  maxEntries?: number;
  now?: () => number;
}

export function reverseNameLookup(
  resolver: Pick<DnsResolver, 'reverse' | 'a' | 'aaaa'>,
  deadlineMs: number,
  cache: ReverseNameCache = {},
): ReverseNameLookup {
  const ttlMs = cache.ttlMs ?? 60_000;
  const maxEntries = cache.maxEntries ?? 10_000;
  const now = cache.now ?? Date.now;
  /** Per IP: the lookup (finished or under way) and when a finished one expires. */
  const known = new Map<string, { name: Promise<string | undefined>; until: number }>();
  const lookup = (ip: string): Promise<string | undefined> => {
    const hit = known.get(ip);
    if (hit && hit.until > now()) return hit.name;
    const entry = { name: confirmed(resolver, ip), until: Number.POSITIVE_INFINITY };
    known.delete(ip);
    known.set(ip, entry);
    if (known.size > maxEntries) known.delete(known.keys().next().value as string);
    entry.name.then(
      () => {
        entry.until = now() + ttlMs;
      },
      () => {
        if (known.get(ip) === entry) known.delete(ip);
      },
    );
    return entry.name;
  };
  return (ip) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), deadlineMs);
      timer.unref();
    });
    return Promise.race([lookup(ip).catch(() => undefined), deadline]).finally(() => clearTimeout(timer));
  };
}

async function confirmed(
  resolver: Pick<DnsResolver, 'reverse' | 'a' | 'aaaa'>,
  ip: string,
): Promise<string | undefined> {
  let names: string[];
  try {
    names = (await resolver.reverse(ip)).slice(0, MAX_NAMES);
  } catch (err) {
    // No PTR record at all: no name, and the answer is kept like any other.
    if (err instanceof DnsLookupError && err.isNegative) return undefined;
    throw err;
  }
  const want = ip.toLowerCase();
  for (const name of names) {
    const addresses = await (isIPv4(ip) ? resolver.a(name) : resolver.aaaa(name)).catch(() => []);
    if (addresses.some((a) => a.toLowerCase() === want)) return name.replace(/\.$/, '').toLowerCase();
  }
  return undefined;
}
