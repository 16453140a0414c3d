// The delegated mailbox key as a file (docs/sealing.md "Mailbox key file"):
// a JSON array of 64 integers, X25519 secret key then public key — the
// layout of a Solana CLI keypair file, so the same tools can hold it.
// Parsing is text in, keys out, so the browser can use it too.
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { SealFormatError } from './errors.ts';
import { type ReaderKeypair, readerKeypairFromSecret, walletEncryptionKeypair } from './keys.ts';

export function formatMailboxKeyFile(keypair: ReaderKeypair): string {
  const checked = readerKeypairFromSecret(keypair.secretKey);
  if (!checked.publicKey.every((b, i) => b === keypair.publicKey[i])) {
    throw new SealFormatError('the mailbox key pair does not belong together');
  }
  return JSON.stringify([...keypair.secretKey, ...keypair.publicKey]);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Accepts: 64 numbers X25519 secret ‖ public (what formatMailboxKeyFile
 * writes); 32 numbers, an X25519 secret alone; or a Solana CLI keypair file,
 * whose ed25519 key is used in its X25519 form (a delegated key made with
 * `sealpost keygen wallet` and published converted). `source` names the file in errors.
 */
export function parseMailboxKeyFile(text: string, source: string): ReaderKeypair {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new SealFormatError(`mailbox key file ${source}: not JSON; expected an array of 64 numbers`);
  }
  if (!Array.isArray(value) || (value.length !== 64 && value.length !== 32)) {
    throw new SealFormatError(`mailbox key file ${source}: expected a JSON array of 64 (or 32) numbers`);
  }
  if (!value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
    throw new SealFormatError(`mailbox key file ${source}: every element must be an integer 0-255`);
  }
  const bytes = Uint8Array.from(value as number[]);
  const secret = bytes.subarray(0, 32);
  if (bytes.length === 32) return readerKeypairFromSecret(secret);
  const second = bytes.subarray(32);
  if (sameBytes(x25519.getPublicKey(secret), second)) return readerKeypairFromSecret(secret);
  if (sameBytes(ed25519.getPublicKey(secret), second)) return walletEncryptionKeypair(bytes);
  throw new SealFormatError(
    `mailbox key file ${source}: the second half is neither the X25519 nor the ed25519 public key of the first`,
  );
}
