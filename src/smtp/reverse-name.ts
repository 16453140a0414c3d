// The client's reverse DNS name for the Received field, forward-confirmed
// (FCrDNS): a PTR name counts only when its own A/AAAA records include the
// address, so a sender cannot pick the name our trace shows. The MX starts
// the lookup at connect and never waits past the deadline: a slow or broken
// resolver yields "unknown", never a slower reply.
import { isIPv4 } from 'node:net';
import type { DnsResolver } from '../dns/resolver.ts';

export type ReverseNameLookup = (ip: string) => Promise<string | undefined>;

/** At most this many PTR names are tried (a PTR RRset can be long). */
const MAX_NAMES = 3;

export function reverseNameLookup(
  resolver: Pick<DnsResolver, 'reverse' | 'a' | 'aaaa'>,
  deadlineMs: number,
): ReverseNameLookup {
  return (ip) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), deadlineMs);
      timer.unref();
    });
    return Promise.race([confirmed(resolver, ip).catch(() => undefined), deadline]).finally(() =>
      clearTimeout(timer),
    );
  };
}

async function confirmed(
  resolver: Pick<DnsResolver, 'reverse' | 'a' | 'aaaa'>,
  ip: string,
): Promise<string | undefined> {
  const names = (await resolver.reverse(ip)).slice(0, MAX_NAMES);
  const want = ip.toLowerCase();
  for (const name of names) {
    const addresses = await (isIPv4(ip) ? resolver.a(name) : resolver.aaaa(name)).catch(() => []);
    if (addresses.some((a) => a.toLowerCase() === want)) return name.replace(/\.$/, '').toLowerCase();
  }
  return undefined;
}
