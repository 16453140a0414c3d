// Reader keys (X25519) and content-key wraps. A wallet's ed25519 key doubles
// as an encryption key through the birational map to Curve25519, the same
// conversion as libsodium's crypto_sign_ed25519_{pk,sk}_to_curve25519; it is
// done with @noble/curves so it is synchronous and needs no module loading.
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { SealFormatError } from './errors.ts';
import { CONTENT_KEY_BYTES, WRAP_BYTES, X25519_KEY_BYTES } from './format.ts';
import { loadSodium, sodiumIfLoaded } from './sodium.ts';

/** An X25519 key pair that can open wraps: 32-byte public and secret keys. */
export interface ReaderKeypair {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
}

export type RandomBytes = (length: number) => Uint8Array;

export const defaultRandomBytes: RandomBytes = (length) => {
  const out = new Uint8Array(length);
  globalThis.crypto.getRandomValues(out);
  return out;
};

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

function edPoint(walletPubkey32: Uint8Array) {
  if (!(walletPubkey32 instanceof Uint8Array) || walletPubkey32.length !== 32) {
    throw new SealFormatError(`a wallet public key is 32 bytes, got ${walletPubkey32?.length}`);
  }
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(walletPubkey32);
  } catch {
    // Program-derived addresses are off the curve on purpose: they have no key.
    throw new SealFormatError(
      'the wallet address is not an ed25519 public key (off the curve), so nothing can be sealed to it',
    );
  }
  // Same refusals as libsodium: a small-order or mixed-order point would give
  // an X25519 key whose shared secrets are predictable.
  if (point.isSmallOrder() || !point.isTorsionFree()) {
    throw new SealFormatError('the wallet public key is a weak (small-order) point; refusing to seal to it');
  }
  return point;
}

// The curve checks cost about 2 ms in JavaScript (the subgroup check is a
// full scalar multiplication) and about 0.1 ms in libsodium's WebAssembly, and
// a busy recipient gets many messages: converted keys are kept (bounded;
// emptied when full), and libsodium does the conversion once it is loaded.
const CONVERTED_MAX = 10_000;
const converted = new Map<string, Uint8Array>();

/**
 * y < 2^255 - 19 (the sign bit aside). @noble/curves refuses other encodings
 * of y; libsodium's conversion reduces them, so they take the @noble path.
 */
function canonicalY(b: Uint8Array): boolean {
  if (((b[31] as number) & 0x7f) !== 0x7f) return true;
  for (let i = 30; i >= 1; i--) if (b[i] !== 0xff) return true;
  return (b[0] as number) < 0xed;
}

/** The X25519 public key that mail to a wallet without a MailboxKey is sealed to. */
export function walletEncryptionPublicKey(walletPubkey32: Uint8Array): Uint8Array {
  const key = walletPubkey32 instanceof Uint8Array ? walletPubkey32.join(',') : '';
  const hit = converted.get(key);
  if (hit) return hit.slice();
  let x: Uint8Array | undefined;
  const sodium = sodiumIfLoaded();
  if (
    sodium &&
    walletPubkey32 instanceof Uint8Array &&
    walletPubkey32.length === 32 &&
    canonicalY(walletPubkey32)
  ) {
    try {
      // The same refusals as edPoint: off the curve, small order, or outside the prime-order subgroup.
      x = sodium.crypto_sign_ed25519_pk_to_curve25519(walletPubkey32);
    } catch {
      // Refused: edPoint names the reason.
    }
  }
  if (!x) {
    edPoint(walletPubkey32);
    x = ed25519.utils.toMontgomery(walletPubkey32);
  }
  if (converted.size >= CONVERTED_MAX) converted.clear();
  converted.set(key, x.slice());
  return x;
}

/**
 * The X25519 key pair of a Solana keypair's 64-byte secret key (seed ‖
 * public key, the keypair-file layout). The halves must belong together.
 */
export function walletEncryptionKeypair(walletSecretKey64: Uint8Array): ReaderKeypair {
  if (!(walletSecretKey64 instanceof Uint8Array) || walletSecretKey64.length !== 64) {
    throw new SealFormatError(
      `a wallet secret key is 64 bytes (seed + public key), got ${walletSecretKey64?.length}`,
    );
  }
  const seed = walletSecretKey64.subarray(0, 32);
  const edPublic = walletSecretKey64.subarray(32, 64);
  if (!bytesEqual(ed25519.getPublicKey(seed), edPublic)) {
    throw new SealFormatError('the wallet secret key does not match its public half');
  }
  const secretKey = ed25519.utils.toMontgomerySecret(seed);
  return { publicKey: x25519.getPublicKey(secretKey), secretKey };
}

/** The key pair for a 32-byte X25519 secret key (its public key recomputed). */
export function readerKeypairFromSecret(secretKey32: Uint8Array): ReaderKeypair {
  if (!(secretKey32 instanceof Uint8Array) || secretKey32.length !== X25519_KEY_BYTES) {
    throw new SealFormatError(`an X25519 secret key is 32 bytes, got ${secretKey32?.length}`);
  }
  const secretKey = Uint8Array.from(secretKey32);
  return { publicKey: x25519.getPublicKey(secretKey), secretKey };
}

/** A fresh X25519 key pair: a delegated MailboxKey or an operator-kept reader key. */
export function generateReaderKeypair(random: RandomBytes = defaultRandomBytes): ReaderKeypair {
  return readerKeypairFromSecret(random(X25519_KEY_BYTES));
}

function checkReader(reader: ReaderKeypair): void {
  if (reader?.publicKey?.length !== X25519_KEY_BYTES || reader?.secretKey?.length !== X25519_KEY_BYTES) {
    throw new SealFormatError('a reader key pair is a 32-byte X25519 public key and a 32-byte secret key');
  }
}

/** crypto_box_seal of the content key to one reader: the 80-byte wrap. */
export async function wrapContentKey(
  contentKey: Uint8Array,
  readerPublicKey: Uint8Array,
): Promise<Uint8Array> {
  if (contentKey?.length !== CONTENT_KEY_BYTES) {
    throw new SealFormatError(`a content key is ${CONTENT_KEY_BYTES} bytes, got ${contentKey?.length}`);
  }
  if (readerPublicKey?.length !== X25519_KEY_BYTES) {
    throw new SealFormatError(
      `a reader public key is ${X25519_KEY_BYTES} bytes, got ${readerPublicKey?.length}`,
    );
  }
  const sodium = await loadSodium();
  try {
    return sodium.crypto_box_seal(contentKey, readerPublicKey);
  } catch {
    // libsodium refuses keys whose shared secret would be all zeros.
    throw new SealFormatError('the reader public key is not a usable X25519 key (small-order point)');
  }
}

/** The content key in a wrap, or null when the wrap is not for this reader (or is damaged). */
export async function unwrapContentKey(wrap: Uint8Array, reader: ReaderKeypair): Promise<Uint8Array | null> {
  checkReader(reader);
  if (wrap?.length !== WRAP_BYTES) {
    throw new SealFormatError(`a wrap is ${WRAP_BYTES} bytes, got ${wrap?.length}`);
  }
  const sodium = await loadSodium();
  let key: Uint8Array;
  try {
    key = sodium.crypto_box_seal_open(wrap, reader.publicKey, reader.secretKey);
  } catch {
    return null;
  }
  return key.length === CONTENT_KEY_BYTES ? key : null;
}
