// The TLS policy for one MX host, decided in this order (RFC 8461 §2 puts
// DANE before MTA-STS):
//  1. DANE, when it is in effect (a validating, trusted resolver) and the
//     MX answer and the host's addresses are DNSSEC-secure: a secure, non-
//     empty TLSA set means authenticated TLS (usable records) or at least
//     mandatory TLS (none usable, RFC 7672 §2.2); a TLSA lookup that fails
//     means "do not use this host" (a bogus answer must never downgrade).
//  2. MTA-STS: with an `enforce` policy only hosts matching its mx patterns
//     are used, over TLS with a WebPKI-valid certificate for the host;
//     `testing` delivers regardless and only reports.
//  3. Otherwise opportunistic STARTTLS.
// Each decision carries the TLS-RPT policy it reports under.
import { DnsLookupError } from '../src/core/dns/resolver.ts';
import { isUsableTlsa, type TlsaRecord, tlsaFromAnswers, tlsaToString, verifyDane } from './dane.ts';
import type { CachedStsPolicy } from './mta-sts.ts';
import { mxMatchesPolicy } from './mta-sts-policy.ts';
import type { SecureDns } from './secure-dns.ts';
import type { PolicyFailure, TlsInfo, TlsMode } from './smtp-session.ts';

export interface ReportPolicy {
  policyType: 'tlsa' | 'sts' | 'no-policy-found';
  policyString: string[];
  mxHost: string[];
}

export type HostPolicy =
  | { kind: 'dane'; records: TlsaRecord[]; report: ReportPolicy }
  | { kind: 'dane-encrypt'; records: TlsaRecord[]; report: ReportPolicy }
  | { kind: 'sts-enforce'; policy: CachedStsPolicy; report: ReportPolicy }
  | { kind: 'sts-testing'; policy: CachedStsPolicy; matches: boolean; report: ReportPolicy }
  | { kind: 'opportunistic'; report: ReportPolicy }
  /** The host must not be used; the failure is reported. */
  | { kind: 'skip'; failure: PolicyFailure; report: ReportPolicy };

export interface HostPolicyInput {
  dns: SecureDns;
  host: string;
  port: number;
  daneInEffect: boolean;
  /** MX answer (or, for an implicit MX, its denial) and the host's addresses were validated. */
  mxSecure: boolean;
  addressesSecure: boolean;
  sts: CachedStsPolicy | null;
}

const NO_POLICY: ReportPolicy = { policyType: 'no-policy-found', policyString: [], mxHost: [] };

function stsReport(p: CachedStsPolicy): ReportPolicy {
  return { policyType: 'sts', policyString: p.policy.lines, mxHost: p.policy.mx };
}

export async function decideHostPolicy(input: HostPolicyInput): Promise<HostPolicy> {
  if (input.daneInEffect && input.mxSecure && input.addressesSecure) {
    const tlsaName = `_${input.port}._tcp.${input.host}`;
    const tlsaReport = (records: TlsaRecord[]): ReportPolicy => ({
      policyType: 'tlsa',
      policyString: records.map(tlsaToString),
      mxHost: [input.host],
    });
    try {
      const answer = await input.dns.query(tlsaName, 'TLSA');
      if (answer.secure && answer.records.length > 0) {
        const records = tlsaFromAnswers(answer.records);
        const usable = records.filter(isUsableTlsa);
        return usable.length > 0
          ? { kind: 'dane', records: usable, report: tlsaReport(records) }
          : { kind: 'dane-encrypt', records, report: tlsaReport(records) };
      }
    } catch (err) {
      const reason = err instanceof DnsLookupError ? err.message : String(err);
      return {
        kind: 'skip',
        failure: { resultType: 'dnssec-invalid', reason: `TLSA lookup failed: ${reason}` },
        report: tlsaReport([]),
      };
    }
  }
  const sts = input.sts;
  if (sts && sts.policy.mode !== 'none') {
    const matches = mxMatchesPolicy(input.host, sts.policy.mx);
    if (sts.policy.mode === 'enforce') {
      if (!matches) {
        return {
          kind: 'skip',
          failure: {
            resultType: 'validation-failure',
            reason: `MX ${input.host} is not listed in the MTA-STS policy`,
          },
          report: stsReport(sts),
        };
      }
      return { kind: 'sts-enforce', policy: sts, report: stsReport(sts) };
    }
    return { kind: 'sts-testing', policy: sts, matches, report: stsReport(sts) };
  }
  return { kind: 'opportunistic', report: NO_POLICY };
}

export function tlsModeOf(p: HostPolicy): TlsMode {
  return p.kind === 'dane' || p.kind === 'dane-encrypt' || p.kind === 'sts-enforce'
    ? 'required'
    : 'opportunistic';
}

/** RFC 8460 result type of a failed WebPKI check, from Node's verification code. */
export function webPkiResultType(code: string | undefined): string {
  switch (code) {
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return 'certificate-expired';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return 'certificate-host-mismatch';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'CERT_UNTRUSTED':
      return 'certificate-not-trusted';
    default:
      return 'validation-failure';
  }
}

/**
 * Judges a finished session against the policy. Returns the failure (with
 * its result type) or null; `enforced` says whether a failure must stop
 * delivery (it is only reported under `sts-testing` and opportunistic TLS).
 */
export function judgeTls(
  p: HostPolicy,
  tls: TlsInfo,
  host: string,
  now: number,
): { failure: PolicyFailure | null; enforced: boolean } {
  const enforced = p.kind === 'dane' || p.kind === 'dane-encrypt' || p.kind === 'sts-enforce';
  if (!tls.secure) {
    return {
      failure: { resultType: 'starttls-not-supported', reason: `${host} did not offer STARTTLS` },
      enforced,
    };
  }
  switch (p.kind) {
    case 'dane': {
      const check = verifyDane(p.records, tls.chain, [host], now);
      return { failure: check.ok ? null : { resultType: check.resultType, reason: check.reason }, enforced };
    }
    case 'dane-encrypt':
      // Encrypted as required; the unusable TLSA set itself is worth a report.
      return {
        failure: {
          resultType: 'tlsa-invalid',
          reason: 'no usable TLSA record (TLS used without authentication)',
        },
        enforced: false,
      };
    case 'sts-enforce':
    case 'sts-testing': {
      if (p.kind === 'sts-testing' && !p.matches) {
        return {
          failure: {
            resultType: 'validation-failure',
            reason: `MX ${host} is not listed in the MTA-STS policy`,
          },
          enforced: false,
        };
      }
      if (tls.authorized) return { failure: null, enforced };
      return {
        failure: {
          resultType: webPkiResultType(tls.authorizationError),
          reason: `certificate of ${host} is not WebPKI-valid: ${tls.authorizationError ?? 'unknown'}`,
        },
        enforced,
      };
    }
    default:
      return { failure: null, enforced: false };
  }
}
