import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DkimNameError,
  dkimPublicKeyFromPem,
  dkimRecord,
  normalizeDkimNames,
  splitTxtValue,
} from './dkim-key.ts';

describe('DKIM key helpers', () => {
  it('splits TXT values at 255 characters exactly', () => {
    expect(splitTxtValue('a'.repeat(255))).toEqual(['a'.repeat(255)]);
    expect(splitTxtValue('a'.repeat(256))).toEqual(['a'.repeat(255), 'a']);
    expect(splitTxtValue('b'.repeat(600)).map((s) => s.length)).toEqual([255, 255, 90]);
    expect(splitTxtValue('')).toEqual(['']);
  });

  it('normalizes names and rejects bad ones with the reason', () => {
    expect(normalizeDkimNames('Mail.Example.ORG.', 'Sel-1.k2')).toEqual({
      domain: 'mail.example.org',
      selector: 'Sel-1.k2',
    });
    expect(() => normalizeDkimNames('example..org', 's')).toThrow(/empty label/);
    expect(() => normalizeDkimNames('ex_ample.org', 's')).toThrow(DkimNameError);
    expect(() => normalizeDkimNames('example.org', 's-')).toThrow(/bad label "s-"/);
    expect(() => normalizeDkimNames('example.org', '')).toThrow(/selector "" is not a valid DNS name/);
    expect(() => normalizeDkimNames(`${'a'.repeat(63)}.`.repeat(4), 's')).toThrow(/longer than 253/);
  });

  it('reads the public key of a PKCS#1 key too and builds the same record as from its SPKI', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pkcs1 = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
    expect(Buffer.from(dkimPublicKeyFromPem(pkcs1)).equals(Buffer.from(spki))).toBe(true);
    const record = dkimRecord('example.org', 's1', spki);
    expect(record.value).toBe(`v=DKIM1; k=rsa; p=${Buffer.from(spki).toString('base64')}`);
    expect(record.zoneLine).toBe(`s1._domainkey.example.org. IN TXT "${record.value}"`);

    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecPem = ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => dkimPublicKeyFromPem(ecPem)).toThrow(/DKIM key is ec, expected an RSA private key/);
  });
});
