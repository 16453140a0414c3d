// getProgramAccounts / programSubscribe filters: memcmp (base58 or base64
// bytes at an offset) and dataSize, at most four, all of which must match.
import bs58 from 'bs58';
import type { AccountState } from './account-store.ts';
import { invalidParam, invalidParams, rpcInvalid } from './rpc-errors.ts';
import { type Config, decodeBase64Strict, integer } from './rpc-params.ts';

const MAX_FILTERS = 4;
const MAX_MEMCMP_BYTES = 128;

export type Filter = { dataSize: number } | { memcmp: { offset: number; bytes: Uint8Array } };

function parseMemcmp(raw: unknown): { offset: number; bytes: Uint8Array } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalidParams('memcmp: expected an object');
  const m = raw as Config;
  const offset = integer(m.offset, 'memcmp.offset');
  if (typeof m.bytes !== 'string') throw invalidParams('memcmp.bytes: expected a string');
  const encoding = m.encoding ?? 'base58';
  let bytes: Uint8Array | null = null;
  if (encoding === 'base58') {
    if (m.bytes.length > 175) throw invalidParam('base58 encoded bytes too large');
    try {
      bytes = bs58.decode(m.bytes);
    } catch {
      throw invalidParam('invalid base58 in memcmp.bytes');
    }
  } else if (encoding === 'base64') {
    bytes = decodeBase64Strict(m.bytes);
    if (!bytes) throw invalidParam('invalid base64 in memcmp.bytes');
  } else {
    throw invalidParams(`memcmp.encoding: expected base58 or base64, got ${JSON.stringify(encoding)}`);
  }
  if (bytes.length > MAX_MEMCMP_BYTES) throw invalidParam('memcmp bytes too large');
  return { offset, bytes };
}

export function parseFilters(raw: unknown): Filter[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalidParams('filters: expected an array');
  if (raw.length > MAX_FILTERS) throw rpcInvalid(`Too many filters provided; max ${MAX_FILTERS}`);
  return raw.map((f): Filter => {
    if (typeof f !== 'object' || f === null || Array.isArray(f))
      throw invalidParams('filter: expected an object');
    const keys = Object.keys(f);
    if (keys.length === 1 && keys[0] === 'dataSize')
      return { dataSize: integer((f as Config).dataSize, 'dataSize') };
    if (keys.length === 1 && keys[0] === 'memcmp') return { memcmp: parseMemcmp((f as Config).memcmp) };
    throw invalidParams(`unsupported filter ${JSON.stringify(f)} (devnet supports memcmp and dataSize)`);
  });
}

export function filterProgramAccount(state: AccountState, filters: Filter[]): boolean {
  for (const f of filters) {
    if ('dataSize' in f) {
      if (state.data.length !== f.dataSize) return false;
      continue;
    }
    const { offset, bytes } = f.memcmp;
    if (offset + bytes.length > state.data.length) return false;
    for (let i = 0; i < bytes.length; i++) if (state.data[offset + i] !== bytes[i]) return false;
  }
  return true;
}
