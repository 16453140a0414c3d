// DnsblChecker against the loopback DNS double through createDnsResolver's
// wire queries: IPv6 clients, the networks never asked, a list that refuses
// us, the TTL cap and the cache bound, the weighted refusal, and the
// resolver's failover from a broken server to the next.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type DnsDouble, type DnsZone, startDnsDouble } from '../../../test/support/doubles/dns-server.ts';
import { DEFAULT_DNSBL_SKIP_NETWORKS } from '../../core/config/sections/spam.ts';
import { createDnsResolver } from '../../core/dns/resolver.ts';
import { SealpostMetrics } from '../../core/metrics/index.ts';
import { type BlocklistSpec, DnsblChecker, type DnsblOptions } from './dnsbl.ts';

const doubles: DnsDouble[] = [];
const checkers: DnsblChecker[] = [];
afterEach(async () => {
  for (const c of checkers.splice(0)) c.close();
  for (const d of doubles.splice(0)) await d.close();
});

async function double(zone: DnsZone): Promise<DnsDouble> {
  const d = await startDnsDouble(zone);
  doubles.push(d);
  return d;
}

function logLines(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

const list = (zone: string, more: Partial<BlocklistSpec> = {}): BlocklistSpec => ({
  zone,
  check: ['ip'],
  at: 'connect',
  action: 'reject',
  weight: 1,
  responses: [],
  mask: 0,
  ...more,
});

async function checker(dns: DnsDouble | string[], more: Partial<DnsblOptions> = {}) {
  const logs = logLines();
  const metrics = new SealpostMetrics({ processMetrics: false });
  const resolver = createDnsResolver({
    servers: Array.isArray(dns) ? dns : [dns.address],
    timeoutMs: 400,
    tries: 1,
  });
  const c = new DnsblChecker({
    blocklists: [],
    allowlists: [],
    query: (name, type, opts) => resolver.query(name, type, opts),
    timeoutMs: 400,
    junkScore: 1,
    rejectScore: 0,
    maxCacheSecs: 3600,
    probeSecs: 600,
    skipNetworks: [],
    publishJunk: false,
    logger: pino(logs.stream),
    metrics,
    ...more,
  });
  checkers.push(c);
  await c.ready();
  return { c, logs, metrics };
}

const probes = (zone: string): DnsZone => ({ [`2.0.0.127.${zone}`]: { A: ['127.0.0.2'] } });
const asked = (dns: DnsDouble, name: string) =>
  dns.queries.filter((q) => q.name === name && q.type === 'A').length;

describe('DnsblChecker', () => {
  it('asks for an IPv6 client by its reversed nibbles', async () => {
    const name = `1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.v6.test`;
    const dns = await double({ ...probes('v6.test'), [name]: { A: ['127.0.0.2'], TXT: ['v6 listed'] } });
    const { c } = await checker(dns, { blocklists: [list('v6.test')] });
    const reply = await c.connect({ remoteAddress: '2001:db8::1' });
    expect(reply?.responseCode).toBe(554);
    expect(reply?.message).toBe(
      '5.7.1 Service unavailable; Client host [2001:0db8:0000:0000:0000:0000:0000:0001] blocked using v6.test: v6 listed',
    );
  });

  it('never asks about loopback and private clients by default', async () => {
    const dns = await double({ ...probes('bl.test'), '5.0.0.127.bl.test': { A: ['127.0.0.2'] } });
    const { c } = await checker(dns, {
      blocklists: [list('bl.test')],
      skipNetworks: DEFAULT_DNSBL_SKIP_NETWORKS,
    });
    const before = dns.queries.length;
    for (const remoteAddress of [
      '127.0.0.5',
      '10.1.2.3',
      '192.168.0.9',
      '::1',
      'fd00::5',
      '::ffff:172.16.0.1',
    ])
      expect(await c.connect({ remoteAddress })).toBeUndefined();
    expect(dns.queries.length).toBe(before);
    // A public address is asked.
    expect(await c.connect({ remoteAddress: '192.0.2.1' })).toBeUndefined();
    expect(asked(dns, '1.2.0.192.bl.test')).toBe(1);
  });

  it('disables a list that answers 127.255.255.x even for 127.0.0.1, and warns once about a missing test entry', async () => {
    const dns = await double({
      '*.refusing.test': { A: ['127.255.255.254'] },
      // Lists the client but not its own test entry 127.0.0.2.
      '5.0.0.127.untested.test': { A: ['127.0.0.2'] },
    });
    const { c, logs, metrics } = await checker(dns, {
      blocklists: [list('refusing.test'), list('untested.test')],
    });
    expect(c.state()).toEqual([
      { zone: 'refusing.test', kind: 'block', disabled: 'refused' },
      { zone: 'untested.test', kind: 'block', disabled: false },
    ]);
    expect(logs.lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^DNSBL refusing\.test refuses our queries \(127\.255\.255\.254;/),
        expect.stringMatching(
          /^DNSBL untested\.test does not list its test entry 2\.0\.0\.127\.untested\.test/,
        ),
      ]),
    );
    expect(await metrics.registry.getSingleMetricAsString('sealpost_dnsbl_list_disabled')).toMatch(
      /list="refusing.test"[^\n]* 1/,
    );
    // Still enabled, the untested list refuses its listed client.
    expect((await c.connect({ remoteAddress: '127.0.0.5' }))?.message).toMatch(
      /blocked using untested\.test$/,
    );
    expect(asked(dns, '5.0.0.127.refusing.test')).toBe(0);
  });

  it('keeps answers no longer than dnsbl_cache_secs, and no more entries than the bound', async () => {
    const zone: DnsZone = probes('bl.test');
    for (const n of [5, 6, 7]) zone[`${n}.0.0.127.bl.test`] = { A: ['127.0.0.2'] };
    const dns = await double(zone);
    let now = 1_000_000;
    const { c } = await checker(dns, {
      blocklists: [list('bl.test')],
      maxCacheSecs: 10,
      maxCacheEntries: 2,
      now: () => now,
    });
    const refused = async (ip: string) => (await c.connect({ remoteAddress: ip }))?.responseCode;
    expect(await refused('127.0.0.5')).toBe(554);
    expect(await refused('127.0.0.5')).toBe(554);
    expect(asked(dns, '5.0.0.127.bl.test')).toBe(1);
    // The double's TTL is 300 s; the cap is 10 s.
    now += 11_000;
    expect(await refused('127.0.0.5')).toBe(554);
    expect(asked(dns, '5.0.0.127.bl.test')).toBe(2);
    // Two more names (and their TXT look-ups) push the oldest out.
    expect(await refused('127.0.0.6')).toBe(554);
    expect(await refused('127.0.0.7')).toBe(554);
    expect(await refused('127.0.0.5')).toBe(554);
    expect(asked(dns, '5.0.0.127.bl.test')).toBe(3);
  });

  it('adds the weights of score lists: Junk at dnsbl_junk_score, 550 at dnsbl_reject_score', async () => {
    const dns = await double({
      ...probes('a.test'),
      ...probes('b.test'),
      '5.0.0.127.a.test': { A: ['127.0.0.2'] },
      '5.0.0.127.b.test': { A: ['127.0.0.2'] },
      '6.0.0.127.a.test': { A: ['127.0.0.2'] },
    });
    const { c } = await checker(dns, {
      blocklists: [
        list('a.test', { action: 'score', weight: 1 }),
        list('b.test', { action: 'score', weight: 1.5 }),
      ],
      junkScore: 1,
      rejectScore: 2.5,
    });
    const both = { remoteAddress: '127.0.0.5' };
    expect(await c.connect(both)).toBeUndefined();
    c.mailFrom(both, 'a@remote.example');
    await expect(c.rcpt(both, 'a@remote.example')).rejects.toMatchObject({
      responseCode: 550,
      message: '5.7.1 Service unavailable; Client host [127.0.0.5] listed by a.test, b.test (score 2.5)',
    });
    const one = { remoteAddress: '127.0.0.6' };
    expect(await c.connect(one)).toBeUndefined();
    c.mailFrom(one, 'a@remote.example');
    expect(await c.rcpt(one, 'a@remote.example')).toEqual({
      action: 'add header',
      score: 1,
      required: 1,
      symbols: ['RBL_a.test(1)'],
      junk: true,
      publish: false,
      scanner: 'dnsbl',
    });
    const clean = { remoteAddress: '127.0.0.7' };
    expect(await c.connect(clean)).toBeUndefined();
    expect(await c.rcpt(clean, '')).toBeUndefined();
  });
});

describe('DnsblChecker with one zone in two entries', () => {
  it('asks the zone once and judges its answer by each entry (Spamhaus ZEN: SBL/XBL refused, PBL scored)', async () => {
    const dns = await double({
      ...probes('zen.test'),
      '5.0.0.127.zen.test': { A: ['127.0.0.10'] },
      '6.0.0.127.zen.test': { A: ['127.0.0.2', '127.0.0.10'] },
    });
    const { c } = await checker(dns, {
      blocklists: [
        list('zen.test', { responses: ['127.0.0.2-127.0.0.9'] }),
        list('zen.test', { responses: ['127.0.0.10-127.0.0.11'], action: 'score', weight: 1 }),
      ],
    });
    const pbl = { remoteAddress: '127.0.0.5' };
    expect(await c.connect(pbl)).toBeUndefined();
    c.mailFrom(pbl, 'a@remote.example');
    expect((await c.rcpt(pbl, 'a@remote.example'))?.symbols).toEqual(['RBL_zen.test(1)']);
    expect((await c.connect({ remoteAddress: '127.0.0.6' }))?.message).toMatch(/blocked using zen\.test$/);
    expect(asked(dns, '5.0.0.127.zen.test')).toBe(1);
    expect(asked(dns, '6.0.0.127.zen.test')).toBe(1);
    // One zone, one pair of probes.
    expect(asked(dns, '1.0.0.127.zen.test')).toBe(1);
    expect(c.state()).toEqual([{ zone: 'zen.test', kind: 'block', disabled: false }]);
  });
});

describe('DnsResolver.query', () => {
  it('asks the next server after SERVFAIL or silence, within one budget', async () => {
    const answer: DnsZone = { 'x.test': { A: ['127.0.0.2'] } };
    const failing = await double(answer);
    failing.setFault('x.test', 'servfail');
    const silent = await double(answer);
    silent.setFault('x.test', 'timeout');
    const good = await double(answer);
    const r = createDnsResolver({ servers: [failing.address, silent.address, good.address] });
    const started = performance.now();
    const result = await r.query('x.test', 'A', { timeoutMs: 900 });
    expect(result.rcode).toBe('NOERROR');
    expect(result.answers.map((a) => a.data)).toEqual(['127.0.0.2']);
    // SERVFAIL moves on at once; the silent server gets its share of the budget (450 ms of 900).
    expect(performance.now() - started).toBeLessThan(900);
    expect([failing, silent, good].map((d) => d.queries.length)).toEqual([1, 1, 1]);
    // NXDOMAIN is an answer, not a reason to ask further.
    const nx = await r.query('y.test', 'A', { timeoutMs: 900 });
    expect(nx.rcode).toBe('NXDOMAIN');
    await expect(
      createDnsResolver({ servers: [silent.address] }).query('x.test', 'A', { timeoutMs: 200 }),
    ).rejects.toMatchObject({ kind: 'timeout' });
  });
});
