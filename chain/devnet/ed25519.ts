// ed25519 through node:crypto (native, far faster than pure JS for the
// signature checks every transaction needs). Raw 32-byte keys are wrapped in
// the fixed DER prefixes OpenSSL expects; public KeyObjects are cached because
// the same fee payers sign over and over.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const CACHE_LIMIT = 50_000;

const publicKeys = new Map<string, KeyObject | null>();

function publicKeyObject(key: Uint8Array): KeyObject | null {
  const id = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
  let obj = publicKeys.get(id);
  if (obj === undefined) {
    try {
      obj = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, key]), format: 'der', type: 'spki' });
    } catch {
      obj = null;
    }
    // A crude bound: dropping the whole cache now and then is cheaper than LRU bookkeeping.
    if (publicKeys.size >= CACHE_LIMIT) publicKeys.clear();
    publicKeys.set(id, obj);
  }
  return obj;
}

export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const keyObject = publicKeyObject(publicKey);
  if (!keyObject) return false;
  try {
    return verify(null, message, keyObject, signature);
  } catch {
    return false;
  }
}

export interface Ed25519Signer {
  publicKey: Uint8Array;
  /** The 32-byte seed (Solana keypair files hold seed ‖ public key). */
  seed: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

export function signerFromSeed(seed: Uint8Array): Ed25519Signer {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  return {
    publicKey,
    seed: new Uint8Array(seed),
    sign: (message) => new Uint8Array(sign(null, message, privateKey)),
  };
}

export function generateSigner(): Ed25519Signer {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  return signerFromSeed(new Uint8Array(pkcs8.subarray(pkcs8.length - 32)));
}

/** True when the 32 bytes decode to a curve point, i.e. could be a wallet rather than a PDA. */
export function isOnCurve(key: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(key);
    return true;
  } catch {
    return false;
  }
}
