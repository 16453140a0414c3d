// A SendMail batch as a legacy Solana transaction signed by its fee payer
// alone: the message from chain/client/legacy-tx.ts (written directly; web3.js's
// Transaction.sign/serialize took about 9 ms for a four-SendMail batch),
// signed through node:crypto (src/core/keys/ed25519-sign.ts). Server only.
import type { TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { legacyMessage, legacyWire, requiredSignatures } from '../../chain/client/legacy-tx.ts';
import { signDetached } from '../../src/core/keys/ed25519-sign.ts';
import { type Keypair as KeyFile, keypairFromSeed } from '../../src/core/keys/keypair-file.ts';

/** Signed wire bytes and the signature (base58) of `instructions`, paid and signed by `payer`. */
export function signLegacy(
  payer: KeyFile,
  instructions: TransactionInstruction[],
  blockhash: string,
): { raw: Buffer; signature: string } {
  const message = legacyMessage(payer.publicKey, blockhash, instructions);
  const signers = requiredSignatures(message);
  if (signers !== 1) throw new Error(`signLegacy signs for the fee payer only, not ${signers} signers`);
  const raw = legacyWire(message, [{ publicKey: payer.publicKey, sign: (m) => signDetached(payer, m) }]);
  return { raw, signature: bs58.encode(raw.subarray(1, 65)) };
}

/** The keypair-file form of a web3.js keypair's secret key (checked against its public half when signing). */
export function keyFileOf(secretKey: Uint8Array): KeyFile {
  return keypairFromSeed(secretKey.subarray(0, 32));
}
