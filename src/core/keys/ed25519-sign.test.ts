import { ed25519 } from '@noble/curves/ed25519.js';
import { describe, expect, it } from 'vitest';
import { KeypairMismatchError, signDetached } from './ed25519-sign.ts';
import { generateKeypair } from './keypair-file.ts';

describe('signDetached', () => {
  const message = new TextEncoder().encode('SendMail batch');

  it('signs with the keypair, again and again, verifiable by an independent implementation', () => {
    const key = generateKeypair();
    for (let i = 0; i < 3; i++) {
      const signature = signDetached(key, message);
      expect(ed25519.verify(signature, message, key.publicKey)).toBe(true);
    }
  });

  it('signs with the key bytes the keypair holds now, not with those of an earlier call', () => {
    const key = generateKeypair();
    const other = generateKeypair();
    signDetached(key, message);
    key.secretKey.set(other.secretKey);
    key.publicKey.set(other.publicKey);
    const signature = signDetached(key, message);
    expect(ed25519.verify(signature, message, other.publicKey)).toBe(true);
  });

  it('refuses a keypair whose halves disagree, also after it signed while they agreed', () => {
    const key = generateKeypair();
    signDetached(key, message);
    key.publicKey.set(generateKeypair().publicKey);
    expect(() => signDetached(key, message)).toThrow(KeypairMismatchError);
  });
});
