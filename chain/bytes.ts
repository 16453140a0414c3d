// Small byte helpers shared by the codecs, PDA seeds and the devnet program.
// Browser-safe: Uint8Array only, no Buffer.
import { PublicKey } from '@solana/web3.js';

/** A wallet or account address given as a web3.js key or its base58 text. */
export type Key = PublicKey | string;

export const U64_MAX = (1n << 64n) - 1n;
export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;

/** The "none" key (32 zero bytes), e.g. `Mailbox.domain` without a domain. */
export const ZERO_KEY: PublicKey = PublicKey.default;

export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';

const encoder = new TextEncoder();

export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

// The same few addresses (the program, the authority, recipients) are given
// as base58 text over and over (a PDA derivation or instruction per
// message): their decoded keys are kept (PublicKey is immutable), in a
// bounded map emptied when it fills.
const DECODED_MAX = 20_000;
const decoded = new Map<string, PublicKey>();

export function toPublicKey(k: Key): PublicKey {
  if (typeof k !== 'string') return k;
  const hit = decoded.get(k);
  if (hit) return hit;
  const key = new PublicKey(k);
  if (decoded.size >= DECODED_MAX) decoded.clear();
  decoded.set(k, key);
  return key;
}

export function toBase58(k: Key): string {
  return typeof k === 'string' ? k : k.toBase58();
}

/** A key as a plain Uint8Array (web3.js hands out Buffers, which must not leak into our shapes). */
export function keyBytes(k: Key): Uint8Array {
  return new Uint8Array(toPublicKey(k).toBytes());
}

export function u64Le(n: bigint): Uint8Array {
  if (n < 0n || n > U64_MAX) throw new RangeError(`u64 out of range: ${n}`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, n, true);
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function isZeroBytes(a: Uint8Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== 0) return false;
  return true;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(a: Uint8Array): string {
  let s = '';
  for (let i = 0; i < a.length; i++) s += HEX[a[i] as number];
  return s;
}
