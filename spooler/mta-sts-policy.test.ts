import { describe, expect, it } from 'vitest';
import { mxMatchesPolicy, parseStsPolicy, parseStsRecord } from './mta-sts-policy.ts';

describe('MTA-STS discovery record', () => {
  it('takes the id of exactly one v=STSv1 record', () => {
    expect(parseStsRecord(['v=STSv1; id=20240101T000000'])).toBe('20240101T000000');
    expect(parseStsRecord(['v=spf1 -all', 'v=STSv1;id=abc;'])).toBe('abc');
  });
  it('means "no policy" for none, several, a bad id or a malformed record', () => {
    expect(parseStsRecord([])).toBeNull();
    expect(parseStsRecord(['v=STSv1; id=a', 'v=STSv1; id=b'])).toBeNull();
    expect(parseStsRecord(['v=STSv1; id=has-dash'])).toBeNull();
    expect(parseStsRecord(['v=STSv1; id=x'.padEnd(50, 'x')])).toBeNull();
    expect(parseStsRecord(['v=STSv1; junk'])).toBeNull();
    expect(parseStsRecord(['v=STSv10; id=a'])).toBeNull();
  });
});

describe('MTA-STS policy file', () => {
  it('parses CRLF or LF lines, lowercases mx patterns and keeps the lines for reports', () => {
    const p = parseStsPolicy(
      'version: STSv1\r\nmode: enforce\r\nmx: MX1.Example.org\nmx: *.example.net\r\nmax_age: 604800\r\nextension: ignored\r\n',
    );
    expect(p).toEqual({
      mode: 'enforce',
      mx: ['mx1.example.org', '*.example.net'],
      maxAgeSecs: 604800,
      lines: [
        'version: STSv1',
        'mode: enforce',
        'mx: MX1.Example.org',
        'mx: *.example.net',
        'max_age: 604800',
        'extension: ignored',
      ],
    });
  });
  it('refuses what RFC 8461 §3.2 does not allow, naming the field', () => {
    expect(() => parseStsPolicy('mode: enforce\nmx: a.b\nmax_age: 1\n')).toThrow(
      'policy has no version field',
    );
    expect(() => parseStsPolicy('version: STSv2\nmode: enforce\nmx: a.b\nmax_age: 1\n')).toThrow('not STSv1');
    expect(() => parseStsPolicy('version: STSv1\nmode: strict\nmx: a.b\nmax_age: 1\n')).toThrow(
      'mode "strict"',
    );
    expect(() => parseStsPolicy('version: STSv1\nmode: enforce\nmax_age: 1\n')).toThrow(
      'needs at least one mx',
    );
    expect(() => parseStsPolicy('version: STSv1\nmode: enforce\nmx: a.b\nmax_age: 31557601\n')).toThrow(
      'max_age',
    );
    expect(() => parseStsPolicy('version: STSv1\nmode: enforce\nmx: a.b\nmax_age: -1\n')).toThrow('max_age');
    expect(() =>
      parseStsPolicy('version: STSv1\nmode: enforce\nmode: testing\nmx: a.b\nmax_age: 1\n'),
    ).toThrow('2 mode fields');
    expect(() => parseStsPolicy('<html>\n')).toThrow('not "key: value"');
    expect(() => parseStsPolicy('version: STSv1\nmode: enforce\nmx: bad host!\nmax_age: 1\n')).toThrow(
      'not a host pattern',
    );
  });
  it('mode none needs no mx', () => {
    expect(parseStsPolicy('version: STSv1\nmode: none\nmax_age: 0\n')).toMatchObject({
      mode: 'none',
      mx: [],
      maxAgeSecs: 0,
    });
  });
});

describe('MX pattern match (RFC 8461 §4.1)', () => {
  it('matches exact names and one-label wildcards only', () => {
    expect(mxMatchesPolicy('mx.example.org', ['mx.example.org'])).toBe(true);
    expect(mxMatchesPolicy('MX.Example.org.', ['mx.example.org'])).toBe(true);
    expect(mxMatchesPolicy('a.example.org', ['*.example.org'])).toBe(true);
    expect(mxMatchesPolicy('a.b.example.org', ['*.example.org'])).toBe(false);
    expect(mxMatchesPolicy('example.org', ['*.example.org'])).toBe(false);
    expect(mxMatchesPolicy('xexample.org', ['*.example.org'])).toBe(false);
    expect(mxMatchesPolicy('mx.example.net', ['mx.example.org', '*.example.org'])).toBe(false);
  });
});
