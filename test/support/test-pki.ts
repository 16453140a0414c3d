// Certificates for the outbound TLS tests: a test CA, leaves it issues
// (optionally already expired), self-signed leaves, and the TLSA data of a
// certificate's public key.
import { createHash, X509Certificate } from 'node:crypto';
import { generate } from 'selfsigned';
import { type CertificatePair, createSelfSignedCert } from '../../src/core/tls/self-signed.ts';

export interface Leaf extends CertificatePair {
  /** The leaf followed by its issuer, as a server presents it. */
  chain: string;
}

export async function testCa(name = 'Sealpost Test CA'): Promise<CertificatePair> {
  return createSelfSignedCert([name], { isCa: true, days: 30 });
}

export async function leafFrom(ca: CertificatePair, names: string[]): Promise<Leaf> {
  const pair = await createSelfSignedCert(names, { ca, days: 30 });
  return { ...pair, chain: `${pair.cert.trim()}\n${ca.cert.trim()}\n` };
}

export async function selfSigned(names: string[]): Promise<Leaf> {
  const pair = await createSelfSignedCert(names, { days: 30 });
  return { ...pair, chain: pair.cert };
}

/** A leaf (from `ca`, or self-signed) whose validity ended yesterday. */
export async function expiredLeaf(names: string[], ca?: CertificatePair): Promise<Leaf> {
  const day = 86_400_000;
  const result = await generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 10 * day),
    notAfterDate: new Date(Date.now() - day),
    ...(ca ? { ca: { key: ca.key, cert: ca.cert } } : {}),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2, value })) },
    ],
  } as Parameters<typeof generate>[1]);
  const chain = ca ? `${result.cert.trim()}\n${ca.cert.trim()}\n` : result.cert;
  return { cert: result.cert, key: result.private, chain };
}

/** sha256 of the certificate's SubjectPublicKeyInfo: the data of a `x 1 1` TLSA record. */
export function spkiSha256(certPem: string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('hex');
}

/** sha256 of the whole certificate (DER): the data of a `x 0 1` TLSA record. */
export function certSha256(certPem: string): string {
  return createHash('sha256').update(new X509Certificate(certPem).raw).digest('hex');
}
