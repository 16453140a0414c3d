// TypeScript shapes of the schema's accounts and instruction arguments
// (./schema.ts), derived so they are never written out a second time: keys
// are web3.js PublicKeys, hashes and byte arrays Uint8Arrays, u64/i64
// bigints, u8 numbers, options `null` when absent. Each carries its `kind`.
import type { PublicKey } from '@solana/web3.js';
import type { ACCOUNTS, AccountKind, FieldType, INSTRUCTIONS, InstructionKind } from './schema.ts';

/** The TypeScript value of one field type. */
export type ValueOf<T extends FieldType> = T extends 'key'
  ? PublicKey
  : T extends 'hash'
    ? Uint8Array
    : T extends 'u64' | 'i64'
      ? bigint
      : T extends 'u8'
        ? number
        : T extends 'bool'
          ? boolean
          : T extends 'string'
            ? string
            : T extends { bytes: number }
              ? Uint8Array
              : T extends { option: infer O extends FieldType }
                ? ValueOf<O> | null
                : never;

type Flat<T> = { [K in keyof T]: T[K] } & {};

/** A struct of `fields` (a schema field map) tagged with `kind`. */
export type StructOf<K extends string, F> = Flat<
  { kind: K } & {
    -readonly [P in keyof F]: F[P] extends { readonly type: infer T extends FieldType } ? ValueOf<T> : never;
  }
>;

/** A decoded account of one kind. */
export type AccountData<K extends AccountKind> = StructOf<K, (typeof ACCOUNTS)[K]['fields']>;

/** Decoded instruction data of one kind. */
export type InstructionData<K extends InstructionKind> = StructOf<K, (typeof INSTRUCTIONS)[K]['args']>;
