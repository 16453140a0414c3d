// The pure parts of the DNSBL checks and the `[spam] dnsbl`/`dnswl` keys as
// `sealpost config check` and `serve` read them.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, renderConfigToml } from '../config/index.ts';
import {
  classifyAnswer,
  clientAddress,
  onlyErrorCodes,
  parseResponse,
  queryLabel,
  replySafe,
  responseFilter,
} from './dnsbl-match.ts';

const env = {};

function errorsOf(text: string): string[] {
  try {
    parseConfig(text, { env, source: 'test.toml' });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).lines();
  }
  throw new Error('expected a ConfigError');
}

describe('DNSBL query names', () => {
  it('reverses IPv4 octets and IPv6 nibbles (RFC 5782 §2.1, §2.4)', () => {
    expect(queryLabel('192.0.2.99')).toBe('99.2.0.192');
    expect(queryLabel('2001:db8:1:2:3:4:567:89ab')).toBe(
      'b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.8.b.d.0.1.0.0.2',
    );
    expect(queryLabel('2001:db8::1')).toBe('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2');
  });

  it('checks an IPv4-mapped client as IPv4 and writes IPv6 in full', () => {
    expect(clientAddress('::ffff:192.0.2.1')).toEqual({ ip: '192.0.2.1', family: 'ipv4' });
    expect(clientAddress('::FFFF:c000:0201')).toEqual({ ip: '192.0.2.1', family: 'ipv4' });
    expect(clientAddress('192.0.2.1')).toEqual({ ip: '192.0.2.1', family: 'ipv4' });
    expect(clientAddress('2001:DB8::1')).toEqual({
      ip: '2001:0db8:0000:0000:0000:0000:0000:0001',
      family: 'ipv6',
    });
    expect(clientAddress('fe80::1%eth0')?.family).toBe('ipv6');
    expect(clientAddress('::1.2.3.4')?.ip).toBe('0000:0000:0000:0000:0000:0000:0102:0304');
    for (const bad of ['', 'localhost', '1.2.3', '256.1.1.1', '01.2.3.4', '1:2:3', '1::2::3', 'g::1'])
      expect(clientAddress(bad)).toBeUndefined();
  });
});

describe('DNSBL answers', () => {
  it('parses addresses, ranges and networks inside 127.0.0.0/8 only', () => {
    expect(parseResponse('127.0.0.2')).toEqual({ from: 0x7f000002, to: 0x7f000002 });
    expect(parseResponse('127.0.0.2-127.0.0.11')).toEqual({ from: 0x7f000002, to: 0x7f00000b });
    expect(parseResponse('127.0.1.0/24')).toEqual({ from: 0x7f000100, to: 0x7f0001ff });
    for (const bad of ['10.0.0.2', '127.0.0.11-127.0.0.2', '127.0.0.0/7', '0.0.0.0/0', 'zen', '127.0.0.256'])
      expect(() => parseResponse(bad)).toThrow(/^expected "127\.0\.0\.2"/);
  });

  it('tells listings from refusal codes, hijacked answers and filtered-out codes', () => {
    const any = responseFilter([], 0);
    expect(classifyAnswer(['127.0.0.2'], any)).toEqual({ kind: 'listed', codes: ['127.0.0.2'] });
    // Spamhaus: 127.255.255.254 (public resolver), .255 (over the limit): the list refused to answer.
    expect(classifyAnswer(['127.255.255.254'], any).kind).toBe('list-error');
    expect(classifyAnswer(['127.255.255.255', '127.0.0.4'], any)).toEqual({
      kind: 'listed',
      codes: ['127.0.0.4'],
    });
    // A resolver that turns NXDOMAIN into an address of its own.
    expect(classifyAnswer(['198.51.100.7'], any)).toEqual({ kind: 'invalid', codes: ['198.51.100.7'] });
    expect(classifyAnswer(['127.0.0.2', '198.51.100.7'], any).kind).toBe('invalid');
    // Spamhaus ZEN without the PBL (127.0.0.10-11): a PBL-only answer is no listing.
    const sblXbl = responseFilter(['127.0.0.2-127.0.0.9'], 0);
    expect(classifyAnswer(['127.0.0.10'], sblXbl).kind).toBe('clear');
    expect(classifyAnswer(['127.0.0.10', '127.0.0.4'], sblXbl)).toEqual({
      kind: 'listed',
      codes: ['127.0.0.4'],
    });
    // A bitmask list (SURBL-style): bit 8 in the last octet.
    const bit8 = responseFilter([], 8);
    expect(classifyAnswer(['127.0.0.8'], bit8).kind).toBe('listed');
    expect(classifyAnswer(['127.0.0.12'], bit8).kind).toBe('listed');
    expect(classifyAnswer(['127.0.0.4'], bit8).kind).toBe('clear');
    expect(onlyErrorCodes(['127.255.255.254'])).toBe(true);
    expect(onlyErrorCodes(['127.255.255.254', '127.0.0.2'])).toBe(false);
    expect(onlyErrorCodes([])).toBe(false);
  });

  it('keeps TXT reasons printable, one line, bounded', () => {
    expect(replySafe('Listed\r\n by\tSBL ')).toBe('Listed by SBL');
    expect(replySafe('x'.repeat(500))).toHaveLength(200);
    expect(replySafe('\u0000\u00ff')).toBeUndefined();
    expect(replySafe(undefined)).toBeUndefined();
  });
});

describe('[spam] dnsbl and dnswl keys', () => {
  it('take bare zones and tables, with defaults, and render back to the same config', () => {
    const text = `
[spam]
dnsbl = [
  "Zen.Example.NET.",
  { zone = "dbl.example.net", check = ["sender"], responses = ["127.0.1.2-127.0.1.99"] },
  { zone = "bl.example.org", action = "score", weight = 1.5, at = "rcpt", mask = 4, reason = "see {zone}" },
]
dnswl = ["list.dnswl.example", { zone = "wl.example", responses = ["127.0.10.0/24"] }]
dnsbl_junk_score = 3
`;
    const c = parseConfig(text, { env, source: 'test.toml' });
    expect(c.spam.dnsbl).toEqual([
      {
        zone: 'zen.example.net',
        check: ['ip'],
        at: 'connect',
        action: 'reject',
        weight: 1,
        responses: [],
        mask: 0,
      },
      {
        zone: 'dbl.example.net',
        check: ['sender'],
        at: 'connect',
        action: 'reject',
        weight: 1,
        responses: ['127.0.1.2-127.0.1.99'],
        mask: 0,
      },
      {
        zone: 'bl.example.org',
        check: ['ip'],
        at: 'rcpt',
        action: 'score',
        weight: 1.5,
        responses: [],
        mask: 4,
        reason: 'see {zone}',
      },
    ]);
    expect(c.spam.dnswl).toEqual([
      { zone: 'list.dnswl.example', responses: [], mask: 0 },
      { zone: 'wl.example', responses: ['127.0.10.0/24'], mask: 0 },
    ]);
    expect(c.spam.dnsbl_junk_score).toBe(3);
    expect(c.spam.dnsbl_timeout_ms).toBe(2000);
    expect(c.spam.dnsbl_skip_networks).toContain('127.0.0.0/8');
    // What `sealpost dev` writes parses to the same lists.
    const again = parseConfig(renderConfigToml(c), { env, source: 'rendered.toml' });
    expect(again.spam).toEqual(c.spam);
  });

  it('names the bad key and value', () => {
    expect(
      errorsOf(
        '[spam]\ndnsbl = [{ zone = "zen.example.net", action = "drop" }, { zone = "x.example", responses = ["10.0.0.2"] }, "not a zone!"]\n',
      ),
    ).toEqual([
      'spam.dnsbl[0].action: expected one of "reject", "defer", "score", got "drop"',
      'spam.dnsbl[1].responses[0]: expected "127.0.0.2", "127.0.0.2-127.0.0.11" or "127.0.0.0/24" (IPv4 inside 127.0.0.0/8), got "10.0.0.2"',
      'spam.dnsbl[2].zone: expected a DNS name, got "not a zone!"',
    ]);
    expect(errorsOf('[spam]\ndnswl = [{ zone = "wl.example", action = "reject" }]\n')).toEqual([
      'unknown key spam.dnswl[0].action',
    ]);
    expect(errorsOf('[spam]\ndnsbl = [{ zone = "a.example", check = [] }]\ndnsbl_timeout_ms = 10\n')).toEqual(
      [
        'spam.dnsbl[0].check: needs "ip", "sender" or both (an empty list checks nothing)',
        'spam.dnsbl_timeout_ms: expected integer 100-30000, got 10',
      ],
    );
  });
});
