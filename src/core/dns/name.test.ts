import { describe, expect, it } from 'vitest';
import { DomainNameError, normalizeDomainName, reverseName } from './name.ts';

function problem(input: string): string {
  try {
    normalizeDomainName(input);
  } catch (err) {
    if (err instanceof DomainNameError) return err.problem;
    throw err;
  }
  throw new Error(`${input} was accepted`);
}

describe('normalizeDomainName', () => {
  it('drops the root dot and folds case', () => {
    expect(normalizeDomainName('Mail.Example.ORG.')).toEqual({
      ascii: 'mail.example.org',
      unicode: 'mail.example.org',
    });
  });

  it('converts IDN both ways', () => {
    expect(normalizeDomainName('Bücher.Example')).toEqual({
      ascii: 'xn--bcher-kva.example',
      unicode: 'bücher.example',
    });
    expect(normalizeDomainName('xn--bcher-kva.example.')).toEqual({
      ascii: 'xn--bcher-kva.example',
      unicode: 'bücher.example',
    });
  });

  it('refuses broken names with the reason', () => {
    expect(problem('')).toBe('empty');
    expect(problem('.')).toBe('empty');
    expect(problem('a..example')).toBe('empty_label');
    expect(problem(`${'a'.repeat(64)}.example`)).toBe('label_too_long');
    expect(problem(`ü${'a'.repeat(60)}.example`)).toBe('label_too_long');
    expect(problem(Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.'))).toBe('name_too_long');
    expect(problem('under_score.example')).toBe('invalid_character');
    expect(problem('exa mple.org')).toBe('invalid_character');
    expect(problem('-lead.example')).toBe('hyphen_at_label_edge');
    expect(problem('xn--zz.example')).toBe('invalid_idn');
  });

  it('accepts a 63-octet label and a 253-character name', () => {
    const label = 'a'.repeat(63);
    expect(normalizeDomainName(`${label}.example`).ascii).toBe(`${label}.example`);
    const name = [label, label, label, 'b'.repeat(61)].join('.');
    expect(name.length).toBe(253);
    expect(normalizeDomainName(name).ascii).toBe(name);
  });
});

describe('reverseName', () => {
  it('builds in-addr.arpa and ip6.arpa names', () => {
    expect(reverseName('192.0.2.10')).toBe('10.2.0.192.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
  });
});
