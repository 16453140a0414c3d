// Reading a Solana secret key the way people have one: the Solana CLI's
// keypair file (a JSON array of 64 numbers) or base58 text of the 64 bytes
// (what browser wallets export). A 32-byte seed is accepted too.
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';

export class SecretKeyFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyFormatError';
  }
}

function fromSeed(seed: Uint8Array): Uint8Array {
  const out = new Uint8Array(64);
  out.set(seed, 0);
  out.set(ed25519.getPublicKey(seed), 32);
  return out;
}

function checked(bytes: Uint8Array): Uint8Array {
  if (bytes.length === 32) return fromSeed(bytes);
  if (bytes.length !== 64) {
    throw new SecretKeyFormatError(
      `a secret key is 64 bytes (or a 32-byte seed); this one is ${bytes.length}`,
    );
  }
  const pub = ed25519.getPublicKey(bytes.subarray(0, 32));
  if (!pub.every((b, i) => b === bytes[32 + i])) {
    throw new SecretKeyFormatError('the two halves of this secret key do not belong together');
  }
  return bytes;
}

/** The 64-byte secret key (seed ‖ public key) in `text`, or a SecretKeyFormatError saying what is wrong. */
export function parseSecretKey(text: string): Uint8Array {
  const t = text.trim();
  if (t === '') throw new SecretKeyFormatError('paste a secret key first');
  if (t.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(t);
    } catch {
      throw new SecretKeyFormatError('this looks like a JSON array but does not parse');
    }
    if (!Array.isArray(arr) || !arr.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
      throw new SecretKeyFormatError('a keypair file is a JSON array of numbers 0–255');
    }
    return checked(Uint8Array.from(arr as number[]));
  }
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(t);
  } catch {
    throw new SecretKeyFormatError(
      'not a secret key: expected a JSON array of 64 numbers (Solana CLI keypair file) or base58 text',
    );
  }
  return checked(bytes);
}

/** ed25519 signature of `message` by a 64-byte secret key. */
export function signDetached(message: Uint8Array, secretKey64: Uint8Array): Uint8Array {
  return ed25519.sign(message, secretKey64.subarray(0, 32));
}
