// Start-up check of the local domains against the chain: each one should
// have an active MailDomain whose authority is the configured authority key,
// or relayed SendMail for it will be refused. Used by `sealpost domaind`
// (logged, and shown by GET /ready) and by `sealpost serve`.
import type { Connection, PublicKey } from '@solana/web3.js';
import { domainAddress, getDomain, isDomainListed, normalizeDomain } from '../../../chain/client/index.ts';

/** `listed`: the configured authority put the domain up for sale; its listing holds the authority meanwhile. */
export type DomainCheckStatus = 'ok' | 'missing' | 'inactive' | 'other_authority' | 'listed';

export interface DomainCheckResult {
  domain: string;
  status: DomainCheckStatus;
  /** What the chain holds, when a MailDomain exists. */
  onChain?: { authority: string; isActive: boolean; rentPayer: string };
}

export interface CheckLocalDomainsOptions {
  connection: Connection;
  programId: string;
  domains: readonly string[];
  /** The configured authority key's public part. */
  authority: PublicKey;
}

/** One result per domain, in the given order. Chain read failures reject (the caller decides how to report). */
export async function checkLocalDomains(opts: CheckLocalDomainsOptions): Promise<DomainCheckResult[]> {
  return Promise.all(
    opts.domains.map(async (domain): Promise<DomainCheckResult> => {
      const d = await getDomain(opts.connection, opts.programId, domain);
      if (!d) return { domain, status: 'missing' };
      const onChain = {
        authority: d.authority.toBase58(),
        isActive: d.isActive,
        rentPayer: d.rentPayer.toBase58(),
      };
      // A foreign authority is the more serious finding, so it wins over inactive.
      if (!d.authority.equals(opts.authority)) {
        const account = domainAddress(opts.programId, normalizeDomain(domain))[0];
        const listed = isDomainListed(opts.programId, account, d.authority);
        return { domain, status: listed ? 'listed' : 'other_authority', onChain };
      }
      if (!d.isActive) return { domain, status: 'inactive', onChain };
      return { domain, status: 'ok', onChain };
    }),
  );
}

/** The operator-facing warning for a result that is not ok, or null. */
export function domainCheckWarning(r: DomainCheckResult, authority: string): string | null {
  switch (r.status) {
    case 'ok':
      return null;
    case 'missing':
      return `${r.domain} has no MailDomain on chain; authorize it with POST /domain after publishing _solana.authority.${r.domain}`;
    case 'inactive':
      return `${r.domain} is inactive on chain; relayed mail for it will be refused`;
    case 'listed':
      return `${r.domain} is listed for sale on chain (its authority is its DomainListing ${r.onChain?.authority}); relayed mail for it waits until the listing closes`;
    case 'other_authority':
      return `${r.domain} is authorized on chain to ${r.onChain?.authority}, not to the configured authority key ${authority}; relayed mail for it will be refused`;
  }
}
