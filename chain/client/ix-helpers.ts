// Shared pieces of the instruction builders: each builder names its accounts
// and arguments, and `instruction` orders the accounts and sets their
// signer/writable flags as the schema lists them (chain/protocol/schema.ts),
// so a builder cannot disagree with the program about an account list.
import { type AccountMeta, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { Buffer } from 'buffer';
import { type AccountMetaSpec, INSTRUCTIONS, type InstructionKind } from '../protocol/schema.ts';
import type { InstructionData } from '../protocol/types.ts';
import type { Input } from './accounts/layout.ts';
import { type Key, toPublicKey } from './bytes.ts';
import { encodeInstructionOf } from './instruction-data.ts';

export const ZERO_HASH = new Uint8Array(32);

type AccountOf<K extends InstructionKind> = (typeof INSTRUCTIONS)[K]['accounts'][number];

/**
 * The accounts of one instruction by name: every listed account but the
 * System program (always filled in), and the conditional trailing ones as
 * optional (`undefined` or `null` leaves one out; the later ones move up, as
 * the program reads them).
 */
export type InstructionAccounts<K extends InstructionKind> = {
  [A in AccountOf<K> as A extends { when: string }
    ? never
    : A['name'] extends 'systemProgram'
      ? never
      : A['name']]: Key;
} & {
  [A in AccountOf<K> as A extends { when: string } ? A['name'] : never]?: Key | null;
};

/** Builds instruction `kind`: its accounts in the schema's order and flags, its data from `args`. */
export function instruction<K extends InstructionKind>(
  programId: Key,
  kind: K,
  accounts: InstructionAccounts<K>,
  args: Input<InstructionData<K>>,
): TransactionInstruction {
  const given = accounts as Record<string, Key | null | undefined>;
  const keys: AccountMeta[] = [];
  for (const a of INSTRUCTIONS[kind].accounts as readonly AccountMetaSpec[]) {
    const key = a.name === 'systemProgram' ? SystemProgram.programId : given[a.name];
    if (key === undefined || key === null) {
      if (a.when !== undefined) continue;
      throw new TypeError(`${kind}: no ${a.name} account given`);
    }
    keys.push(metaOf(a, key));
  }
  // web3.js types instruction data as Buffer; 'buffer' is the same polyfill its browser build uses.
  return new TransactionInstruction({
    programId: toPublicKey(programId),
    keys,
    data: Buffer.from(encodeInstructionOf(kind, args)),
  });
}

function metaOf(a: AccountMetaSpec, key: Key): AccountMeta {
  return { pubkey: toPublicKey(key), isSigner: a.signer, isWritable: a.writable };
}

/** The meta of account `name` of instruction `kind`: `key` with the flags the schema gives it. */
export function schemaMeta<K extends InstructionKind>(
  kind: K,
  name: AccountOf<K>['name'],
  key: Key,
): AccountMeta {
  const a = (INSTRUCTIONS[kind].accounts as readonly AccountMetaSpec[]).find((m) => m.name === name);
  if (a === undefined) throw new TypeError(`${kind} has no ${name} account`);
  return metaOf(a, key);
}
