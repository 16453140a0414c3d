import { blake3 } from '@noble/hashes/blake3.js';
import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  blake3Text,
  fromHash,
  isBase58Key,
  isNormalizedAlias,
  isValidDomainName,
  normalizeAlias,
  normalizeDomain,
  replyToHash,
} from './hash.ts';

const enc = (s: string) => new TextEncoder().encode(s);

describe('hashes', () => {
  it('blake3Text hashes UTF-8', () => {
    expect(blake3Text('héllo')).toEqual(blake3(enc('héllo')));
    expect(blake3Text('')).toHaveLength(32);
  });

  it('fromHash hashes wallets as base58 and lowercases email domains only', () => {
    const k = Keypair.generate().publicKey;
    expect(fromHash(k)).toEqual(blake3(enc(k.toBase58())));
    expect(fromHash(k.toBase58())).toEqual(fromHash(k));
    expect(fromHash('Alice@Example.ORG')).toEqual(blake3(enc('Alice@example.org')));
    expect(fromHash(` ${k.toBase58()}@Mail.Test `)).toEqual(blake3(enc(`${k.toBase58()}@mail.test`)));
  });

  it('fromHash decodes IDN A-labels to lowercase U-labels and hashes the null sender as empty text', () => {
    const u = blake3(enc('Alice@bücher.example'));
    for (const form of [
      'Alice@bücher.example',
      'Alice@BÜCHER.Example',
      'Alice@xn--bcher-kva.example',
      'Alice@XN--BCHER-KVA.example',
    ]) {
      expect(fromHash(form), form).toEqual(u);
    }
    // The local part stays byte for byte, quotes and sub-address included.
    expect(fromHash('"a b"+x@Example.org')).toEqual(blake3(enc('"a b"+x@example.org')));
    // An undecodable xn-- label is kept as written (lowercased).
    expect(fromHash('a@xn--zz.example')).toEqual(blake3(enc('a@xn--zz.example')));
    expect(fromHash('')).toEqual(blake3(enc('')));
  });

  it('replyToHash hashes the parent account address', () => {
    const k = Keypair.generate().publicKey;
    expect(replyToHash(k)).toEqual(blake3(enc(k.toBase58())));
  });
});

describe('aliases', () => {
  it('normalizes case and strips the domain', () => {
    expect(normalizeAlias('Bob.Smith@Example.org')).toBe('bob.smith');
    expect(normalizeAlias('a_b-c.9')).toBe('a_b-c.9');
    expect(normalizeAlias('x'.repeat(64))).toBe('x'.repeat(64));
  });

  it('refuses what the program refuses', () => {
    for (const bad of [
      '',
      '@example.org',
      '.bob',
      'bob.',
      'a..b',
      'x'.repeat(65),
      'bo b',
      'bob+tag',
      'bøb',
    ]) {
      expect(() => normalizeAlias(bad), bad).toThrow(/invalid alias/);
    }
    expect(isNormalizedAlias('Bob')).toBe(false);
  });

  it('refuses names that read as a 32-byte base58 key', () => {
    // 43 base58 digits starting high decode to exactly 32 bytes.
    const looksLikeKey = 'z'.repeat(43);
    expect(isBase58Key(looksLikeKey)).toBe(true);
    expect(isNormalizedAlias(looksLikeKey)).toBe(false);
    expect(() => normalizeAlias(`${looksLikeKey}@example.org`)).toThrow(/invalid alias/);
    expect(isNormalizedAlias('z'.repeat(30))).toBe(true);
    expect(isBase58Key(Keypair.generate().publicKey.toBase58())).toBe(true);
  });
});

describe('domains', () => {
  it('accepts DNS names and single development labels', () => {
    for (const ok of ['example.org', 'localhost', 'a-b.c1.d', `${'a'.repeat(63)}.org`, 'x.y']) {
      expect(isValidDomainName(ok), ok).toBe(true);
    }
  });

  it('refuses bad names', () => {
    const long = `${'a'.repeat(60)}.`.repeat(5);
    for (const bad of [
      '',
      'Example.org',
      '-a.org',
      'a-.org',
      'a..org',
      '.org',
      'a.org.',
      'a_b.org',
      `${'a'.repeat(64)}.org`,
      long,
    ]) {
      expect(isValidDomainName(bad), bad).toBe(false);
    }
  });

  it('normalizeDomain lowercases and drops the root dot', () => {
    expect(normalizeDomain('Mail.Example.ORG.')).toBe('mail.example.org');
    expect(() => normalizeDomain('bad_domain')).toThrow(/invalid domain/);
  });
});
