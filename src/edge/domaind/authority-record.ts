// Reads and validates the domain authority proof: the TXT record at
// `_solana.authority.<domain>` holding the base58 ed25519 public key of the
// authority. Exactly one distinct value must be published; it must decode to
// 32 bytes that are a point on the ed25519 curve and not of small order
// (the authority signs SendMail, so it must be a real signing key, not an
// off-curve program address).
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import { DomainNameError, type NormalizedDomain, normalizeDomainName } from '../../core/dns/name.ts';
import { DnsLookupError, type DnsResolver } from '../../core/dns/resolver.ts';
import { DomaindError } from './errors.ts';

export const AUTHORITY_LABEL = '_solana.authority';

export interface AuthorityClaim {
  domain: NormalizedDomain;
  /** The TXT name that was read. */
  recordName: string;
  /** The records as published (trimmed), in answer order. */
  records: string[];
  /** base58 public key the record claims. */
  authority: string;
}

export function authorityRecordName(domainAscii: string): string {
  return `${AUTHORITY_LABEL}.${domainAscii}`;
}

/** Normalizes a domain typed by a client; DomaindError `invalid_domain` names the problem. */
export function parseDomainInput(input: string): NormalizedDomain {
  try {
    return normalizeDomainName(input);
  } catch (err) {
    if (err instanceof DomainNameError) {
      throw new DomaindError('invalid_domain', err.message, { problem: err.problem });
    }
    throw err;
  }
}

/** Why a TXT value is not a usable authority key, or null when it is one. */
export function authorityKeyProblem(value: string): string | null {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    return 'it is not base58 (the alphabet has no 0, O, I or l)';
  }
  if (bytes.length !== 32) return `it decodes to ${bytes.length} bytes; an ed25519 public key has 32`;
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(bytes);
  } catch {
    return 'it is not a point on the ed25519 curve (an off-curve address cannot sign)';
  }
  if (point.isSmallOrder()) return 'it is a small-order point, not a usable signing key';
  return null;
}

export async function lookupAuthority(resolver: DnsResolver, domainInput: string): Promise<AuthorityClaim> {
  const domain = parseDomainInput(domainInput);
  const recordName = authorityRecordName(domain.ascii);
  let txt: string[];
  try {
    txt = await resolver.txt(recordName);
  } catch (err) {
    if (!(err instanceof DnsLookupError)) throw err;
    if (err.isNegative) {
      throw new DomaindError(
        'no_authority_record',
        `no TXT record at ${recordName} (${err.kind === 'nxdomain' ? 'the name does not exist' : 'the name has no TXT record'}); publish the authority's base58 public key there (a fresh record may take a while to reach the resolver)`,
        { domain: domain.ascii, record_name: recordName },
      );
    }
    throw new DomaindError(
      err.kind === 'timeout' ? 'resolver_timeout' : 'resolver_failed',
      `the resolver could not answer for ${recordName} (${err.kind}); try again later`,
      { domain: domain.ascii, record_name: recordName, resolver_error: err.kind },
    );
  }
  const records = txt.map((r) => r.trim());
  const distinct = [...new Set(records)];
  if (distinct.length === 0) {
    throw new DomaindError('no_authority_record', `no TXT record at ${recordName}`, {
      domain: domain.ascii,
      record_name: recordName,
    });
  }
  if (distinct.length > 1) {
    throw new DomaindError(
      'conflicting_authority_records',
      `${recordName} has ${distinct.length} different TXT records; publish exactly one (the authority's base58 public key)`,
      { domain: domain.ascii, record_name: recordName, records },
    );
  }
  const authority = distinct[0] as string;
  const problem = authorityKeyProblem(authority);
  if (problem) {
    throw new DomaindError(
      'malformed_authority_key',
      `the TXT record at ${recordName} is not an ed25519 public key: ${problem}`,
      {
        domain: domain.ascii,
        record_name: recordName,
        records,
      },
    );
  }
  return { domain, recordName, records, authority };
}
