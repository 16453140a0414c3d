// Deterministic sample values for every field type, so tests can round-trip
// each account and instruction layout from its field list alone.
import { PublicKey } from '@solana/web3.js';
import type { FieldType, Layout } from './accounts/layout.ts';

function bytes(n: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (seed * 31 + i * 7 + 1) & 0xff);
}

export function sampleValue(t: FieldType, seed: number): unknown {
  if (typeof t === 'object') {
    if ('bytes' in t) return bytes(t.bytes, seed);
    return seed % 2 === 0 ? null : sampleValue(t.option, seed);
  }
  switch (t) {
    case 'u8':
      return (seed * 13) & 0xff;
    case 'u64':
      return (1n << 63n) + BigInt(seed) * 1_000_003n;
    case 'i64':
      return seed % 2 === 0 ? -BigInt(seed) * 7n - 1n : BigInt(seed) * 1_700_000_000n;
    case 'bool':
      return seed % 2 === 1;
    case 'key':
      return new PublicKey(bytes(32, seed));
    case 'hash':
      return bytes(32, seed + 100);
    case 'string':
      return seed % 3 === 0 ? 'bafkreia\u00e9\u{1F4EC}' : `cid-${seed}`;
  }
}

/** A value of `layout`'s kind with every field set; `seed` varies it (odd seeds fill options). */
export function sampleOf<T extends { kind: string }>(layout: Layout<T>, seed = 1): T {
  const out: Record<string, unknown> = { kind: layout.kind };
  let i = seed;
  for (const [k, t] of Object.entries(layout.fields) as [string, FieldType][]) {
    const v = sampleValue(t, i++);
    const max = layout.max?.[k];
    out[k] = max !== undefined && typeof v === 'number' ? v % (max + 1) : v;
  }
  return out as T;
}
