// Program-address search without web3.js's curve check. A program address
// must not be an Ed25519 point, and Solana's test for that is whether the 32
// bytes decompress (curve25519-dalek's CompressedEdwardsY::decompress; the
// sign bit ignored, y taken modulo p even when not canonical). web3.js asks
// @noble/curves to decompress the point, a square root in BigInt arithmetic
// (about 85 µs here), and the pipeline derives two new addresses per message
// (the Email and, for a new sender, its Frombox), each trying about two bumps.
//
// Decompression succeeds exactly when x² = u / v has a solution, with
// u = y² − 1 and v = d·y² + 1 (v is never 0: −1/d is not a square), i.e.
// when u·v is 0 or a square modulo p. The Jacobi symbol answers that with a
// GCD-like loop instead of an exponentiation: about 17 µs, the same answer
// (chain/client/curve.test.ts holds it to @noble/curves on random and edge inputs,
// and the addresses to web3.js's).
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { PublicKey } from '@solana/web3.js';

const P = 2n ** 255n - 19n;
/** Edwards d = −121665/121666 mod p. */
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
const LOW_255 = (1n << 255n) - 1n;
const U32 = 0xffffffffn;

/** The Jacobi symbol (a/n) for odd n > 0: 1, −1, or 0 when they share a factor. */
function jacobi(a: bigint, n: bigint): number {
  let t = 1;
  a %= n;
  while (a !== 0n) {
    // Factors of two: (2/n) is −1 when n ≡ 3 or 5 (mod 8).
    let low = Number(a & U32);
    while (low === 0) {
      a >>= 32n;
      low = Number(a & U32);
    }
    const twos = 31 - Math.clz32(low & -low);
    if (twos > 0) {
      a >>= BigInt(twos);
      const r = Number(n & 7n);
      if ((twos & 1) === 1 && (r === 3 || r === 5)) t = -t;
    }
    // Reciprocity: swapping flips the sign when both are 3 mod 4.
    const m = n;
    n = a;
    a = m;
    if ((Number(a & 3n) & Number(n & 3n)) === 3) t = -t;
    a %= n;
  }
  return n === 1n ? t : 0;
}

/** Whether 32 bytes decompress to an Ed25519 point (Solana's test for a key that is not a program address). */
export function isOnCurve(bytes: Uint8Array): boolean {
  if (bytes.length !== 32) throw new TypeError('a curve point is 32 bytes');
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(bytes[i] as number);
  y = (y & LOW_255) % P;
  const y2 = (y * y) % P;
  const uv = (((y2 - 1n + P) % P) * ((D * y2 + 1n) % P)) % P;
  return uv === 0n || jacobi(uv, P) === 1;
}

const MAX_SEED_LENGTH = 32;
const MARKER = new TextEncoder().encode('ProgramDerivedAddress');

/**
 * PublicKey.findProgramAddressSync, with the curve check above: the first
 * bump from 255 down to 1 whose sha256(seeds ‖ bump ‖ program ‖ marker) is
 * off the curve. A seed longer than 32 bytes is a TypeError, as there.
 */
export function findProgramAddress(seeds: Uint8Array[], programId: PublicKey): [PublicKey, number] {
  let bumpAt = 0;
  for (const seed of seeds) {
    if (seed.length > MAX_SEED_LENGTH) throw new TypeError('Max seed length exceeded');
    bumpAt += seed.length;
  }
  const input = concatBytes(...seeds, Uint8Array.of(0), programId.toBytes(), MARKER);
  for (let bump = 255; bump > 0; bump--) {
    input[bumpAt] = bump;
    const hash = sha256(input);
    if (!isOnCurve(hash)) return [new PublicKey(hash), bump];
  }
  throw new Error('Unable to find a viable program address nonce');
}
