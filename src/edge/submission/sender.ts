// Who is submitting, and which sender addresses are theirs. An account owns
// `<wallet>@<local domain>` and `<alias>@<local domain>` for every alias the
// chain resolves to its wallet (and `postmaster@<local domain>` when it is the
// configured postmaster wallet). A peer Sealpost server owns the domains its
// client certificate names, never this server's local domains.
import { isBase58Key, isNormalizedAlias } from '../../../chain/client/index.ts';
import type { ChainView } from '../../mail/chain-view.ts';
import type { RecipientPolicy } from '../../mail/recipients.ts';

export type Submitter =
  | { kind: 'account'; wallet: string }
  | {
      kind: 'peer';
      /** The certificate's first name, for logs and trace headers. */
      name: string;
      /** Lowercased DNS names from the certificate: the mail domains the peer speaks for. */
      domains: string[];
    };

export function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  return {
    local: address.slice(0, at),
    domain: address
      .slice(at + 1)
      .toLowerCase()
      .replace(/\.$/, ''),
  };
}

/**
 * The wallet a local address names (wallet or alias form), or null when the
 * address is not local or names nothing. Chain lookups may throw.
 */
export async function walletOfLocalAddress(
  address: string,
  policy: RecipientPolicy,
  chain: ChainView,
): Promise<string | null> {
  const parts = splitAddress(address);
  if (!parts || !policy.localDomains.includes(parts.domain)) return null;
  const { local } = parts;
  // base58 is case-sensitive: a wallet local part is taken byte for byte.
  if (isBase58Key(local)) return local;
  const lower = local.toLowerCase();
  if (lower === 'postmaster') return policy.postmasterWallet ?? null;
  if (!isNormalizedAlias(lower)) return null;
  return chain.alias(lower);
}

/** Whether `address` is one of the submitter's own sender addresses. */
export async function ownsAddress(
  submitter: Submitter,
  address: string,
  policy: RecipientPolicy,
  chain: ChainView,
): Promise<boolean> {
  if (submitter.kind === 'account') {
    return (await walletOfLocalAddress(address, policy, chain)) === submitter.wallet;
  }
  const parts = splitAddress(address);
  if (!parts) return false;
  // A peer never speaks for this server's own users.
  if (policy.localDomains.includes(parts.domain)) return false;
  return submitter.domains.includes(parts.domain);
}
