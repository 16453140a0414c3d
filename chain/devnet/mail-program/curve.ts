// Program-address derivation without web3.js's on-curve test, which costs
// ~0.1 ms per candidate (a full square root). Whether a candidate is an
// ed25519 point only needs to know whether x² = (y² − 1)/(d·y² + 1) has a root,
// which the Jacobi symbol answers ~5× faster. Same rules as web3.js 1.x
// (noble's RFC 8032 decoding): y must be canonical (< p), and x = 0 with
// the sign bit set is not a point. Tests compare it with web3.js.
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8 } from '../../bytes.ts';

const P = (1n << 255n) - 19n;
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
const PDA_MARKER = utf8('ProgramDerivedAddress');

function jacobi(a: bigint, n: bigint): number {
  let t = 1;
  let x = a % n;
  let m = n;
  while (x !== 0n) {
    while ((x & 1n) === 0n) {
      x >>= 1n;
      const r = m & 7n;
      if (r === 3n || r === 5n) t = -t;
    }
    const swap = x;
    x = m;
    m = swap;
    if ((x & 3n) === 3n && (m & 3n) === 3n) t = -t;
    x %= m;
  }
  return m === 1n ? t : 0;
}

/** True when 32 bytes decode as an ed25519 point (so they cannot be a program address). */
export function isOnCurve(bytes: Uint8Array): boolean {
  if (bytes.length !== 32) return false;
  let y = 0n;
  for (let i = 31; i >= 0; i--)
    y = (y << 8n) | BigInt(i === 31 ? (bytes[i] as number) & 0x7f : (bytes[i] as number));
  if (y >= P) return false;
  const y2 = (y * y) % P;
  const u = (y2 + P - 1n) % P;
  if (u === 0n) return ((bytes[31] as number) & 0x80) === 0;
  const v = (D * y2 + 1n) % P;
  return jacobi((u * v) % P, P) === 1;
}

/** sha256(seeds ‖ bump ‖ program id ‖ "ProgramDerivedAddress"), or null when that lands on the curve. */
export function createProgramAddress(
  seeds: Uint8Array[],
  bump: number,
  programId: Uint8Array,
): Uint8Array | null {
  let len = 1 + programId.length + PDA_MARKER.length;
  for (const s of seeds) len += s.length;
  const buf = new Uint8Array(len);
  let at = 0;
  for (const s of seeds) {
    buf.set(s, at);
    at += s.length;
  }
  buf[at++] = bump;
  buf.set(programId, at);
  buf.set(PDA_MARKER, at + programId.length);
  const hash = sha256(buf);
  return isOnCurve(hash) ? null : hash;
}

/** The first bump from 255 down to 1 giving a program address (web3.js findProgramAddressSync). */
export function findProgramAddress(seeds: Uint8Array[], programId: Uint8Array): [Uint8Array, number] {
  for (let bump = 255; bump > 0; bump--) {
    const address = createProgramAddress(seeds, bump, programId);
    if (address) return [address, bump];
  }
  throw new Error('no viable program address bump');
}
