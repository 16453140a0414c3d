// The domain service's one error type: a stable string code, the HTTP status
// it maps to, a message for the operator, and optional facts for the body.
// The route layer turns it into `{ "error": code, "message": …, ...details }`.
import type { DnssecProblem } from '../../core/dns/dnssec-chain.ts';

export type DomaindErrorCode =
  | 'invalid_domain'
  | 'missing_domain'
  | 'unsupported_media_type'
  | 'no_authority_record'
  | 'conflicting_authority_records'
  | 'malformed_authority_key'
  | 'domain_taken'
  | 'delegate_not_configured'
  | 'delegate_not_authorized'
  | 'resolver_failed'
  | 'resolver_timeout'
  | 'chain_unavailable'
  | 'chain_refused'
  | 'unknown_domain'
  | 'invalid_reclaim_request'
  | 'no_postoffice'
  | 'root_ksk_not_set'
  | 'authority_mismatch'
  | 'transaction_mismatch'
  | 'priority_fee_too_high'
  | 'authority_signature_invalid'
  | 'domain_inactive'
  | 'reclaim_pending'
  | `dnssec_${DnssecProblem}`;

const STATUS: Record<DomaindErrorCode, number> = {
  invalid_domain: 400,
  missing_domain: 400,
  unsupported_media_type: 415,
  no_authority_record: 404,
  conflicting_authority_records: 409,
  malformed_authority_key: 422,
  domain_taken: 409,
  delegate_not_configured: 503,
  delegate_not_authorized: 503,
  resolver_failed: 502,
  resolver_timeout: 504,
  chain_unavailable: 502,
  chain_refused: 502,
  unknown_domain: 404,
  invalid_reclaim_request: 400,
  no_postoffice: 503,
  root_ksk_not_set: 503,
  authority_mismatch: 422,
  transaction_mismatch: 422,
  priority_fee_too_high: 422,
  authority_signature_invalid: 422,
  domain_inactive: 409,
  reclaim_pending: 409,
  // A chain that does not parse is a bad request; one that parses but does not hold is unprocessable.
  dnssec_malformed: 400,
  dnssec_root_key_mismatch: 422,
  dnssec_missing_rrset: 422,
  dnssec_missing_signature: 422,
  dnssec_no_matching_key: 422,
  dnssec_unsupported_algorithm: 422,
  dnssec_label_count: 422,
  dnssec_signature_expired: 422,
  dnssec_signature_not_yet_valid: 422,
  dnssec_bad_signature: 422,
  dnssec_ds_mismatch: 422,
};

export class DomaindError extends Error {
  readonly status: number;
  constructor(
    readonly code: DomaindErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomaindError';
    this.status = STATUS[code];
  }

  toBody(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.details };
  }
}
