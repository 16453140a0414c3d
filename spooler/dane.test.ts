import { createHash, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CertificatePair } from '../src/core/tls/self-signed.ts';
import { expiredLeaf, type Leaf, leafFrom, selfSigned, testCa } from '../test/support/test-pki.ts';
import { isUsableTlsa, type TlsaRecord, tlsaToString, verifyDane } from './dane.ts';

const der = (pem: string) => new X509Certificate(pem).raw;
const spki = (pem: string) =>
  new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }) as Buffer;
const sha = (alg: 'sha256' | 'sha512', b: Buffer) => createHash(alg).update(b).digest();
const rec = (usage: number, selector: number, matchingType: number, data: Buffer): TlsaRecord => ({
  usage,
  selector,
  matchingType,
  data,
});

// Certificates made here become valid the second they are made.
const at = () => Date.now() + 1000;
let ca: CertificatePair;
let leaf: Leaf;
beforeAll(async () => {
  ca = await testCa();
  leaf = await leafFrom(ca, ['mx.example.test']);
});

describe('DANE-EE (usage 3)', () => {
  it('matches the certificate or its key with every selector and matching type', () => {
    const chain = [der(leaf.cert)];
    for (const r of [
      rec(3, 0, 0, der(leaf.cert)),
      rec(3, 0, 1, sha('sha256', der(leaf.cert))),
      rec(3, 1, 0, spki(leaf.cert)),
      rec(3, 1, 1, sha('sha256', spki(leaf.cert))),
      rec(3, 1, 2, sha('sha512', spki(leaf.cert))),
    ]) {
      expect(verifyDane([r], chain, ['unrelated.name'], at())).toMatchObject({ ok: true, usage: 3 });
    }
  });
  it('ignores names and expiry, but not a different key', async () => {
    const old = await expiredLeaf(['x.example']);
    expect(
      verifyDane([rec(3, 1, 1, sha('sha256', spki(old.cert)))], [der(old.cert)], ['mx.example.test'], at())
        .ok,
    ).toBe(true);
    const other = await selfSigned(['mx.example.test']);
    expect(
      verifyDane(
        [rec(3, 1, 1, sha('sha256', spki(other.cert)))],
        [der(leaf.cert)],
        ['mx.example.test'],
        at(),
      ),
    ).toMatchObject({
      ok: false,
      resultType: 'tlsa-invalid',
    });
  });
});

describe('DANE-TA (usage 2)', () => {
  it('anchors at a presented CA, or at one the record carries in full', () => {
    const presented = [der(leaf.cert), der(ca.cert)];
    expect(
      verifyDane([rec(2, 1, 1, sha('sha256', spki(ca.cert)))], presented, ['mx.example.test'], at()),
    ).toMatchObject({ ok: true, usage: 2 });
    expect(
      verifyDane([rec(2, 0, 1, sha('sha256', der(ca.cert)))], presented, ['mx.example.test'], at()).ok,
    ).toBe(true);
    // The server sends only its own certificate: 2 0 0 and 2 1 0 still anchor it.
    expect(verifyDane([rec(2, 0, 0, der(ca.cert))], [der(leaf.cert)], ['mx.example.test'], at()).ok).toBe(
      true,
    );
    expect(verifyDane([rec(2, 1, 0, spki(ca.cert))], [der(leaf.cert)], ['mx.example.test'], at()).ok).toBe(
      true,
    );
    // A digest of a CA the server did not send cannot anchor anything.
    expect(
      verifyDane([rec(2, 1, 1, sha('sha256', spki(ca.cert)))], [der(leaf.cert)], ['mx.example.test'], at())
        .ok,
    ).toBe(false);
  });
  it('checks the name (wildcards in the first label only) and the validity below the anchor', async () => {
    const anchor = [rec(2, 1, 1, sha('sha256', spki(ca.cert)))];
    const wild = await leafFrom(ca, ['*.example.test']);
    expect(verifyDane(anchor, [der(wild.cert), der(ca.cert)], ['mx.example.test'], at()).ok).toBe(true);
    expect(verifyDane(anchor, [der(wild.cert), der(ca.cert)], ['a.mx.example.test'], at())).toMatchObject({
      ok: false,
      resultType: 'certificate-host-mismatch',
    });
    const expired = await expiredLeaf(['mx.example.test'], ca);
    expect(verifyDane(anchor, [der(expired.cert), der(ca.cert)], ['mx.example.test'], at())).toMatchObject({
      ok: false,
      resultType: 'certificate-expired',
    });
  });
  it('a certificate not issued by the anchor does not chain to it', async () => {
    const stranger = await selfSigned(['mx.example.test']);
    expect(
      verifyDane(
        [rec(2, 1, 1, sha('sha256', spki(ca.cert)))],
        [der(stranger.cert), der(ca.cert)],
        ['mx.example.test'],
        at(),
      ),
    ).toMatchObject({
      ok: false,
      resultType: 'tlsa-invalid',
    });
  });
});

describe('usable records (RFC 7672 §3.1.3)', () => {
  it('PKIX usages, unknown selectors or matching types and wrong digest lengths are unusable', () => {
    const d32 = Buffer.alloc(32, 1);
    expect(isUsableTlsa(rec(3, 1, 1, d32))).toBe(true);
    expect(isUsableTlsa(rec(2, 0, 2, Buffer.alloc(64, 1)))).toBe(true);
    expect(isUsableTlsa(rec(0, 1, 1, d32))).toBe(false);
    expect(isUsableTlsa(rec(1, 1, 1, d32))).toBe(false);
    expect(isUsableTlsa(rec(3, 2, 1, d32))).toBe(false);
    expect(isUsableTlsa(rec(3, 1, 3, d32))).toBe(false);
    expect(isUsableTlsa(rec(3, 1, 1, Buffer.alloc(31, 1)))).toBe(false);
    expect(isUsableTlsa(rec(3, 1, 0, Buffer.alloc(0)))).toBe(false);
    expect(tlsaToString(rec(3, 1, 1, Buffer.from('ab01', 'hex')))).toBe('3 1 1 ab01');
  });
});
