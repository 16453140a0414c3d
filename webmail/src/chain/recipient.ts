// Turning what a person types into a recipient wallet: `<wallet>`,
// `<wallet>@domain`, `alias` or `alias@domain`. Alias resolution is a plain
// account read. Trustless send is on-chain only, so anything else is refused.
import { type Connection, PublicKey } from '@solana/web3.js';
import type { Mailbox } from '../../../chain/accounts/index.ts';
import { getMailbox, resolveAlias } from '../../../chain/client.ts';
import { isBase58Key, normalizeAlias } from '../../../chain/hash.ts';

export class RecipientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecipientError';
  }
}

export interface ResolvedRecipient {
  /** As typed, trimmed. */
  input: string;
  wallet: PublicKey;
  /** The alias it went through, if any. */
  alias: string | null;
  mailbox: Mailbox;
}

export function localPart(address: string): string {
  const t = address.trim().replace(/^.*<([^>]*)>.*$/, '$1');
  const at = t.lastIndexOf('@');
  return at < 0 ? t : t.slice(0, at);
}

export async function resolveRecipient(
  conn: Connection,
  programId: string,
  address: string,
): Promise<ResolvedRecipient> {
  const input = address.trim();
  if (input === '') throw new RecipientError('Enter a recipient: a wallet address or an alias.');
  const local = localPart(input);
  let wallet: PublicKey;
  let alias: string | null = null;
  if (isBase58Key(local)) {
    wallet = new PublicKey(local);
  } else {
    let name: string;
    try {
      name = normalizeAlias(local);
    } catch {
      throw new RecipientError(
        `${input} is neither a wallet address nor an alias. Trustless mail goes only to on-chain mailboxes.`,
      );
    }
    const target = await resolveAlias(conn, programId, name);
    if (!target) throw new RecipientError(`No alias "${name}" is registered on chain.`);
    wallet = target;
    alias = name;
  }
  const mailbox = await getMailbox(conn, programId, wallet);
  if (!mailbox)
    throw new RecipientError(`${wallet.toBase58()} has no mailbox on chain, so it cannot receive mail.`);
  return { input, wallet, alias, mailbox };
}
