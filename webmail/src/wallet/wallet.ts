// The two ways the page signs (reference "Authentication" 7): the in-page
// wallet signs transactions itself, sends them once and hands the signed
// bytes to the status poll, which re-sends them while unseen; an external wallet (browser extension,
// hardware) is handed the transaction unsigned with itself as fee payer,
// signs and broadcasts it, and the page then polls the signature. Either
// way the page sealed whatever the transaction carries before this point.
import { type Connection, Keypair, PublicKey, type Transaction } from '@solana/web3.js';
import { sendSigned } from '../../../chain/client/rebroadcast.ts';
import {
  type ReaderKeypair,
  readerKeypairFromSecret,
  walletEncryptionKeypair,
} from '../../../src/mail/seal/index.ts';
import type { Submitted } from '../../../src/mail/trustless/tx.ts';
import type { ExternalProvider } from './external.ts';
import { signDetached } from './secret-key.ts';
import { type StoredMailboxKey, unb64 } from './vault.ts';

export interface Wallet {
  kind: 'in-page' | 'external';
  publicKey: PublicKey;
  address: string;
  /** Signs the exact bytes (login and step-up nonces). */
  signMessage(message: Uint8Array): Promise<Uint8Array>;
  /**
   * Signs and broadcasts; resolves to the signature (not yet confirmed) and,
   * for the in-page key, the signed bytes the status poll re-sends.
   */
  submit(conn: Connection, tx: Transaction): Promise<Submitted>;
  /** The wallet's own X25519 key when the page holds the secret (in-page only). */
  walletReader(): ReaderKeypair | null;
}

export function inPageWallet(secretKey64: Uint8Array): Wallet {
  const keypair = Keypair.fromSecretKey(secretKey64);
  return {
    kind: 'in-page',
    publicKey: keypair.publicKey,
    address: keypair.publicKey.toBase58(),
    signMessage: async (message) => signDetached(message, secretKey64),
    async submit(conn, tx) {
      const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
      tx.feePayer = keypair.publicKey;
      tx.recentBlockhash = blockhash;
      tx.lastValidBlockHeight = lastValidBlockHeight;
      tx.sign(keypair);
      // Sent once without the node's own retries; pollSignature re-sends these bytes while unseen.
      const wire = tx.serialize();
      const signature = await sendSigned(conn, wire, { preflightCommitment: 'confirmed' });
      return { signature, wire };
    },
    walletReader: () => walletEncryptionKeypair(secretKey64),
  };
}

export function externalWallet(provider: ExternalProvider): Wallet {
  const publicKey = new PublicKey(provider.address);
  return {
    kind: 'external',
    publicKey,
    address: publicKey.toBase58(),
    signMessage: (message) => provider.signMessage(message),
    async submit(conn, tx) {
      const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
      tx.feePayer = publicKey;
      tx.recentBlockhash = blockhash;
      tx.lastValidBlockHeight = lastValidBlockHeight;
      // The extension broadcasts (and re-broadcasts) itself; the page only polls.
      return { signature: await provider.signAndSendTransaction(tx) };
    },
    walletReader: () => null,
  };
}

/** Every key that may open mail to this wallet: delegated keys (newest first), then the wallet's own. */
export function readerKeys(wallet: Wallet, mailboxKeys: StoredMailboxKey[]): ReaderKeypair[] {
  const out = [...mailboxKeys]
    .sort((a, b) => b.addedAt - a.addedAt)
    .map((k) => readerKeypairFromSecret(unb64(k.secret)));
  const own = wallet.walletReader();
  if (own) out.push(own);
  return out;
}
