// Detached ed25519 signatures with a keypair-file key, through node:crypto
// (OpenSSL). Key derivation in keypair-file.ts uses @noble/curves; signing
// here with the other implementation means a keypair whose halves disagree
// cannot slip through, and tests can verify with noble independently.
// Server/CLI only (node:crypto).
import { createPrivateKey, createPublicKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import type { Keypair } from './keypair-file.ts';

// DER prefix of a PKCS#8 ed25519 private key (RFC 8410); the 32-byte seed follows.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
// DER prefix of an SPKI ed25519 public key; the 32-byte key follows.
const SPKI_ED25519_PREFIX_LEN = 12;

export class KeypairMismatchError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`the key's secret half gives public key ${actual}, but its public half is ${expected}`);
    this.name = 'KeypairMismatchError';
  }
}

// Checked private keys per keypair object: importing and checking a key costs
// more than the signature (a delivery worker signs every SendMail batch with
// one key). The entry keeps a copy of the key bytes and is used only while
// the keypair still holds them.
const checked = new WeakMap<Keypair, { secretKey: Buffer; publicKey: Buffer; key: KeyObject }>();

function privateKeyOf(keypair: Keypair): KeyObject {
  const hit = checked.get(keypair);
  if (hit?.secretKey.equals(keypair.secretKey) && hit.publicKey.equals(keypair.publicKey)) return hit.key;
  const der = Buffer.concat([PKCS8_ED25519_PREFIX, keypair.secretKey.subarray(0, 32)]);
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const derived = createPublicKey(privateKey)
    .export({ format: 'der', type: 'spki' })
    .subarray(SPKI_ED25519_PREFIX_LEN);
  if (!Buffer.from(derived).equals(Buffer.from(keypair.publicKey))) {
    throw new KeypairMismatchError(keypair.address, bs58.encode(derived));
  }
  checked.set(keypair, {
    secretKey: Buffer.from(keypair.secretKey),
    publicKey: Buffer.from(keypair.publicKey),
    key: privateKey,
  });
  return privateKey;
}

/**
 * Signs `message` (exact bytes, nothing prefixed or hashed) with the
 * keypair's seed. Throws KeypairMismatchError when the seed does not yield
 * the keypair's public key, so a signature never claims the wrong signer.
 */
export function signDetached(keypair: Keypair, message: Uint8Array): Uint8Array {
  if (keypair.secretKey.length !== 64) {
    throw new Error(`ed25519 secret key must be 64 bytes, got ${keypair.secretKey.length}`);
  }
  return new Uint8Array(cryptoSign(null, message, privateKeyOf(keypair)));
}

/** signDetached, base58-encoded (the form the step-up header takes). */
export function signDetachedBase58(keypair: Keypair, message: Uint8Array): string {
  return bs58.encode(signDetached(keypair, message));
}
