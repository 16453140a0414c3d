// The DNS helpers against the loopback DNS double over real UDP/TCP: record
// types, NXDOMAIN vs NODATA, CNAME chains, truncation, SERVFAIL, timeouts
// and the AD bit.
import { afterEach, describe, expect, it } from 'vitest';
import { type DnsDouble, startDnsDouble } from '../../../test/support/doubles/dns-server.ts';
import { createDnsResolver, DnsLookupError } from './resolver.ts';
import { wireQuery } from './wire-query.ts';

const doubles: DnsDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close();
});

async function double(...args: Parameters<typeof startDnsDouble>): Promise<DnsDouble> {
  const d = await startDnsDouble(...args);
  doubles.push(d);
  return d;
}

async function failure(p: Promise<unknown>): Promise<DnsLookupError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DnsLookupError) return err;
    throw err;
  }
  throw new Error('lookup succeeded but a failure was expected');
}

describe('createDnsResolver against the DNS double', () => {
  it('answers every record type the double serves', async () => {
    const dns = await double({
      'example.org': {
        MX: [{ preference: 10, exchange: 'mail.example.org' }],
        TXT: ['v=spf1 mx -all', ['v=DKIM1; k=rsa; ', 'p=AAAA']],
        A: ['192.0.2.10'],
        AAAA: ['2001:db8::10'],
      },
      '_imaps._tcp.example.org': { SRV: [{ priority: 0, weight: 1, port: 993, target: 'mail.example.org' }] },
      'alias.example.org': { CNAME: ['example.org'] },
      '10.2.0.192.in-addr.arpa': { PTR: ['mail.example.org'] },
      '_25._tcp.mail.example.org': {
        TLSA: [{ usage: 3, selector: 1, matchingType: 1, certificate: 'ab'.repeat(32) }],
      },
    });
    const r = createDnsResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 });
    expect(await r.mx('EXAMPLE.org.')).toEqual([{ exchange: 'mail.example.org', priority: 10 }]);
    expect((await r.txt('example.org')).sort()).toEqual(['v=DKIM1; k=rsa; p=AAAA', 'v=spf1 mx -all']);
    expect(await r.a('example.org')).toEqual(['192.0.2.10']);
    expect(await r.aaaa('example.org')).toEqual(['2001:db8::10']);
    expect(await r.srv('_imaps._tcp.example.org')).toEqual([
      { priority: 0, weight: 1, port: 993, target: 'mail.example.org' },
    ]);
    expect(await r.cname('alias.example.org')).toEqual(['example.org']);
    expect(await r.a('alias.example.org')).toEqual(['192.0.2.10']);
    expect(await r.reverse('192.0.2.10')).toEqual(['mail.example.org']);
    expect(await r.tlsa('_25._tcp.mail.example.org')).toEqual([
      { usage: 3, selector: 1, matchingType: 1, data: 'ab'.repeat(32) },
    ]);
  });

  it('tells NXDOMAIN from NODATA, including empty non-terminals', async () => {
    const dns = await double({ '_solana.authority.example.org': { TXT: ['key'] } });
    const r = createDnsResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 });
    expect((await failure(r.txt('nothing.example.org'))).kind).toBe('nxdomain');
    expect((await failure(r.txt('authority.example.org'))).kind).toBe('nodata');
    expect((await failure(r.mx('_solana.authority.example.org'))).kind).toBe('nodata');
    dns.set('gone.example.org', 'TXT', ['x']);
    expect(await r.txt('gone.example.org')).toEqual(['x']);
    dns.remove('gone.example.org', 'TXT');
    expect((await failure(r.txt('gone.example.org'))).kind).toBe('nxdomain');
  });

  it('reports SERVFAIL and timeouts as resolver failures', async () => {
    const dns = await double({ 'example.org': { TXT: ['x'] } });
    const r = createDnsResolver({ servers: [dns.address], timeoutMs: 200, tries: 1 });
    dns.setFault('example.org', 'servfail');
    const sf = await failure(r.txt('a.example.org'));
    expect(sf.kind).toBe('servfail');
    expect(sf.isNegative).toBe(false);
    dns.setFault('a.example.org', 'timeout');
    expect((await failure(r.txt('a.example.org'))).kind).toBe('timeout');
    dns.setFault('example.org', null);
    dns.setFault('a.example.org', null);
    expect(await r.txt('example.org')).toEqual(['x']);
  });

  it('retries over TCP when the UDP answer is truncated', async () => {
    const long = Array.from({ length: 12 }, (_, i) => `record-${i}-${'x'.repeat(120)}`);
    const dns = await double({ 'big.example.org': { TXT: long } });
    const r = createDnsResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 });
    expect((await r.txt('big.example.org')).sort()).toEqual([...long].sort());
    expect(dns.queries.some((q) => q.name === 'big.example.org' && q.transport === 'tcp')).toBe(true);
  });

  it('sets AD only for validated zones and only when the query asks', async () => {
    const dns = await double({
      '_25._tcp.mail.signed.example': {
        TLSA: [{ usage: 3, selector: 1, matchingType: 1, certificate: '00' }],
      },
      '_25._tcp.mail.plain.example': {
        TLSA: [{ usage: 3, selector: 1, matchingType: 1, certificate: '00' }],
      },
    });
    dns.setAd('signed.example', true);
    const server = { host: dns.host, port: dns.port };
    const signed = await wireQuery(server, '_25._tcp.mail.signed.example', 'TLSA');
    expect(signed.authenticated).toBe(true);
    expect(signed.answers).toHaveLength(1);
    const plain = await wireQuery(server, '_25._tcp.mail.plain.example', 'TLSA');
    expect(plain.authenticated).toBe(false);
    const missing = await wireQuery(server, 'none.signed.example', 'TLSA');
    expect(missing.rcode).toBe('NXDOMAIN');
    // The TLSA helper asks for validation (AD + DO), as DANE needs.
    const r = createDnsResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 });
    await r.tlsa('_25._tcp.mail.signed.example');
    expect(dns.queries.at(-1)?.ad).toBe(true);
  });
});
