// Who may relay into a mailbox (docs/protocol.md "Trust model"): a relayed
// SendMail lands only when the recipient Mailbox's `domain` is the MailDomain
// account whose authority signs it (RelayNotAllowed otherwise; a mailbox with
// no domain takes no relayed mail). These helpers tell a mail server which of
// its own domains, if any, may relay into a mailbox, and read the domain a
// mailbox names. Browser-safe.
import type { Connection, PublicKey } from '@solana/web3.js';
import { decodeMailDomain, type Mailbox, type MailDomain } from './accounts/index.ts';
import { type Key, toPublicKey, ZERO_KEY } from './bytes.ts';
import { fetchDecoded } from './client.ts';
import { normalizeDomain } from './hash.ts';
import { domainAddress } from './pda.ts';

/** The mailbox belongs to no domain (its `domain` is the zero key). */
export function hasNoDomain(mailbox: Pick<Mailbox, 'domain'>): boolean {
  return mailbox.domain.equals(ZERO_KEY);
}

/**
 * Which of `domains` (a server's local domains, as configured) the mailbox
 * belongs to: the one whose MailDomain account is the mailbox's `domain`, as
 * normalized, or null (another domain, or none). Derives addresses only
 * (cached in chain/client/pda.ts); reads nothing.
 */
export function relayDomainOf(
  programId: Key,
  mailbox: Pick<Mailbox, 'domain'>,
  domains: readonly string[],
): string | null {
  if (hasNoDomain(mailbox)) return null;
  for (const name of domains) {
    let normalized: string;
    try {
      normalized = normalizeDomain(name);
    } catch {
      // Not a name a MailDomain can have: no mailbox belongs to it.
      continue;
    }
    if (domainAddress(programId, normalized)[0].equals(mailbox.domain)) return normalized;
  }
  return null;
}

/** A MailDomain read by its account address (e.g. a mailbox's `domain`), or null. */
export function getDomainAt(conn: Connection, programId: Key, address: Key): Promise<MailDomain | null> {
  return fetchDecoded(conn, programId, toPublicKey(address), decodeMailDomain);
}

/** The MailDomain a mailbox names, with its address; null for a mailbox with no domain. */
export async function getMailboxDomain(
  conn: Connection,
  programId: Key,
  mailbox: Pick<Mailbox, 'domain'>,
): Promise<{ address: PublicKey; domain: MailDomain | null } | null> {
  if (hasNoDomain(mailbox)) return null;
  return { address: mailbox.domain, domain: await getDomainAt(conn, programId, mailbox.domain) };
}
