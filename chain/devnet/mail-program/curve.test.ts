import { sha256 } from '@noble/hashes/sha2.js';
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROGRAM_ID } from '../../program-id.ts';
import { createProgramAddress, findProgramAddress, isOnCurve } from './curve.ts';

const web3OnCurve = (b: Uint8Array) => PublicKey.isOnCurve(b);

function le(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

describe('fast on-curve test', () => {
  it('agrees with web3.js on random hashes and real keys', () => {
    for (let i = 0; i < 3000; i++) {
      const h = sha256(Uint8Array.of(i & 0xff, i >> 8, 42));
      expect(isOnCurve(h)).toBe(web3OnCurve(h));
    }
    for (let i = 0; i < 50; i++) expect(isOnCurve(Keypair.generate().publicKey.toBytes())).toBe(true);
  });

  it('agrees on the edge cases: non-canonical y, x = 0 with either sign', () => {
    const p = (1n << 255n) - 19n;
    const cases = [le(p), le(p + 1n), le(p + 18n), le(1n), le(p - 1n), le(0n), le(2n)];
    const signed = cases.map((c) => {
      const s = c.slice();
      s[31] = (s[31] as number) | 0x80;
      return s;
    });
    for (const c of [...cases, ...signed]) expect(isOnCurve(c)).toBe(web3OnCurve(c));
  });

  it('derives the same program addresses as web3.js', () => {
    const programId = new PublicKey(DEFAULT_PROGRAM_ID);
    for (let i = 0; i < 200; i++) {
      const seeds = [
        new TextEncoder().encode('email'),
        Keypair.generate().publicKey.toBytes(),
        Uint8Array.of(i),
      ];
      const [pk, bump] = PublicKey.findProgramAddressSync(seeds, programId);
      const [raw, ourBump] = findProgramAddress(seeds, programId.toBytes());
      expect([new PublicKey(raw).toBase58(), ourBump]).toEqual([pk.toBase58(), bump]);
      expect(createProgramAddress(seeds, bump, programId.toBytes())).toEqual(raw);
    }
  });
});
