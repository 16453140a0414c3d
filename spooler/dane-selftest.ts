// Whether DANE can be in effect: DANE needs answers validated by a resolver
// whose AD bit we may believe. At start-up (and periodically) every
// configured resolver is asked for a name in a signed zone with the AD and
// DO bits set; only when all of them are trusted (loopback or
// `[spooler] trusted_resolvers`) and answer with AD is DANE in effect.
// Otherwise DANE is reported "not in effect" — TLSA records are then not
// consulted at all, rather than deferring every message for lack of
// validation.
import type { WireRecordType } from '../src/core/dns/wire-query.ts';
import { wireQuery } from '../src/core/dns/wire-query.ts';
import type { SecureDns } from './secure-dns.ts';

export interface DaneStatus {
  /** `[spooler] dane`. */
  enabled: boolean;
  inEffect: boolean;
  /** The resolvers asked (`host:port`). */
  resolvers: string[];
  /** Why DANE is or is not in effect, for the log and the health route. */
  reason: string;
  checkedAt: number;
}

export interface DaneProbe {
  name: string;
  type: WireRecordType;
}

/** The root zone is signed: a validating resolver sets AD on its DNSKEY set. */
export const DEFAULT_DANE_PROBE: DaneProbe = { name: '.', type: 'DNSKEY' };

export async function daneSelfTest(
  dns: SecureDns,
  opts: { enabled: boolean; probe?: DaneProbe; now?: () => number; timeoutMs?: number },
): Promise<DaneStatus> {
  const now = opts.now ?? Date.now;
  const probe = opts.probe ?? DEFAULT_DANE_PROBE;
  let servers: Awaited<ReturnType<SecureDns['servers']>>;
  try {
    servers = await dns.servers();
  } catch (err) {
    return status(opts.enabled, false, [], `resolvers unusable: ${(err as Error).message}`, now());
  }
  const names = servers.map(({ server }) =>
    server.host.includes(':') ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`,
  );
  if (!opts.enabled) return status(false, false, names, 'DANE is disabled ([spooler] dane = false)', now());
  if (servers.length === 0) return status(true, false, names, 'no resolver is configured', now());
  for (const [i, { server, trusted }] of servers.entries()) {
    if (!trusted) {
      return status(
        true,
        false,
        names,
        `resolver ${names[i]} is not on loopback nor in [spooler] trusted_resolvers, so its AD bit cannot be trusted`,
        now(),
      );
    }
    try {
      const r = await wireQuery(server, probe.name, probe.type, { timeoutMs: opts.timeoutMs ?? 5000 });
      if (!r.authenticated) {
        return status(
          true,
          false,
          names,
          `resolver ${names[i]} does not validate DNSSEC (no AD bit for ${probe.name} ${probe.type}, rcode ${r.rcode})`,
          now(),
        );
      }
    } catch (err) {
      return status(
        true,
        false,
        names,
        `resolver ${names[i]} did not answer the DNSSEC probe: ${(err as Error).message}`,
        now(),
      );
    }
  }
  return status(true, true, names, 'every resolver is trusted and validates DNSSEC', now());
}

function status(
  enabled: boolean,
  inEffect: boolean,
  resolvers: string[],
  reason: string,
  checkedAt: number,
): DaneStatus {
  return { enabled, inEffect, resolvers, reason, checkedAt };
}
