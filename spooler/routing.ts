// Where mail for a domain goes (RFC 5321 §5.1): its MX hosts in preference
// order (random among equal preferences, so load spreads as the domain
// intends), the domain itself when it has no MX records (implicit MX), or
// nowhere when it publishes a null MX (RFC 7505) or does not exist.
import { DnsLookupError } from '../src/core/dns/resolver.ts';
import type { SecureDns } from './secure-dns.ts';

export interface MxHost {
  host: string;
  preference: number;
  /** True for the implicit MX (the domain's own address records). */
  implicit: boolean;
}

export type Route =
  /** `secure`: the MX answer (or its denial, for an implicit MX) was DNSSEC-validated. */
  | { kind: 'hosts'; hosts: MxHost[]; secure: boolean }
  /** RFC 7505: the domain accepts no mail. */
  | { kind: 'null-mx' }
  /** NXDOMAIN: there is no such domain. */
  | { kind: 'no-domain' };

export interface HostAddresses {
  addresses: string[];
  /** Every address answer that was present was DNSSEC-validated. */
  secure: boolean;
}

const norm = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** Resolves the MX route of `domain`; DNS failures (not denials) throw DnsLookupError. */
export async function resolveRoute(dns: SecureDns, domain: string, random: () => number): Promise<Route> {
  const answer = await dns.query(domain, 'MX');
  if (answer.rcode === 'NXDOMAIN') return { kind: 'no-domain' };
  const mx = answer.records.map((r) => {
    const d = r.data as { preference: number; exchange: string };
    return { host: norm(d.exchange ?? ''), preference: d.preference };
  });
  if (mx.length === 0) {
    // RFC 5321 §5.1: no MX at all means the domain itself is the host, but
    // only if it has an address (checked when connecting).
    return {
      kind: 'hosts',
      hosts: [{ host: norm(domain), preference: 0, implicit: true }],
      secure: answer.secure,
    };
  }
  const real = mx.filter((m) => m.host !== '' && m.host !== '.');
  // A null MX is only meaningful alone (RFC 7505 §3); mixed in, it is ignored.
  if (real.length === 0) return { kind: 'null-mx' };
  const byPreference = new Map<number, MxHost[]>();
  for (const m of real) {
    const group = byPreference.get(m.preference) ?? [];
    if (!group.some((g) => g.host === m.host)) group.push({ ...m, implicit: false });
    byPreference.set(m.preference, group);
  }
  const hosts = [...byPreference.keys()]
    .sort((a, b) => a - b)
    .flatMap((p) => shuffle(byPreference.get(p) ?? [], random));
  return { kind: 'hosts', hosts, secure: answer.secure };
}

/** A and AAAA of a host (IPv4 first); a host with neither yields an empty list. */
export async function resolveAddresses(dns: SecureDns, host: string): Promise<HostAddresses> {
  const results = await Promise.allSettled([dns.query(host, 'A'), dns.query(host, 'AAAA')]);
  const addresses: string[] = [];
  let secure = true;
  let failure: unknown;
  for (const r of results) {
    if (r.status === 'rejected') {
      failure = r.reason;
      continue;
    }
    secure &&= r.value.secure;
    for (const rec of r.value.records) addresses.push(String(rec.data));
  }
  // One family failing is fine when the other gave addresses.
  if (addresses.length === 0 && failure) throw failure;
  if (failure) secure = false;
  return { addresses, secure };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function isDnsLookupError(err: unknown): err is DnsLookupError {
  return err instanceof DnsLookupError;
}
