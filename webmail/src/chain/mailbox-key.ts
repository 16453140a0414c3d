// Delegated encryption key (MailboxKey): generated in the page, its secret
// kept in the vault, its public half published on chain. Rotation publishes
// a new key and keeps the old secrets, because mail sealed before the
// rotation stays sealed to the old key.
import { type Connection, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { getMailboxKey } from '../../../chain/client/client.ts';
import { publishKeyInstruction, removeKeyInstruction } from '../../../chain/client/instructions.ts';
import { generateReaderKeypair, parseMailboxKeyFile, SealFormatError } from '../../../src/mail/seal/index.ts';
import { Refusal } from '../refusal.ts';
import type { StoredMailboxKey } from '../wallet/vault.ts';
import { b64 } from '../wallet/vault.ts';
import type { Wallet } from '../wallet/wallet.ts';
import { type SendOptions, sendInstructions, type TxOutcome } from './tx.ts';

export interface PublishedKey {
  publicKey: string;
}

export async function publishedKey(
  conn: Connection,
  programId: string,
  owner: PublicKey,
): Promise<PublishedKey | null> {
  const k = await getMailboxKey(conn, programId, owner);
  return k ? { publicKey: k.pubKey.toBase58() } : null;
}

/** A new delegated key; store it in the vault before publishing so it can never be lost. */
export function newMailboxKey(now: number): StoredMailboxKey {
  const kp = generateReaderKeypair();
  return { secret: b64(kp.secretKey), publicKey: bs58.encode(kp.publicKey), addedAt: now };
}

/** What is wrong with a pasted mailbox key file, in a sentence. */
export class KeyFileError extends Refusal {
  constructor(detail: string) {
    super(`The pasted text is not a mailbox key file: ${detail}.`);
    this.name = 'KeyFileError';
  }
}

const SOURCE = 'pasted';

/** A mailbox key file's secret (docs/sealing.md "Mailbox key file"). */
export function importMailboxKey(text: string, now: number): StoredMailboxKey {
  let kp: ReturnType<typeof parseMailboxKeyFile>;
  try {
    kp = parseMailboxKeyFile(text, SOURCE);
  } catch (err) {
    // The parser names a file ("mailbox key file <source>: …"); here there is only the pasted text.
    if (err instanceof SealFormatError) {
      throw new KeyFileError(err.message.replace(`mailbox key file ${SOURCE}: `, ''));
    }
    throw err;
  }
  return { secret: b64(kp.secretKey), publicKey: bs58.encode(kp.publicKey), addedAt: now };
}

export function publishKey(
  conn: Connection,
  programId: string,
  wallet: Wallet,
  key: StoredMailboxKey,
  poll?: SendOptions,
): Promise<TxOutcome> {
  const ix = publishKeyInstruction({
    programId,
    owner: wallet.publicKey,
    pubKey: new PublicKey(bs58.decode(key.publicKey)),
  });
  return sendInstructions(conn, wallet, [ix], poll);
}

export function removeKey(
  conn: Connection,
  programId: string,
  wallet: Wallet,
  poll?: SendOptions,
): Promise<TxOutcome> {
  return sendInstructions(conn, wallet, [removeKeyInstruction({ programId, owner: wallet.publicKey })], poll);
}
