// base58 is quadratic-time; the same few hundred keys (fee payers, programs,
// PDAs) appear in transaction after transaction, so their text forms are
// memoized. Bounded crudely: the maps are dropped when they grow too large.
import bs58 from 'bs58';

const LIMIT = 100_000;
const encoded = new Map<string, string>();
const valid = new Set<string>();

/** base58 of a 32-byte key. */
export function encodeKey(bytes: Uint8Array): string {
  const id = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let text = encoded.get(id);
  if (text === undefined) {
    text = bs58.encode(bytes);
    if (encoded.size >= LIMIT) encoded.clear();
    encoded.set(id, text);
  }
  return text;
}

/** True when `text` is base58 for exactly 32 bytes. */
export function isKeyText(text: string): boolean {
  if (valid.has(text)) return true;
  let ok = false;
  try {
    ok = text.length <= 44 && bs58.decode(text).length === 32;
  } catch {}
  if (ok) {
    if (valid.size >= LIMIT) valid.clear();
    valid.add(text);
  }
  return ok;
}
