// Turning what a person types into a recipient wallet. Trustless send is
// on-chain only, and an address names an on-chain mailbox only when it says
// so unambiguously:
//   - `<wallet>` or `<wallet>@any.domain`: the wallet itself;
//   - `alias`: the on-chain alias (the bare form names the chain's namespace);
//   - `alias@domain`: the alias, but only when `domain` is an active MailDomain
//     on chain. `alice@example.org` is an ordinary mailbox at example.org, never
//     the on-chain alias `alice` (which may belong to a stranger).
// Anything else is refused before anything is sealed, pinned or paid.
import { type Connection, PublicKey } from '@solana/web3.js';
import type { Mailbox } from '../../../chain/client/accounts/index.ts';
import { getDomain, getMailbox, resolveAlias } from '../../../chain/client/client.ts';
import { isBase58Key, isNormalizedAlias, isValidDomainName } from '../../../chain/client/hash.ts';

export class RecipientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecipientError';
  }
}

export interface ResolvedRecipient {
  /** The address as typed, without a display name, trimmed. */
  input: string;
  wallet: PublicKey;
  /** The alias it went through, if any. */
  alias: string | null;
  /** The on-chain MailDomain the address named (lowercased), if it named one and it was checked. */
  domain: string | null;
  mailbox: Mailbox;
}

/** The address inside `Name <addr>`, trimmed; the text itself otherwise. */
export function bareAddress(text: string): string {
  const t = text.trim();
  const m = /<([^<>]*)>\s*$/.exec(t);
  return (m ? (m[1] ?? '') : t).trim();
}

export function localPart(address: string): string {
  const t = bareAddress(address);
  const at = t.lastIndexOf('@');
  return at < 0 ? t : t.slice(0, at);
}

/** How an address would be read on chain, before any account is fetched. */
export type AddressForm =
  | { kind: 'wallet'; wallet: string }
  | { kind: 'alias'; alias: string; domain: string | null }
  | { kind: 'invalid'; reason: string };

/** Classifies `input` by syntax alone (no chain reads). */
export function addressForm(input: string): AddressForm {
  const address = bareAddress(input);
  if (address === '') return { kind: 'invalid', reason: 'Enter a recipient: a wallet address or an alias.' };
  if (/[,;\s]/.test(address)) {
    return {
      kind: 'invalid',
      reason: 'A trustless send goes to one recipient. Send a separate message to each.',
    };
  }
  const at = address.lastIndexOf('@');
  const local = at < 0 ? address : address.slice(0, at);
  const domainText = at < 0 ? null : address.slice(at + 1);
  if (isBase58Key(local)) return { kind: 'wallet', wallet: local };
  let domain: string | null = null;
  if (domainText !== null) {
    domain = domainText.toLowerCase().replace(/\.$/, '');
    if (!isValidDomainName(domain)) {
      return { kind: 'invalid', reason: `${address} has no valid domain after the @.` };
    }
  }
  const alias = local.toLowerCase();
  if (!isNormalizedAlias(alias)) {
    return {
      kind: 'invalid',
      reason: `${address} is neither a wallet address nor an on-chain alias. Trustless mail goes only to on-chain mailboxes.`,
    };
  }
  return { kind: 'alias', alias, domain };
}

export async function resolveRecipient(
  conn: Connection,
  programId: string,
  text: string,
): Promise<ResolvedRecipient> {
  const input = bareAddress(text);
  const form = addressForm(input);
  if (form.kind === 'invalid') throw new RecipientError(form.reason);
  let wallet: PublicKey;
  let alias: string | null = null;
  let domain: string | null = null;
  if (form.kind === 'wallet') {
    wallet = new PublicKey(form.wallet);
  } else {
    if (form.domain !== null) {
      const onChain = await getDomain(conn, programId, form.domain);
      if (!onChain) {
        throw new RecipientError(
          `${form.domain} is not a mail domain on chain, so ${input} is an ordinary email address, not an on-chain mailbox. ` +
            'Trustless send reaches only on-chain mailboxes: send it through a mail server instead. Nothing was sealed, pinned or paid.',
        );
      }
      if (!onChain.isActive) {
        throw new RecipientError(
          `The mail domain ${form.domain} is inactive on chain, so ${input} cannot receive mail. Nothing was sealed, pinned or paid.`,
        );
      }
      domain = form.domain;
    }
    const target = await resolveAlias(conn, programId, form.alias);
    if (!target) {
      throw new RecipientError(
        domain
          ? `${input} does not exist: no alias "${form.alias}" is registered on chain. Check the spelling.`
          : `No alias "${form.alias}" is registered on chain. Check the spelling, or enter the wallet address.`,
      );
    }
    wallet = target;
    alias = form.alias;
  }
  const mailbox = await getMailbox(conn, programId, wallet);
  if (!mailbox) {
    throw new RecipientError(
      `${input === wallet.toBase58() ? input : `${input} (wallet ${wallet.toBase58()})`} has no mailbox on chain, so it cannot receive mail.`,
    );
  }
  return { input, wallet, alias, domain, mailbox };
}

/** One line for the page: the short wallet and where it came from. */
export function describeRecipient(r: ResolvedRecipient, short: (s: string) => string): string {
  const w = short(r.wallet.toBase58());
  if (r.alias === null) return `wallet ${w}`;
  return `wallet ${w}, the alias ${r.alias}${r.domain ? ` at ${r.domain}` : ''}`;
}
