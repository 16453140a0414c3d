// DANE for SMTP (RFC 7672, RFC 7671): which TLSA records are usable and
// whether a server's certificate chain matches them.
//  - DANE-EE (usage 3): the server certificate (selector 0) or its public
//    key (selector 1) matches; no name check, no expiry check (§3.1.1).
//  - DANE-TA (usage 2): a CA certificate or key in the presented chain (or
//    given in full by the record itself) matches, the chain from the server
//    certificate up to it verifies, the certificates below the trust anchor
//    are within their validity, and the server certificate names the host
//    (§3.1.2, §3.2).
// PKIX-TA/PKIX-EE (usages 0 and 1), unknown selectors and matching types,
// and digests of the wrong length are unusable (§3.1.3).
import { createHash, createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { WireAnswer } from '../src/core/dns/wire-query.ts';

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  data: Buffer;
}

export type DaneFailureType = 'tlsa-invalid' | 'certificate-host-mismatch' | 'certificate-expired';

export type DaneCheck =
  | { ok: true; usage: 2 | 3; record: TlsaRecord }
  | { ok: false; resultType: DaneFailureType; reason: string };

export function tlsaFromAnswers(records: readonly WireAnswer[]): TlsaRecord[] {
  return records.map((r) => {
    const d = r.data as { usage: number; selector: number; matchingType: number; certificate: Uint8Array };
    return {
      usage: d.usage,
      selector: d.selector,
      matchingType: d.matchingType,
      data: Buffer.from(d.certificate),
    };
  });
}

const DIGEST_LENGTH: Record<number, number> = { 1: 32, 2: 64 };

export function isUsableTlsa(r: TlsaRecord): boolean {
  if (r.usage !== 2 && r.usage !== 3) return false;
  if (r.selector !== 0 && r.selector !== 1) return false;
  if (r.matchingType === 0) return r.data.length > 0;
  return DIGEST_LENGTH[r.matchingType] === r.data.length;
}

/** Presentation form (`3 1 1 <hex>`), used as TLS-RPT policy-string. */
export function tlsaToString(r: TlsaRecord): string {
  return `${r.usage} ${r.selector} ${r.matchingType} ${r.data.toString('hex')}`;
}

function selected(cert: X509Certificate, selector: number): Buffer {
  return selector === 0 ? cert.raw : (cert.publicKey.export({ type: 'spki', format: 'der' }) as Buffer);
}

function digest(data: Buffer, matchingType: number): Buffer {
  if (matchingType === 1) return createHash('sha256').update(data).digest();
  if (matchingType === 2) return createHash('sha512').update(data).digest();
  return data;
}

export function tlsaMatches(cert: X509Certificate, r: TlsaRecord): boolean {
  return digest(selected(cert, r.selector), r.matchingType).equals(r.data);
}

function withinValidity(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo);
}

/** `certs[0..top]` each signed by the next one. */
function chainVerifies(certs: X509Certificate[], top: number): boolean {
  for (let i = 0; i < top; i++) {
    const child = certs[i] as X509Certificate;
    const parent = certs[i + 1] as X509Certificate;
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) return false;
  }
  return true;
}

/** A trust anchor given in full by a `2 0 0` or `2 1 0` record. */
function recordKey(r: TlsaRecord): KeyObject | null {
  if (r.matchingType !== 0) return null;
  try {
    return r.selector === 0
      ? new X509Certificate(r.data).publicKey
      : createPublicKey({ key: r.data, format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

/**
 * Checks a server chain (DER, server certificate first, as presented)
 * against the usable records; `names` are the reference identifiers for
 * DANE-TA (the MX host name).
 */
export function verifyDane(
  records: readonly TlsaRecord[],
  chainDer: readonly Buffer[],
  names: readonly string[],
  now: number,
): DaneCheck {
  let certs: X509Certificate[];
  try {
    certs = chainDer.map((d) => new X509Certificate(d));
  } catch {
    return {
      ok: false,
      resultType: 'tlsa-invalid',
      reason: 'the server sent a certificate that does not parse',
    };
  }
  const leaf = certs[0];
  if (!leaf) return { ok: false, resultType: 'tlsa-invalid', reason: 'the server sent no certificate' };
  const usable = records.filter(isUsableTlsa);

  for (const r of usable) {
    if (r.usage === 3 && tlsaMatches(leaf, r)) return { ok: true, usage: 3, record: r };
  }

  let nearMiss: DaneCheck | undefined;
  const anchored = (top: number, r: TlsaRecord): DaneCheck => {
    const below = certs.slice(0, top);
    if (below.some((c) => !withinValidity(c, now))) {
      return {
        ok: false,
        resultType: 'certificate-expired',
        reason: 'a certificate below the DANE-TA anchor is outside its validity',
      };
    }
    if (
      !names.some((n) =>
        leaf.checkHost(n, { subject: 'default', partialWildcards: false, multiLabelWildcards: false }),
      )
    ) {
      return {
        ok: false,
        resultType: 'certificate-host-mismatch',
        reason: `the certificate chains to the DANE-TA anchor but does not name ${names.join(' or ')}`,
      };
    }
    return { ok: true, usage: 2, record: r };
  };

  for (const r of usable) {
    if (r.usage !== 2) continue;
    // The anchor is a CA certificate the server presented...
    for (let i = 1; i < certs.length; i++) {
      if (!tlsaMatches(certs[i] as X509Certificate, r) || !chainVerifies(certs, i)) continue;
      const result = anchored(i, r);
      if (result.ok) return result;
      nearMiss ??= result;
    }
    // ...or one the record carries in full.
    const key = recordKey(r);
    if (!key) continue;
    for (let i = 0; i < certs.length; i++) {
      const top = certs[i] as X509Certificate;
      if (!chainVerifies(certs, i) || !top.verify(key)) continue;
      const result = anchored(i + 1, r);
      if (result.ok) return result;
      nearMiss ??= result;
    }
  }
  return (
    nearMiss ?? {
      ok: false,
      resultType: 'tlsa-invalid',
      reason: 'the server certificate chain matches none of the TLSA records',
    }
  );
}
