// The MTA-STS policy (RFC 8461 §3.2) served at
// https://mta-sts.<domain>/.well-known/mta-sts.txt, and the policy id
// published in `_mta-sts.<domain>` TXT. The id is derived from the policy
// text, so it changes exactly when the policy does and never needs to be
// configured or bumped by hand.
import { createHash } from 'node:crypto';
import type { Config } from '../../core/config/index.ts';

export const MTA_STS_PATH = '/.well-known/mta-sts.txt';

export interface MtaStsPolicyInput {
  mode: 'testing' | 'enforce' | 'none';
  /** MX host patterns (`mail.example.org` or `*.example.org`). */
  mx: readonly string[];
  maxAgeSecs: number;
}

export function mtaStsPolicyInput(config: Config): MtaStsPolicyInput {
  return {
    mode: config.domaind.mta_sts_mode,
    mx: config.domaind.mta_sts_mx,
    maxAgeSecs: config.domaind.mta_sts_max_age_secs,
  };
}

/** The policy text: `key: value` lines ending in CRLF (the RFC's preferred terminator). */
export function renderMtaStsPolicy(p: MtaStsPolicyInput): string {
  const lines = [
    'version: STSv1',
    `mode: ${p.mode}`,
    ...[...new Set(p.mx)].map((mx) => `mx: ${mx}`),
    `max_age: ${p.maxAgeSecs}`,
  ];
  return lines.map((l) => `${l}\r\n`).join('');
}

/** First 16 hex characters of sha256(policy text): 1–32 alphanumerics as RFC 8461 §3.1 asks. */
export function mtaStsPolicyId(policyText: string): string {
  return createHash('sha256').update(policyText, 'utf8').digest('hex').slice(0, 16);
}

/** The `_mta-sts.<domain>` TXT value for a policy text. */
export function mtaStsDiscoveryRecord(policyText: string): string {
  return `v=STSv1; id=${mtaStsPolicyId(policyText)}`;
}
