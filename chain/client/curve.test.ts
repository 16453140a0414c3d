import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { findProgramAddress, isOnCurve } from './curve.ts';
import { DEFAULT_PROGRAM_ID } from './program-id.ts';

const P = 2n ** 255n - 19n;

/** The runtime's rule through @noble/curves: decompress, any y below 2^255 (taken mod p), sign bit ignored for x = 0. */
function decompresses(bytes: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(bytes, true);
    return true;
  } catch {
    return false;
  }
}

function encodeY(y: bigint, signBit: boolean): Uint8Array {
  const out = new Uint8Array(32);
  let v = y;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  if (signBit) out[31] = (out[31] as number) | 0x80;
  return out;
}

describe('isOnCurve', () => {
  it('agrees with a full decompression on random bytes, about half of them on the curve', () => {
    let on = 0;
    for (let i = 0; i < 20_000; i++) {
      const b = new Uint8Array(randomBytes(32));
      const expected = decompresses(b);
      if (isOnCurve(b) !== expected) throw new Error(`disagrees on ${Buffer.from(b).toString('hex')}`);
      if (expected) on++;
    }
    expect(on).toBeGreaterThan(9_000);
    expect(on).toBeLessThan(11_000);
  });

  it('agrees on the edge encodings: y of 0, ±1, ±2, every y from p up (not canonical), both sign bits', () => {
    const ys = [0n, 1n, 2n, P - 1n, P - 2n];
    for (let y = P; y < 2n ** 255n; y++) ys.push(y);
    for (const y of ys)
      for (const sign of [false, true]) {
        const b = encodeY(y, sign);
        expect(isOnCurve(b), `y = p + ${y - P}, sign ${sign}`).toBe(decompresses(b));
      }
    // y = ±1 (x = 0) are points whatever the sign bit, as the runtime decompresses them.
    expect(isOnCurve(encodeY(1n, true))).toBe(true);
    expect(isOnCurve(encodeY(P - 1n, true))).toBe(true);
  });

  it('finds real public keys and the small-order points on the curve', () => {
    for (let i = 0; i < 200; i++) expect(isOnCurve(Keypair.generate().publicKey.toBytes())).toBe(true);
    // Small-order points (order 1, 2, 4, 8) are points too, which a prime-order subgroup check would deny.
    for (const hex of [
      '0100000000000000000000000000000000000000000000000000000000000000',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      '0000000000000000000000000000000000000000000000000000000000000000',
      '0000000000000000000000000000000000000000000000000000000000000080',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
      '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    ]) {
      const b = Uint8Array.from(Buffer.from(hex, 'hex'));
      expect(decompresses(b), hex).toBe(true);
      expect(isOnCurve(b), hex).toBe(true);
    }
  });

  it('refuses a length other than 32', () => {
    expect(() => isOnCurve(new Uint8Array(31))).toThrow(TypeError);
  });
});

describe('findProgramAddress', () => {
  const programId = new PublicKey(DEFAULT_PROGRAM_ID);

  it('gives the address and bump web3.js gives, for random seed lists', () => {
    for (let i = 0; i < 1_500; i++) {
      const seeds = Array.from(
        { length: i % 5 },
        (_, j) => new Uint8Array(randomBytes((i * 7 + j * 13) % 33)),
      );
      const program = i % 3 === 0 ? Keypair.generate().publicKey : programId;
      const [ours, bump] = findProgramAddress(seeds, program);
      const [theirs, theirBump] = PublicKey.findProgramAddressSync(seeds, program);
      if (!ours.equals(theirs) || bump !== theirBump)
        throw new Error(`differs for seeds ${seeds.map((s) => Buffer.from(s).toString('hex')).join(',')}`);
    }
  });

  it('refuses a seed longer than 32 bytes, as web3.js does', () => {
    expect(() => findProgramAddress([new Uint8Array(33)], programId)).toThrow(TypeError);
    expect(() => PublicKey.findProgramAddressSync([new Uint8Array(33)], programId)).toThrow(TypeError);
  });
});
