// Small byte helpers shared by the codecs, the PDA seeds and the builders.
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

/**
 * Remembers computed values by key in a map of at most `max` entries,
 * emptied when it fills: for derivations asked for again and again (the
 * same addresses, names and PDAs for every message) whose results are
 * never changed by their callers.
 */
export class Remembered<V> {
  private readonly map = new Map<string, V>();

  constructor(private readonly max: number) {}

  get(key: string, compute: () => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) return hit;
    const value = compute();
    if (this.map.size >= this.max) this.map.clear();
    this.map.set(key, value);
    return value;
  }
}

// The same few addresses (the program, the authority, recipients) are given
// as base58 text over and over (a PDA derivation or instruction per
// message): their decoded keys are kept (PublicKey is immutable).
const decoded = new Remembered<PublicKey>(20_000);

export function toPublicKey(k: Key): PublicKey {
  return typeof k === 'string' ? decoded.get(k, () => new PublicKey(k)) : k;
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
