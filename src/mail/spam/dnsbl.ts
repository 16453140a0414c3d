// DNS blocklists and allowlists at the MX (docs/inbound.md "DNSBL and
// DNSWL", `[spam] dnsbl`/`dnswl` in docs/config.md), looked up through
// `[dns] resolvers`:
//  - at connect, every list that checks the client IP is asked at once; a
//    `reject` listing answered at the greeting is 554 5.7.1, a `defer` one
//    421 4.7.1, both naming the list and its TXT reason, and the session ends
//    before any SMTP command;
//  - at MAIL FROM, lists that check the sender's domain (RHSBL) are asked;
//    at RCPT their listings, those of IP lists with `at = "rcpt"`, and the
//    total weight of `score` listings are answered: 550 5.7.1 / 450 4.7.1,
//    or the message is filed as Junk (off chain unless `publish_junk`), as
//    rspamd's "add header" is;
//  - an allowlisted client IP skips every blocklist (rspamd still scans).
// A list that times out or fails is skipped for that look-up (fail open),
// counted, and logged at most once a minute. Answers are kept for their TTL
// (capped; NXDOMAIN for its SOA's negative TTL), at most MAX_CACHE_ENTRIES.
// Each list's RFC 5782 §5 test entries are asked at start and every
// `dnsbl_probe_secs`: a list that lists 127.0.0.1 ("invalid" for domain lists)
// answers for everything and is disabled with a warning until it behaves;
// one that answers only 127.255.255.x error codes refuses our queries and is
// disabled the same way. An answer outside 127.0.0.0/8 is never a listing.
import { BlockList } from 'node:net';
import {
  classifyAnswer,
  clientAddress,
  onlyErrorCodes,
  queryLabel,
  type ResponseFilter,
  replySafe,
  responseFilter,
} from '../../core/dns/dnsbl-match.ts';
import type { DnsLookupError } from '../../core/dns/lookup-error.ts';
import { normalizeDomainName } from '../../core/dns/name.ts';
import type { WireRecordType, WireResult } from '../../core/dns/wire-query.ts';
import type { Logger } from '../../core/log.ts';
import type { DnsblMetrics } from '../../core/metrics/types.ts';
import { SmtpReply } from '../smtp-error.ts';
import type { SpamFact } from './filter.ts';

/** One question through the configured resolvers (src/core/dns/resolver.ts `query`). */
export type DnsQuery = (
  name: string,
  type: WireRecordType,
  opts: { timeoutMs: number },
) => Promise<WireResult>;

export interface BlocklistSpec {
  zone: string;
  check: ('ip' | 'sender')[];
  at: 'connect' | 'rcpt';
  action: 'reject' | 'defer' | 'score';
  weight: number;
  responses: string[];
  mask: number;
  reason?: string;
}

export interface AllowlistSpec {
  zone: string;
  responses: string[];
  mask: number;
}

export interface DnsblOptions {
  blocklists: BlocklistSpec[];
  allowlists: AllowlistSpec[];
  query: DnsQuery;
  /** One look-up; the TXT reason of a listing gets half as long again. */
  timeoutMs: number;
  junkScore: number;
  /** 0: the total weight never refuses. */
  rejectScore: number;
  /** Longest an answer is kept, whatever its TTL (0: nothing is kept). */
  maxCacheSecs: number;
  probeSecs: number;
  /** Client networks never looked up. */
  skipNetworks: string[];
  /** Junk mail is also published on chain (`[spam] publish_junk`). */
  publishJunk: boolean;
  logger: Logger;
  metrics?: DnsblMetrics;
  maxCacheEntries?: number;
  now?: () => number;
}

/** A list's listing of one name, or why there is none. */
type Outcome =
  | { kind: 'listed'; codes: string[]; name: string }
  | { kind: 'clear' }
  | { kind: 'skipped'; why: string };

/** What a zone answered for one name, kept once for every entry that names the zone. */
type Answer = { kind: 'codes'; codes: string[] } | { kind: 'none' } | { kind: 'failed'; why: string };

/** One configured entry; entries naming the same zone (say ZEN's SBL and PBL codes) share its ZoneState. */
interface ListState {
  kind: 'block' | 'allow';
  zone: string;
  z: ZoneState;
  filter: ResponseFilter;
  block?: BlocklistSpec;
}

/** A zone's health (its probes) and its failure log. */
interface ZoneState {
  kind: 'block' | 'allow';
  zone: string;
  /** Test entries: 127.0.0.2/127.0.0.1 for IP lists, "test"/"invalid" for domain-only lists. */
  probeNames: [listed: string, notListed: string];
  disabled: false | 'answers-everything' | 'refused';
  testEntryMissing: boolean;
  firstProbe: Promise<void>;
  probing?: Promise<void>;
  lastProbeAt: number;
  lastFailureLog: number;
  suppressedFailures: number;
}

interface Hit {
  list: ListState;
  spec: BlocklistSpec;
  subject: 'ip' | 'sender';
  outcome: Extract<Outcome, { kind: 'listed' }>;
}

interface SessionLists {
  /** Absent: the client is in `dnsbl_skip_networks` (or not an IP address): nothing is asked. */
  ip?: string;
  ipLookups: Map<ListState, Promise<Outcome>>;
  /** The allowlist that lists the client, asked only once a blocklist lists it. */
  allowed?: Promise<string | undefined>;
  sender?: { from: string; domain?: string; lookups: Map<ListState, Promise<Outcome>> };
  junkCounted: boolean;
}

/** The session object smtp-server passes to every handler (used as a key only). */
export type SessionKey = object & { remoteAddress: string };

const FAILURE_LOG_INTERVAL_MS = 60_000;
const MAX_CACHE_ENTRIES = 50_000;
/** A negative answer without an SOA (RFC 2308 §5 says: keep it briefly, if at all). */
const NEGATIVE_TTL_WITHOUT_SOA = 60;
/** An answer outside 127.0.0.0/8 probes the list again, but not more often than this. */
const REPROBE_MIN_INTERVAL_MS = 30_000;
/** The filter that takes every listing code: what a zone's own answer is judged by. */
const ANY_CODE = responseFilter([], 0);

export class DnsblChecker {
  private readonly zones: ZoneState[];
  private readonly blocks: ListState[];
  private readonly allows: ListState[];
  private readonly skip = new BlockList();
  private readonly cache = new Map<string, { value: Promise<unknown>; until: number }>();
  private readonly sessions = new WeakMap<object, SessionLists>();
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly maxEntries: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: DnsblOptions) {
    this.log = opts.logger;
    this.now = opts.now ?? Date.now;
    this.maxEntries = opts.maxCacheEntries ?? MAX_CACHE_ENTRIES;
    for (const net of opts.skipNetworks) {
      const [address = '', bits] = net.split('/');
      const family = address.includes(':') ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.skip.addAddress(address, family);
      else this.skip.addSubnet(address, Number(bits), family);
    }
    const zones = new Map<string, ZoneState>();
    const make = (
      kind: 'block' | 'allow',
      zone: string,
      filter: ResponseFilter,
      block?: BlocklistSpec,
    ): ListState => {
      let z = zones.get(zone);
      if (!z) {
        z = {
          kind,
          zone,
          probeNames: [`test.${zone}`, `invalid.${zone}`],
          disabled: false,
          testEntryMissing: false,
          firstProbe: Promise.resolve(),
          lastProbeAt: Number.NEGATIVE_INFINITY,
          lastFailureLog: Number.NEGATIVE_INFINITY,
          suppressedFailures: 0,
        };
        zones.set(zone, z);
      }
      // A zone any entry asks about client addresses is probed with the address test entries.
      if (!block || block.check.includes('ip')) z.probeNames = [`2.0.0.127.${zone}`, `1.0.0.127.${zone}`];
      return { kind, zone, z, filter, block };
    };
    this.blocks = opts.blocklists.map((b) => make('block', b.zone, responseFilter(b.responses, b.mask), b));
    this.allows = opts.allowlists.map((a) => make('allow', a.zone, responseFilter(a.responses, a.mask)));
    this.zones = [...zones.values()];
    for (const z of this.zones) {
      opts.metrics?.dnsblDisabled(z.zone, false);
      z.firstProbe = this.probe(z);
    }
    this.timer = setInterval(() => {
      for (const z of this.zones) if (!z.probing) void this.probe(z);
    }, opts.probeSecs * 1000);
    this.timer.unref();
  }

  /** The zones and whether each is disabled now (for logs and tests). */
  state(): { zone: string; kind: 'block' | 'allow'; disabled: string | false }[] {
    return this.zones.map((z) => ({ zone: z.zone, kind: z.kind, disabled: z.disabled }));
  }

  /** The first probe of every zone has finished. */
  async ready(): Promise<void> {
    await Promise.all(this.zones.map((z) => z.firstProbe));
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * At connect: asks every IP list about the client and answers with the
   * reply that refuses the greeting, or undefined. Never rejects.
   */
  connect(session: SessionKey): Promise<SmtpReply | undefined> {
    const s: SessionLists = { ipLookups: new Map(), junkCounted: false };
    this.sessions.set(session, s);
    const client = clientAddress(session.remoteAddress);
    if (!client || this.skip.check(client.ip, client.family)) return Promise.resolve(undefined);
    s.ip = client.ip;
    const label = queryLabel(client.ip);
    for (const list of this.blocks) {
      if (list.block?.check.includes('ip')) s.ipLookups.set(list, this.lookup(list, `${label}.${list.zone}`));
    }
    return this.connectVerdict(s).catch((err: Error) => {
      this.log.warn({ err: err.message, ip: s.ip }, 'DNSBL check at connect failed; the client is let in');
      return undefined;
    });
  }

  /** At MAIL FROM: a new transaction; the sender-domain look-ups start now. */
  mailFrom(session: SessionKey, from: string): void {
    const s = this.sessions.get(session);
    if (!s) return;
    s.junkCounted = false;
    s.sender = undefined;
    if (s.ip) this.senderLookups(s, from);
  }

  /**
   * At RCPT: throws the SmtpReply that refuses the recipient because of a
   * listing; resolves with the Junk verdict when the listings' weight
   * reaches `dnsbl_junk_score`, else undefined.
   */
  async rcpt(session: SessionKey, from: string): Promise<SpamFact | undefined> {
    const s = this.sessions.get(session);
    if (!s?.ip) return undefined;
    const ip = s.ip;
    const pending: { list: ListState; subject: 'ip' | 'sender'; outcome: Promise<Outcome> }[] = [];
    for (const [list, outcome] of s.ipLookups) {
      // Listings answered at the greeting ended that session; those left are weighed here.
      if (list.block?.at === 'connect' && list.block.action !== 'score') continue;
      pending.push({ list, subject: 'ip', outcome });
    }
    const sender = this.senderLookups(s, from);
    for (const [list, outcome] of sender.lookups) pending.push({ list, subject: 'sender', outcome });
    const hits: Hit[] = [];
    for (const p of pending) {
      const outcome = await p.outcome;
      if (outcome.kind === 'listed' && p.list.block)
        hits.push({ list: p.list, spec: p.list.block, subject: p.subject, outcome });
    }
    if (hits.length === 0 || (await this.allowedBy(s))) return undefined;

    const refusal =
      hits.find((h) => h.spec.action === 'reject') ?? hits.find((h) => h.spec.action === 'defer');
    if (refusal) {
      const text = await this.reasonText(refusal, ip, sender.domain);
      const who =
        refusal.subject === 'ip' ? `Client host [${ip}]` : `Sender domain ${sender.domain ?? ''}`.trimEnd();
      this.opts.metrics?.dnsblRefused(
        refusal.list.zone,
        refusal.spec.action === 'reject' ? 'reject' : 'defer',
      );
      const reason = `listed by ${refusal.list.zone} (${refusal.outcome.codes.join(',')})`;
      this.log.info(
        { ip, from, list: refusal.list.zone, subject: refusal.subject, codes: refusal.outcome.codes, text },
        `recipient refused: ${refusal.subject === 'ip' ? 'client' : 'sender domain'} listed by ${refusal.list.zone}`,
      );
      if (refusal.spec.action === 'reject')
        throw new SmtpReply(
          550,
          '5.7.1',
          `Service unavailable; ${who} blocked using ${refusal.list.zone}${text}`,
          reason,
        );
      throw new SmtpReply(
        450,
        '4.7.1',
        `Service temporarily unavailable; ${who} listed by ${refusal.list.zone}, try again later${text}`,
        reason,
      );
    }

    const scored = hits.filter((h) => h.spec.action === 'score');
    const total = round2(scored.reduce((sum, h) => sum + h.spec.weight, 0));
    const zones = [...new Set(scored.map((h) => h.list.zone))];
    if (this.opts.rejectScore > 0 && total >= this.opts.rejectScore) {
      for (const zone of zones) this.opts.metrics?.dnsblRefused(zone, 'score');
      this.log.info({ ip, from, lists: zones, score: total }, 'recipient refused: DNSBL score');
      throw new SmtpReply(
        550,
        '5.7.1',
        `Service unavailable; Client host [${ip}] listed by ${zones.join(', ')} (score ${total})`,
        `DNSBL score ${total} >= ${this.opts.rejectScore}`,
      );
    }
    if (scored.length === 0 || total < this.opts.junkScore) return undefined;
    if (!s.junkCounted) {
      s.junkCounted = true;
      for (const zone of zones) this.opts.metrics?.dnsblJunk(zone);
      this.log.info(
        { ip, from, lists: zones, score: total },
        'DNSBL score reached: the message is filed as Junk',
      );
    }
    return {
      action: 'add header',
      score: total,
      required: this.opts.junkScore,
      symbols: scored
        .map((h) => `${h.subject === 'ip' ? 'RBL' : 'RHSBL'}_${h.list.zone}(${round2(h.spec.weight)})`)
        .slice(0, 40),
      junk: true,
      publish: this.opts.publishJunk,
      scanner: 'dnsbl',
    };
  }

  private async connectVerdict(s: SessionLists): Promise<SmtpReply | undefined> {
    const ip = s.ip as string;
    const hits: Hit[] = [];
    await Promise.all(
      [...s.ipLookups].map(async ([list, outcome]) => {
        const spec = list.block;
        if (spec?.at !== 'connect' || spec.action === 'score') return;
        const o = await outcome;
        if (o.kind === 'listed') hits.push({ list, spec, subject: 'ip', outcome: o });
      }),
    );
    if (hits.length === 0 || (await this.allowedBy(s))) return undefined;
    // Config order decides between lists; a reject outranks a defer.
    hits.sort((a, b) => this.blocks.indexOf(a.list) - this.blocks.indexOf(b.list));
    const hit = hits.find((h) => h.spec.action === 'reject') ?? (hits[0] as Hit);
    const text = await this.reasonText(hit, ip, undefined);
    const reason = `listed by ${hit.list.zone} (${hit.outcome.codes.join(',')})`;
    this.opts.metrics?.dnsblRefused(hit.list.zone, hit.spec.action === 'reject' ? 'reject' : 'defer');
    this.log.info(
      { ip, list: hit.list.zone, codes: hit.outcome.codes, text, action: hit.spec.action },
      `connection refused: client listed by ${hit.list.zone}`,
    );
    if (hit.spec.action === 'reject')
      return new SmtpReply(
        554,
        '5.7.1',
        `Service unavailable; Client host [${ip}] blocked using ${hit.list.zone}${text}`,
        reason,
      );
    return new SmtpReply(
      421,
      '4.7.1',
      `Service temporarily unavailable; Client host [${ip}] listed by ${hit.list.zone}, try again later${text}`,
      reason,
    );
  }

  /** The allowlist that lists the session's client (asked once per session, all lists at once). */
  private allowedBy(s: SessionLists): Promise<string | undefined> {
    if (!s.ip || this.allows.length === 0) return Promise.resolve(undefined);
    s.allowed ??= (async () => {
      const label = queryLabel(s.ip as string);
      const outcomes = await Promise.all(this.allows.map((l) => this.lookup(l, `${label}.${l.zone}`)));
      const index = outcomes.findIndex((o) => o.kind === 'listed');
      const zone = index >= 0 ? this.allows[index]?.zone : undefined;
      if (zone) {
        this.opts.metrics?.dnsblAllowed(zone);
        this.log.info({ ip: s.ip, list: zone }, `client allowlisted by ${zone}: no blocklist applies`);
      }
      return zone;
    })();
    return s.allowed;
  }

  private senderLookups(s: SessionLists, from: string): NonNullable<SessionLists['sender']> {
    if (s.sender?.from === from) return s.sender;
    const lookups = new Map<ListState, Promise<Outcome>>();
    let domain: string | undefined;
    const at = from.lastIndexOf('@');
    if (at > 0) {
      try {
        domain = normalizeDomainName(from.slice(at + 1)).ascii;
      } catch {
        domain = undefined; // not a domain name: nothing to ask
      }
    }
    if (domain) {
      for (const list of this.blocks) {
        if (!list.block?.check.includes('sender')) continue;
        const name = `${domain}.${list.zone}`;
        // A name over 253 characters cannot be asked.
        if (name.length <= 253) lookups.set(list, this.lookup(list, name));
      }
    }
    s.sender = { from, domain, lookups };
    return s.sender;
  }

  /** ": <TXT>" of a listing, or the list's `reason`, or "". */
  private async reasonText(hit: Hit, ip: string, domain: string | undefined): Promise<string> {
    const txt = await this.cached(`TXT ${hit.outcome.name}`, async () => {
      try {
        const r = await this.opts.query(hit.outcome.name, 'TXT', {
          timeoutMs: Math.max(100, Math.floor(this.opts.timeoutMs / 2)),
        });
        const first = r.answers.find((a) => a.type === 'TXT');
        const data = first?.data as Buffer[] | Buffer | string | undefined;
        const text = Array.isArray(data)
          ? Buffer.concat(data.map((d) => Buffer.from(d))).toString('utf8')
          : data === undefined
            ? undefined
            : String(data);
        return { value: replySafe(text), ttl: first ? first.ttl : negativeTtl(r) };
      } catch {
        return { value: undefined, ttl: -1 };
      }
    });
    const template = hit.spec.reason;
    const text =
      txt ??
      (template
        ? replySafe(
            template
              .replaceAll('{ip}', ip)
              .replaceAll('{domain}', domain ?? '')
              .replaceAll('{zone}', hit.list.zone),
          )
        : undefined);
    return text ? `: ${text}` : '';
  }

  /**
   * One entry's answer for one name: the zone's answer (from the cache or
   * asked) through the entry's `responses`/`mask`. Until the zone's first
   * probe has answered, the name is asked alongside it and the answer used
   * only if the probe leaves the zone enabled.
   */
  private async lookup(list: ListState, name: string): Promise<Outcome> {
    const z = list.z;
    if (z.disabled) return { kind: 'skipped', why: 'disabled' };
    const pending = this.cached(`A ${name}`, () => this.ask(z, name), z.zone);
    await z.firstProbe;
    if (z.disabled) return { kind: 'skipped', why: 'disabled' };
    const answer = await pending;
    if (answer.kind === 'none') return { kind: 'clear' };
    if (answer.kind === 'failed') return { kind: 'skipped', why: answer.why };
    const c = classifyAnswer(answer.codes, list.filter);
    if (c.kind === 'listed') return { kind: 'listed', codes: c.codes, name };
    return c.kind === 'clear' ? { kind: 'clear' } : { kind: 'skipped', why: c.kind };
  }

  /** Forgets every answer of one list (its state changed: what it said before is not to be trusted). */
  private forget(zone: string): void {
    for (const key of [...this.cache.keys()]) if (key.endsWith(`.${zone}`)) this.cache.delete(key);
  }

  /**
   * A cached value, or `make`'s; `make` gives the value and its TTL in
   * seconds (negative: not kept). Callers arriving while it runs share it.
   */
  private cached<T>(key: string, make: () => Promise<{ value: T; ttl: number }>, zone?: string): Promise<T> {
    const at = this.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > at) {
      if (zone && hit.until !== Number.POSITIVE_INFINITY) this.opts.metrics?.dnsblCacheHit(zone);
      return hit.value as Promise<T>;
    }
    const entry = { value: Promise.resolve(undefined as unknown), until: Number.POSITIVE_INFINITY };
    const run = make().then(({ value, ttl }) => {
      const keep = Math.min(ttl, this.opts.maxCacheSecs);
      if (keep > 0) entry.until = this.now() + keep * 1000;
      else if (this.cache.get(key) === entry) this.cache.delete(key);
      return value;
    });
    entry.value = run;
    this.cache.delete(key);
    this.cache.set(key, entry);
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    return run;
  }

  /** Asks the zone about one name; counts and (once a minute) logs what went wrong. */
  private async ask(z: ZoneState, name: string): Promise<{ value: Answer; ttl: number }> {
    const started = performance.now();
    const count = (result: string) =>
      this.opts.metrics?.dnsblLookup(z.zone, result, (performance.now() - started) / 1000);
    const failed = (why: string, detail: string) => {
      count(why);
      this.failure(z, why, detail);
      return { value: { kind: 'failed' as const, why }, ttl: -1 };
    };
    let result: WireResult;
    try {
      result = await this.opts.query(name, 'A', { timeoutMs: this.opts.timeoutMs });
    } catch (err) {
      const kind = (err as DnsLookupError).kind;
      return failed(kind === 'timeout' || kind === 'servfail' ? kind : 'error', (err as Error).message);
    }
    if (result.rcode !== 'NOERROR' && result.rcode !== 'NXDOMAIN')
      return failed('error', `${name}: ${result.rcode}`);
    const records = result.rcode === 'NOERROR' ? result.answers.filter((a) => a.type === 'A') : [];
    if (records.length === 0) {
      count('clear');
      return { value: { kind: 'none' }, ttl: negativeTtl(result) };
    }
    const codes = records.map((r) => String(r.data));
    // Whatever an entry's filter: an address outside 127/8 or only error codes is no listing.
    const answer = classifyAnswer(codes, ANY_CODE);
    if (answer.kind === 'invalid') {
      if (!z.probing && this.now() - z.lastProbeAt >= REPROBE_MIN_INTERVAL_MS) void this.probe(z);
      return failed(
        'invalid',
        `${name} answered ${answer.codes.join(', ')}, outside 127.0.0.0/8: not a listing`,
      );
    }
    if (answer.kind === 'list-error')
      return failed('list-error', `${name} answered ${answer.codes.join(', ')}: the list refused the query`);
    count('listed');
    return { value: { kind: 'codes', codes }, ttl: Math.min(...records.map((r) => r.ttl)) };
  }

  /** A failed look-up: logged at most once a minute per list (with how many were not logged). */
  private failure(list: ZoneState, why: string, detail: string): void {
    const at = this.now();
    if (at - list.lastFailureLog < FAILURE_LOG_INTERVAL_MS) {
      list.suppressedFailures++;
      return;
    }
    list.lastFailureLog = at;
    const suppressed = list.suppressedFailures;
    list.suppressedFailures = 0;
    this.log.warn(
      { list: list.zone, why, err: detail, suppressed },
      `DNS${list.kind === 'block' ? 'BL' : 'WL'} look-up failed (${why}); ${list.zone} is skipped for that look-up`,
    );
  }

  /** Asks the zone's RFC 5782 §5 test entries and disables or enables it by what they say. */
  private probe(list: ZoneState): Promise<void> {
    const run = (async () => {
      list.lastProbeAt = this.now();
      const [listedName, clearName] = list.probeNames;
      const [positive, negative] = await Promise.allSettled([
        this.opts.query(listedName, 'A', { timeoutMs: this.opts.timeoutMs }),
        this.opts.query(clearName, 'A', { timeoutMs: this.opts.timeoutMs }),
      ]);
      const addresses = (r: WireResult) =>
        r.rcode === 'NOERROR' ? r.answers.filter((a) => a.type === 'A').map((a) => String(a.data)) : [];
      const kind = list.kind === 'block' ? 'DNSBL' : 'DNSWL';
      if (negative.status === 'fulfilled' && ['NOERROR', 'NXDOMAIN'].includes(negative.value.rcode)) {
        const answered = addresses(negative.value);
        const was = list.disabled;
        if (answered.length === 0) list.disabled = false;
        else list.disabled = onlyErrorCodes(answered) ? 'refused' : 'answers-everything';
        if (list.disabled !== was) {
          this.forget(list.zone);
          this.opts.metrics?.dnsblDisabled(list.zone, list.disabled !== false);
          if (list.disabled === 'answers-everything')
            this.log.warn(
              { list: list.zone, probe: clearName, answer: answered },
              `${kind} ${list.zone} answers for everything (its test entry ${clearName} must not be listed and is): the list is disabled until it behaves`,
            );
          else if (list.disabled === 'refused')
            this.log.warn(
              { list: list.zone, probe: clearName, answer: answered },
              `${kind} ${list.zone} refuses our queries (${answered.join(', ')}; with Spamhaus: a public or shared resolver, or over the free limit): the list is disabled until it answers`,
            );
          else
            this.log.info(
              { list: list.zone, was },
              `${kind} ${list.zone} behaves again (${clearName} is not listed): the list is enabled`,
            );
        }
      }
      if (positive.status === 'fulfilled' && ['NOERROR', 'NXDOMAIN'].includes(positive.value.rcode)) {
        const missing = addresses(positive.value).length === 0;
        if (missing && !list.testEntryMissing)
          this.log.warn(
            { list: list.zone, probe: listedName },
            `${kind} ${list.zone} does not list its test entry ${listedName}: is the zone name right? (it stays enabled)`,
          );
        list.testEntryMissing = missing;
      }
    })()
      .catch((err: Error) => this.log.warn({ list: list.zone, err: err.message }, 'DNSBL probe failed'))
      .finally(() => {
        list.probing = undefined;
      });
    list.probing = run;
    return run;
  }
}

/** How long "no such name" may be kept: the SOA's TTL or MINIMUM, whichever is lower (RFC 2308 §5). */
function negativeTtl(r: WireResult): number {
  const soa = r.authorities.find((a) => a.type === 'SOA');
  if (!soa) return NEGATIVE_TTL_WITHOUT_SOA;
  const minimum = (soa.data as { minimum?: number } | undefined)?.minimum ?? soa.ttl;
  return Math.min(soa.ttl, minimum);
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** rspamd's Junk verdict with the DNSBL listings that also weighed on the transaction. */
export function withListings(fact: SpamFact, listings: SpamFact | undefined): SpamFact {
  if (!listings || listings === fact) return fact;
  return { ...fact, symbols: [...fact.symbols, ...listings.symbols].slice(0, 40) };
}
