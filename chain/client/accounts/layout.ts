// A field list drives everything about one borsh struct: the borsh schema,
// range checks on encode, exact-length and canonical-form checks on decode,
// and the byte offsets of the fixed fields (for memcmp filters). Object key
// order is the wire order.
import { PublicKey } from '@solana/web3.js';
import { deserialize, type Schema, serialize } from 'borsh';
import { type FieldType, fixedSizeOf } from '../../protocol/schema.ts';
import { I64_MAX, I64_MIN, U64_MAX } from '../bytes.ts';

export type { FieldType, ScalarType } from '../../protocol/schema.ts';

/** Which field type may describe a TS value type (keys are PublicKey, hashes Uint8Array, u64/i64 bigint). */
type FieldTypeFor<V> = [V] extends [PublicKey]
  ? 'key'
  : [V] extends [Uint8Array]
    ? 'hash' | { bytes: number }
    : [V] extends [bigint]
      ? 'u64' | 'i64'
      : [V] extends [number]
        ? 'u8'
        : [V] extends [boolean]
          ? 'bool'
          : [V] extends [string]
            ? 'string'
            : [V] extends [bigint | null]
              ? { option: 'u64' }
              : [V] extends [boolean | null]
                ? { option: 'bool' }
                : [V] extends [PublicKey | null]
                  ? { option: 'key' }
                  : [V] extends [Uint8Array | null]
                    ? { option: 'hash' }
                    : never;

export type Fields<T> = { [K in keyof T]-?: FieldTypeFor<T[K]> };

/** Thrown when bytes do not decode as the expected account or instruction. */
export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecodeError';
  }
}

/** What an encoder accepts: the decoded shape, `kind` optional. */
export type Input<T extends { kind: string }> = Omit<T, 'kind'> & { kind?: T['kind'] };

export interface Layout<T extends { kind: string }> {
  readonly kind: T['kind'];
  readonly tag: number;
  /** Field types in wire order. */
  readonly fields: Readonly<Record<Exclude<keyof T, 'kind'>, FieldType>>;
  /** Byte offset of every field that sits at a fixed position (tag at 0). */
  readonly offsets: { readonly [K in Exclude<keyof T, 'kind'>]: number };
  /** Bytes up to the first variable-size field (the whole size when all are fixed). */
  readonly fixedSize: number;
  /** True when every field has a fixed size. */
  readonly isFixed: boolean;
  /** Upper bounds of bounded u8 fields (enumerations), by field. */
  readonly max?: Readonly<Record<string, number>>;
  encode(value: Input<T>): Uint8Array;
  decode(bytes: Uint8Array): T;
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true });

function borshType(t: FieldType): Schema {
  if (typeof t === 'object') {
    if ('bytes' in t) return { array: { type: 'u8', len: t.bytes } };
    return { option: borshType(t.option) };
  }
  if (t === 'key' || t === 'hash') return { array: { type: 'u8', len: 32 } };
  return t;
}

function checkValue(name: string, field: string, t: FieldType, v: unknown): unknown {
  const where = `${name}.${field}`;
  if (typeof t === 'object' && 'option' in t) {
    if (v === null || v === undefined) return null;
    return checkValue(name, field, t.option, v);
  }
  const len = typeof t === 'object' ? t.bytes : t === 'key' || t === 'hash' ? 32 : 0;
  switch (typeof t === 'object' ? 'bytes' : t) {
    case 'u8':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255)
        throw new RangeError(`${where}: not a u8`);
      return v;
    case 'u64':
      if (typeof v !== 'bigint' || v < 0n || v > U64_MAX) throw new RangeError(`${where}: not a u64 bigint`);
      return v;
    case 'i64':
      if (typeof v !== 'bigint' || v < I64_MIN || v > I64_MAX)
        throw new RangeError(`${where}: not an i64 bigint`);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw new TypeError(`${where}: not a boolean`);
      return v;
    case 'string':
      if (typeof v !== 'string') throw new TypeError(`${where}: not a string`);
      return v;
    case 'key':
      if (!(v instanceof PublicKey)) throw new TypeError(`${where}: not a PublicKey`);
      return v.toBytes();
    default:
      if (!(v instanceof Uint8Array) || v.length !== len) throw new TypeError(`${where}: not ${len} bytes`);
      return v;
  }
}

function fromBorsh(t: FieldType, v: unknown): unknown {
  if (v === null) return null;
  if (typeof t === 'object' && 'option' in t) return fromBorsh(t.option, v);
  if (t === 'key') return new PublicKey(v as number[]);
  if (t === 'hash' || (typeof t === 'object' && 'bytes' in t)) return Uint8Array.from(v as number[]);
  return v;
}

/**
 * Walks the raw bytes once: checks bools and option flags are 0/1, strings
 * are valid UTF-8 and nothing is missing or left over. borsh itself accepts
 * non-canonical input and ignores trailing bytes.
 */
function checkShape(name: string, types: FieldType[], bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 1;
  const need = (n: number, what: string) => {
    if (at + n > bytes.length)
      throw new DecodeError(`${name}: data too short (${bytes.length} bytes, ${what})`);
  };
  for (const t of types) {
    let inner: FieldType = t;
    if (typeof t === 'object' && 'option' in t) {
      need(1, 'option flag');
      const flag = bytes[at++];
      if (flag === 0) continue;
      if (flag !== 1) throw new DecodeError(`${name}: invalid option flag ${flag} at byte ${at - 1}`);
      inner = t.option;
    }
    const size = fixedSizeOf(inner);
    if (size !== null) {
      need(size, 'fixed field');
      if (inner === 'bool' && (bytes[at] as number) > 1)
        throw new DecodeError(`${name}: invalid bool at byte ${at}`);
      at += size;
      continue;
    }
    need(4, 'string length');
    const len = view.getUint32(at, true);
    at += 4;
    need(len, 'string bytes');
    try {
      utf8Strict.decode(bytes.subarray(at, at + len));
    } catch {
      throw new DecodeError(`${name}: string at byte ${at} is not valid UTF-8`);
    }
    at += len;
  }
  if (at !== bytes.length) {
    throw new DecodeError(`${name}: ${bytes.length - at} trailing bytes after ${at} bytes of data`);
  }
}

export function defineLayout<T extends { kind: string }>(
  kind: T['kind'],
  tag: number,
  fields: Fields<Omit<T, 'kind'>>,
): Layout<T> {
  const name = kind;
  const entries = Object.entries(fields) as [Exclude<keyof T, 'kind'> & string, FieldType][];
  const types = entries.map(([, t]) => t);
  const struct: Record<string, Schema> = { tag: 'u8' };
  for (const [k, t] of entries) struct[k] = borshType(t);
  const schema: Schema = { struct };
  const offsets = {} as Record<Exclude<keyof T, 'kind'>, number>;
  let at = 1;
  let fixed = true;
  for (const [k, t] of entries) {
    const size = fixedSizeOf(t);
    if (fixed) offsets[k] = at;
    if (size === null) fixed = false;
    else if (fixed) at += size;
  }
  // Empty structs still validate here once, so encode/decode can skip borsh's per-call schema walk.
  serialize(schema, { tag, ...Object.fromEntries(entries.map(([k, t]) => [k, sample(t)])) }, true);
  return {
    kind,
    tag,
    fields: fields as Record<Exclude<keyof T, 'kind'>, FieldType>,
    offsets,
    fixedSize: at,
    isFixed: fixed,
    encode(value: Input<T>): Uint8Array {
      const v = value as Record<string, unknown>;
      const plain: Record<string, unknown> = { tag };
      for (const [k, t] of entries) plain[k] = checkValue(name, k, t, v[k]);
      return serialize(schema, plain, false);
    },
    decode(bytes: Uint8Array): T {
      if (bytes.length < 1) throw new DecodeError(`${name}: empty data`);
      if (bytes[0] !== tag) throw new DecodeError(`${name}: wrong tag ${bytes[0]} (expected ${tag})`);
      checkShape(name, types, bytes);
      const raw = deserialize(schema, bytes, false) as Record<string, unknown>;
      const out: Record<string, unknown> = { kind };
      for (const [k, t] of entries) out[k] = fromBorsh(t, raw[k]);
      return out as T;
    },
  };
}

function sample(t: FieldType): unknown {
  if (typeof t === 'object') return 'bytes' in t ? new Uint8Array(t.bytes) : null;
  switch (t) {
    case 'u8':
      return 0;
    case 'u64':
    case 'i64':
      return 0n;
    case 'bool':
      return false;
    case 'string':
      return '';
    default:
      return new Uint8Array(32);
  }
}

/** The layout of one schema entry (an account or an instruction's arguments): its tag and field types in order. */
export function schemaLayout<T extends { kind: string }>(
  kind: T['kind'],
  spec: { readonly tag: number; readonly fields?: object; readonly args?: object },
): Layout<T> {
  const fields = (spec.fields ?? spec.args ?? {}) as Record<
    string,
    { readonly type: FieldType; readonly max?: number }
  >;
  const types = Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, f.type]));
  const layout = defineLayout<T>(kind, spec.tag, types as Fields<Omit<T, 'kind'>>);
  // A bounded u8 (an enumeration such as ListAlias's mode): the program refuses a larger value, so do the codecs.
  const bounded = Object.entries(fields).filter(([, f]) => f.max !== undefined) as [
    string,
    { max: number },
  ][];
  if (bounded.length === 0) return layout;
  const check = (value: object): void => {
    for (const [name, { max }] of bounded) {
      const v = (value as Record<string, unknown>)[name];
      if (typeof v === 'number' && v > max) throw new DecodeError(`${kind}.${name}: ${v} is above ${max}`);
    }
  };
  return {
    ...layout,
    max: Object.fromEntries(bounded.map(([name, { max }]) => [name, max])),
    encode(value) {
      check(value);
      return layout.encode(value);
    },
    decode(bytes) {
      const value = layout.decode(bytes);
      check(value);
      return value;
    },
  };
}
