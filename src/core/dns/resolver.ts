// DNS lookups through a chosen resolver (`[domaind] resolver`, `[dns]
// resolvers`, or a test's loopback DNS server). node:dns's Resolver does the
// common record types (it retries and falls back to TCP on truncation);
// TLSA goes through wireQuery. Failures become one error type whose `kind`
// tells "the name has no such record" apart from "the resolver failed".
import { Resolver } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { splitHostPort } from '../config/fields.ts';
import { type DnsFailureKind, DnsLookupError, type DnsServer } from './lookup-error.ts';
import { reverseName } from './name.ts';
import { type WireRecordType, type WireResult, wireQuery } from './wire-query.ts';

export { type DnsFailureKind, DnsLookupError, type DnsServer };

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface SrvRecord {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  /** Lowercase hex of the association data. */
  data: string;
}

export interface DnsResolver {
  /** The servers asked; empty means the system's resolvers. */
  readonly servers: readonly DnsServer[];
  /** One string per TXT record, its character-strings joined (RFC 7208 §3.3). */
  txt(name: string): Promise<string[]>;
  mx(name: string): Promise<MxRecord[]>;
  a(name: string): Promise<string[]>;
  aaaa(name: string): Promise<string[]>;
  cname(name: string): Promise<string[]>;
  srv(name: string): Promise<SrvRecord[]>;
  /** PTR names of an IP address (the reverse name is built here). */
  reverse(ip: string): Promise<string[]>;
  tlsa(name: string): Promise<TlsaRecord[]>;
  /**
   * One question by wire (./wire-query.ts) to the servers in order (the
   * system's when none are configured): the rcode, the answers with their
   * TTLs and the authority section. The next server is asked after a
   * timeout, SERVFAIL or REFUSED; `timeoutMs` (default timeoutMs × tries)
   * bounds the whole call. NXDOMAIN is a result, not an error; when no
   * server answers it throws DnsLookupError (timeout, servfail, refused).
   */
  query(name: string, type: WireRecordType, opts?: { timeoutMs?: number }): Promise<WireResult>;
}

export interface DnsResolverOptions {
  /** `host:port` strings (port 53 when omitted) or parsed servers; empty or absent: system resolvers. */
  servers?: readonly (string | DnsServer)[];
  /** Per try, default 3000 ms. */
  timeoutMs?: number;
  /** Tries per server, default 2. */
  tries?: number;
}

const KIND_BY_CODE: Record<string, DnsFailureKind> = {
  ENOTFOUND: 'nxdomain',
  ENODATA: 'nodata',
  ESERVFAIL: 'servfail',
  ETIMEOUT: 'timeout',
  ECONNREFUSED: 'refused',
  EREFUSED: 'refused',
};

export function parseDnsServer(value: string | DnsServer): DnsServer {
  return typeof value === 'string' ? splitHostPort(value, 53) : value;
}

/** `host:port` for node:dns's setServers (IPv6 in brackets). */
function serverString(s: DnsServer): string {
  return s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
}

export function createDnsResolver(opts: DnsResolverOptions = {}): DnsResolver {
  const timeoutMs = opts.timeoutMs ?? 3000;
  const tries = opts.tries ?? 2;
  const configured = (opts.servers ?? []).map(parseDnsServer);
  const resolver = new Resolver({ timeout: timeoutMs, tries });
  // setServers wants IP addresses; a resolver given by name is looked up once.
  let ready: Promise<DnsServer[]> | undefined;
  const servers = async (): Promise<DnsServer[]> => {
    ready ??= (async () => {
      const resolved = await Promise.all(
        configured.map(async (s) =>
          isIP(s.host) ? s : { host: (await lookup(s.host)).address, port: s.port },
        ),
      );
      if (resolved.length > 0) resolver.setServers(resolved.map(serverString));
      return resolved;
    })();
    return ready;
  };

  const call = async <T>(
    name: string,
    fn: (cb: (err: NodeJS.ErrnoException | null, v: T) => void) => void,
  ) => {
    await servers();
    return new Promise<T>((resolve, reject) => {
      fn((err, value) => {
        if (!err) return resolve(value);
        const code = err.code ?? '';
        reject(new DnsLookupError(name, KIND_BY_CODE[code] ?? 'other', code || err.message));
      });
    });
  };

  return {
    get servers() {
      return configured;
    },
    txt: async (name) =>
      (await call<string[][]>(name, (cb) => resolver.resolveTxt(name, cb))).map((chunks) => chunks.join('')),
    mx: async (name) => call<MxRecord[]>(name, (cb) => resolver.resolveMx(name, cb)),
    a: (name) => call<string[]>(name, (cb) => resolver.resolve4(name, cb)),
    aaaa: (name) => call<string[]>(name, (cb) => resolver.resolve6(name, cb)),
    cname: (name) => call<string[]>(name, (cb) => resolver.resolveCname(name, cb)),
    srv: async (name) =>
      (
        await call<{ priority: number; weight: number; port: number; name: string }[]>(name, (cb) =>
          resolver.resolveSrv(name, cb),
        )
      ).map((r) => ({ priority: r.priority, weight: r.weight, port: r.port, target: r.name })),
    // A PTR query for the arpa name: node's `reverse` answers from the hosts
    // file first (127.0.0.1 → whatever /etc/hosts says), not only the resolvers.
    reverse: (ip) => {
      const name = reverseName(ip);
      return call<string[]>(name, (cb) => resolver.resolvePtr(name, cb));
    },
    tlsa: async (name) => {
      // With no configured server, ask the first system resolver node:dns found.
      const [server = resolver.getServers().map((s) => parseDnsServer(s))[0]] = await servers();
      if (!server) throw new DnsLookupError(name, 'other', 'no resolver address is known for TLSA lookups');
      const result = await wireQuery(server, name, 'TLSA', { timeoutMs: timeoutMs * tries });
      if (result.rcode === 'NXDOMAIN') throw new DnsLookupError(name, 'nxdomain', 'NXDOMAIN');
      if (result.rcode === 'SERVFAIL') throw new DnsLookupError(name, 'servfail', 'SERVFAIL');
      if (result.rcode !== 'NOERROR') throw new DnsLookupError(name, 'other', result.rcode);
      const records = result.answers.filter((a) => a.type === 'TLSA');
      if (records.length === 0) throw new DnsLookupError(name, 'nodata', 'no TLSA records');
      return records.map((a) => {
        const d = a.data as { usage: number; selector: number; matchingType: number; certificate: Buffer };
        return {
          usage: d.usage,
          selector: d.selector,
          matchingType: d.matchingType,
          data: d.certificate.toString('hex'),
        };
      });
    },
    query: async (name, type, q = {}) => {
      const configuredServers = await servers();
      const list =
        configuredServers.length > 0
          ? configuredServers
          : resolver.getServers().map((s) => parseDnsServer(s));
      if (list.length === 0) throw new DnsLookupError(name, 'other', 'no resolver address is known');
      const budget = q.timeoutMs ?? timeoutMs * tries;
      const deadline = performance.now() + budget;
      let last: DnsLookupError | undefined;
      for (const [i, server] of list.entries()) {
        const left = deadline - performance.now();
        if (left < 1) break;
        try {
          // Each server left gets its share of what remains.
          const result = await wireQuery(server, name, type, {
            timeoutMs: Math.max(1, Math.floor(left / (list.length - i))),
          });
          if (result.rcode === 'SERVFAIL' || result.rcode === 'REFUSED') {
            last = new DnsLookupError(
              name,
              result.rcode === 'SERVFAIL' ? 'servfail' : 'refused',
              result.rcode,
            );
            continue;
          }
          return result;
        } catch (err) {
          last =
            err instanceof DnsLookupError ? err : new DnsLookupError(name, 'other', (err as Error).message);
        }
      }
      throw last ?? new DnsLookupError(name, 'timeout', `no answer within ${budget} ms`);
    },
  };
}
