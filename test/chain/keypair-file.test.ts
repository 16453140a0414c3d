import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair as Web3Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import {
  FileExistsError,
  generateKeypair,
  KeypairFileError,
  keypairFromSeed,
  readKeypairFile,
  writeKeypairFile,
} from '../../src/core/keys/keypair-file.ts';
import { tempDir } from '../support/temp-dir.ts';

function fileWith(content: string): string {
  const path = join(tempDir(), 'key.json');
  writeFileSync(path, content);
  return path;
}

describe('keypair files', () => {
  it('writes the Solana CLI format with mode 0600 and reads it back', () => {
    const path = join(tempDir(), 'sub', 'wallet.json');
    const kp = generateKeypair();
    writeKeypairFile(path, kp);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^\[(\d{1,3},){63}\d{1,3}\]$/);
    const back = readKeypairFile(path);
    expect(back).toEqual(kp);
    expect(back.address).toBe(bs58.encode(kp.publicKey));
    expect(back.secretKey).toHaveLength(64);
    // The seed signs: a signature verifies under the public half.
    const msg = new TextEncoder().encode('hello');
    expect(ed25519.verify(ed25519.sign(msg, back.secretKey.subarray(0, 32)), msg, back.publicKey)).toBe(true);
  });

  it('is interchangeable with @solana/web3.js keypairs', () => {
    const web3 = Web3Keypair.generate();
    const path = fileWith(JSON.stringify(Array.from(web3.secretKey)));
    expect(readKeypairFile(path).address).toBe(web3.publicKey.toBase58());
    const ours = generateKeypair();
    expect(Web3Keypair.fromSecretKey(ours.secretKey).publicKey.toBase58()).toBe(ours.address);
  });

  it('refuses to overwrite unless forced', () => {
    const path = join(tempDir(), 'w.json');
    const first = generateKeypair();
    writeKeypairFile(path, first);
    expect(() => writeKeypairFile(path, generateKeypair())).toThrow(FileExistsError);
    expect(readKeypairFile(path).address).toBe(first.address);
    const second = generateKeypair();
    writeKeypairFile(path, second, { force: true });
    expect(readKeypairFile(path).address).toBe(second.address);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('explains every kind of bad file', () => {
    const missing = join(tempDir(), 'missing.json');
    expect(() => readKeypairFile(missing)).toThrow(`keypair file ${missing}: file not found`);
    expect(() => readKeypairFile(fileWith('{nope'))).toThrow(/not JSON/);
    expect(() => readKeypairFile(fileWith('{"a":1}'))).toThrow(/expected a JSON array of 64 numbers/);
    expect(() => readKeypairFile(fileWith(JSON.stringify(new Array(32).fill(1))))).toThrow(
      /expected 64 numbers \(32-byte seed \+ 32-byte public key\), found 32/,
    );
    const kp = Array.from(generateKeypair().secretKey);
    for (const [bad, shown] of [
      [256, '256'],
      [-1, '-1'],
      [1.5, '1.5'],
      ['7', '"7"'],
    ] as const) {
      const arr: unknown[] = [...kp];
      arr[5] = bad;
      expect(() => readKeypairFile(fileWith(JSON.stringify(arr)))).toThrow(
        `element 5 is ${shown}; expected an integer 0-255`,
      );
    }
    const other = generateKeypair();
    const mixed = [...kp.slice(0, 32), ...Array.from(other.publicKey)];
    expect(() => readKeypairFile(fileWith(JSON.stringify(mixed)))).toThrow(
      `does not belong to the seed (which gives ${keypairFromSeed(Uint8Array.from(kp.slice(0, 32))).address})`,
    );
    expect(() => readKeypairFile(fileWith('[]'))).toThrow(KeypairFileError);
  });
});
