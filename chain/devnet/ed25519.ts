// The faucet's ed25519 key through node:crypto: raw 32-byte seeds are wrapped
// in the fixed DER prefix OpenSSL expects. (Transaction signatures are
// verified by the runtime.)
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

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
