// Which X25519 key a message to a wallet is sealed to (DESIGN.md "Sealing"):
// the delegated MailboxKey when the wallet published one — hardware and
// extension wallets cannot decrypt — else the wallet's own key converted to
// X25519. Reads the chain on every call; callers decide about caching.
import type { Connection } from '@solana/web3.js';
import type { MailboxKey } from '../../../chain/client/accounts/index.ts';
import { type Key, keyBytes } from '../../../chain/client/bytes.ts';
import { getMailboxKey } from '../../../chain/client/client.ts';
import { walletEncryptionPublicKey } from './keys.ts';

export type SealKeySource = 'mailbox_key' | 'wallet';

export interface RecipientSealKey {
  /** 32-byte X25519 public key. */
  publicKey: Uint8Array;
  source: SealKeySource;
}

export async function recipientSealKey(
  conn: Connection,
  programId: Key,
  wallet: Key,
): Promise<RecipientSealKey> {
  return sealKeyFrom(wallet, await getMailboxKey(conn, programId, wallet));
}

/** The choice, given the wallet's MailboxKey as read from the chain (null: none published). */
export function sealKeyFrom(wallet: Key, published: MailboxKey | null): RecipientSealKey {
  // MailboxKey.pub_key is stored as the raw 32 key bytes (docs/protocol.md, account 2).
  if (published) return { publicKey: published.pubKey.toBytes(), source: 'mailbox_key' };
  return { publicKey: walletEncryptionPublicKey(keyBytes(wallet)), source: 'wallet' };
}
