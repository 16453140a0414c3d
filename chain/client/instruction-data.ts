// Instruction data: a one-byte tag, then the borsh arguments, as the schema
// declares them (chain/protocol/schema.ts, docs/protocol.md "Instructions").
// The API's indexes and the funds check decode transactions with it.

import { INSTRUCTIONS, type InstructionKind } from '../protocol/schema.ts';
import type { InstructionData } from '../protocol/types.ts';
import { DecodeError, type Input, type Layout, schemaLayout } from './accounts/layout.ts';

export type { InstructionKind } from '../protocol/schema.ts';
export type { InstructionData } from '../protocol/types.ts';
export { DecodeError } from './accounts/layout.ts';

/** AliasListing.mode and ListAlias's `mode` argument. */
export const LISTING_MODE = { fixed: 0, auction: 1 } as const;

/** Any instruction's decoded data, told apart by `kind`. */
export type MailInstruction = { [K in InstructionKind]: InstructionData<K> }[InstructionKind];

type LayoutMap = { readonly [K in InstructionKind]: Layout<InstructionData<K>> };

export const INSTRUCTION_LAYOUTS = Object.fromEntries(
  Object.entries(INSTRUCTIONS).map(([kind, spec]) => [kind, schemaLayout(kind, spec)]),
) as unknown as LayoutMap;

export const INSTRUCTION_TAGS = Object.fromEntries(
  Object.values(INSTRUCTION_LAYOUTS).map((l) => [l.kind, l.tag]),
) as { readonly [K in InstructionKind]: number };

const BY_TAG: (Layout<MailInstruction> | undefined)[] = [];
for (const l of Object.values(INSTRUCTION_LAYOUTS)) BY_TAG[l.tag] = l as unknown as Layout<MailInstruction>;

/** Instruction data for `ix` (its kind picks the tag). */
export function encodeInstruction(ix: MailInstruction): Uint8Array {
  return (INSTRUCTION_LAYOUTS[ix.kind] as unknown as Layout<MailInstruction>).encode(ix);
}

/** Encodes arguments for one kind without spelling `kind` in the object. */
export function encodeInstructionOf<K extends InstructionKind>(
  kind: K,
  args: Input<InstructionData<K>>,
): Uint8Array {
  return (INSTRUCTION_LAYOUTS[kind] as unknown as Layout<MailInstruction>).encode(
    args as Input<MailInstruction>,
  );
}

/** Decodes instruction data; throws DecodeError on an unknown tag, short, non-canonical or trailing data. */
export function decodeInstruction(data: Uint8Array): MailInstruction {
  const tag = data[0];
  const layout = tag === undefined ? undefined : BY_TAG[tag];
  if (!layout) {
    throw new DecodeError(tag === undefined ? 'instruction: empty data' : `instruction: unknown tag ${tag}`);
  }
  return layout.decode(data);
}
