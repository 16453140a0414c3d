// The spooler's DNS view: every routing lookup (MX, A/AAAA, TLSA, the
// MTA-STS and TLS-RPT TXT records) goes through the wire client so the
// answer carries the resolver's AD bit. AD is only believed from a resolver
// on loopback or one listed in `[spooler] trusted_resolvers` (RFC 6698
// §4.1: the path to the validator must be trusted); from anyone else an
// answer counts as insecure. Answers are cached in-process for their TTL
// (capped) so a burst of mail to one domain costs one lookup.
import { getServers } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { DnsLookupError, type DnsServer, parseDnsServer } from '../src/core/dns/resolver.ts';
import { type WireAnswer, type WireRecordType, wireQuery } from '../src/core/dns/wire-query.ts';

export interface SecureAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  /** AD was set by a trusted resolver. */
  secure: boolean;
  /** Answers of the asked type only (CNAMEs of the chain are followed by the resolver). */
  records: WireAnswer[];
}

export interface SecureDnsOptions {
  /** Configured resolvers (`[dns] resolvers`); empty: the system's. */
  servers: readonly (string | DnsServer)[];
  /** Extra resolvers whose AD bit is trusted (`[spooler] trusted_resolvers`). */
  trusted?: readonly string[];
  timeoutMs?: number;
  /** Upper bound of the in-process cache lifetime; 0 turns caching off. */
  maxCacheMs?: number;
  now?: () => number;
}

export interface SecureDns {
  query(name: string, type: WireRecordType): Promise<SecureAnswer>;
  /** The resolvers asked, in order, and whether their AD bit is believed. */
  servers(): Promise<{ server: DnsServer; trusted: boolean }[]>;
  clearCache(): void;
}

const NEGATIVE_CACHE_MS = 60_000;

export function isLoopback(host: string): boolean {
  return /^127\./.test(host) || host === '::1' || host === '0:0:0:0:0:0:0:1';
}

const key = (s: DnsServer) => `${s.host.toLowerCase()}:${s.port}`;

export function createSecureDns(opts: SecureDnsOptions): SecureDns {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const maxCacheMs = opts.maxCacheMs ?? 300_000;
  const now = opts.now ?? Date.now;
  const trusted = new Set((opts.trusted ?? []).map((t) => key(parseDnsServer(t))));
  const cache = new Map<string, { until: number; answer: SecureAnswer }>();

  let ready: Promise<{ server: DnsServer; trusted: boolean }[]> | undefined;
  const servers = () => {
    ready ??= (async () => {
      const configured = opts.servers.length > 0 ? opts.servers.map(parseDnsServer) : systemServers();
      const resolved = await Promise.all(
        configured.map(async (s) =>
          isIP(s.host) ? s : { host: (await lookup(s.host)).address, port: s.port },
        ),
      );
      return resolved.map((server) => ({
        server,
        trusted: isLoopback(server.host) || trusted.has(key(server)),
      }));
    })();
    ready.catch(() => {
      ready = undefined;
    });
    return ready;
  };

  const ask = async (name: string, type: WireRecordType): Promise<{ answer: SecureAnswer; ttl: number }> => {
    const list = await servers();
    if (list.length === 0) throw new DnsLookupError(name, 'other', 'no resolver is configured');
    let lastError: unknown;
    for (const { server, trusted: believed } of list) {
      let result: Awaited<ReturnType<typeof wireQuery>>;
      try {
        result = await wireQuery(server, name, type, { timeoutMs });
      } catch (err) {
        // Only an unreachable resolver moves on to the next one.
        lastError = err;
        continue;
      }
      // SERVFAIL is final: a validating resolver answers it for bogus data,
      // and asking a second resolver could turn "bogus" into "insecure".
      if (result.rcode === 'SERVFAIL')
        throw new DnsLookupError(name, 'servfail', `SERVFAIL from ${server.host}`);
      if (result.rcode !== 'NOERROR' && result.rcode !== 'NXDOMAIN') {
        throw new DnsLookupError(name, 'other', `${result.rcode} from ${server.host}`);
      }
      const records = result.answers.filter((a) => a.type === type);
      const ttl = records.length > 0 ? Math.min(...records.map((r) => r.ttl)) * 1000 : NEGATIVE_CACHE_MS;
      return {
        answer: { rcode: result.rcode, secure: believed && result.authenticated, records },
        ttl,
      };
    }
    throw lastError instanceof Error
      ? lastError
      : new DnsLookupError(name, 'timeout', 'no resolver answered');
  };

  return {
    async query(name, type) {
      const k = `${name.toLowerCase()}|${type}`;
      const hit = cache.get(k);
      if (hit && hit.until > now()) return hit.answer;
      const { answer, ttl } = await ask(name, type);
      const life = Math.min(ttl, maxCacheMs);
      if (life > 0) cache.set(k, { until: now() + life, answer });
      return answer;
    },
    servers,
    clearCache() {
      cache.clear();
    },
  };
}

function systemServers(): DnsServer[] {
  return getServers().map((s) => parseDnsServer(s));
}

/** The strings of TXT records (each record's character-strings joined). */
export function txtStrings(records: WireAnswer[]): string[] {
  return records.map((r) => {
    const data = r.data as Buffer | Buffer[] | string;
    if (Array.isArray(data)) return Buffer.concat(data.map((d) => Buffer.from(d))).toString('utf8');
    return Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
  });
}
