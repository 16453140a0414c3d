// Wallet signatures as the API receives them: base58 text of a 64-byte
// ed25519 signature over the exact UTF-8 bytes of a nonce.
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';

/** The signature bytes, or null when the text is not base58 of exactly 64 bytes. */
export function decodeSignature(text: string): Uint8Array | null {
  if (text.length === 0 || text.length > 100) return null;
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(text);
  } catch {
    return null;
  }
  return bytes.length === 64 ? bytes : null;
}

/** Strict (RFC 8032) verification of `signature` by `wallet` over the UTF-8 bytes of `message`. */
export function verifyWalletSignature(wallet: string, message: string, signature: Uint8Array): boolean {
  try {
    const publicKey = bs58.decode(wallet);
    if (publicKey.length !== 32) return false;
    return ed25519.verify(signature, new TextEncoder().encode(message), publicKey, { zip215: false });
  } catch {
    return false;
  }
}

export function isWalletAddress(value: string): boolean {
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}
