// The fee of a message by Solana's rule, for getFeeForMessage (a landed or
// simulated transaction reports the fee the runtime charged): 5000 lamports
// per signature (the transaction's and those its precompile instructions
// verify) plus the priority fee, ceil(compute-unit price in micro-lamports ×
// compute-unit limit / 1,000,000). Without SetComputeUnitLimit the limit is
// 3,000 units per builtin-program instruction and 200,000 per other
// instruction, at most 1,400,000.
import { COMPUTE_BUDGET_PROGRAM_ID, LAMPORTS_PER_SIGNATURE } from './constants.ts';
import type { DecodedTransaction } from './transaction.ts';

const MAX_COMPUTE_UNIT_LIMIT = 1_400_000n;
const BUILTIN_UNITS = 3_000n;
const PROGRAM_UNITS = 200_000n;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

/** Builtins that still run natively (the others have moved to SBF programs). */
const BUILTINS = new Set([
  '11111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'ZkE1Gama1Proof11111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM_ID,
]);

/** Precompiles whose first data byte is the number of signatures they verify. */
const PRECOMPILES = new Set([
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
]);

function u32(data: Uint8Array): bigint | null {
  return data.length === 5 ? BigInt(new DataView(data.buffer, data.byteOffset + 1).getUint32(0, true)) : null;
}

function u64(data: Uint8Array): bigint | null {
  return data.length === 9 ? new DataView(data.buffer, data.byteOffset + 1).getBigUint64(0, true) : null;
}

/** The transaction's SetComputeUnitPrice in micro-lamports per compute unit (0 when absent). */
export function computeUnitPrice(tx: DecodedTransaction): bigint {
  let price = 0n;
  for (const ix of tx.instructions) {
    if (tx.accountKeys[ix.programIdIndex] === COMPUTE_BUDGET_PROGRAM_ID && ix.data[0] === 3)
      price = u64(ix.data) ?? price;
  }
  return price;
}

export function messageFee(tx: DecodedTransaction): bigint {
  let signatures = BigInt(tx.header.numRequiredSignatures);
  let limit: bigint | null = null;
  let price = 0n;
  let defaultLimit = 0n;
  for (const ix of tx.instructions) {
    const program = tx.accountKeys[ix.programIdIndex] as string;
    defaultLimit += BUILTINS.has(program) ? BUILTIN_UNITS : PROGRAM_UNITS;
    if (PRECOMPILES.has(program)) signatures += BigInt(ix.data[0] ?? 0);
    if (program !== COMPUTE_BUDGET_PROGRAM_ID) continue;
    if (ix.data[0] === 2) limit = u32(ix.data) ?? limit;
    if (ix.data[0] === 3) price = u64(ix.data) ?? price;
  }
  const units = limit ?? defaultLimit;
  const cappedUnits = units < MAX_COMPUTE_UNIT_LIMIT ? units : MAX_COMPUTE_UNIT_LIMIT;
  const priority = (price * cappedUnits + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return LAMPORTS_PER_SIGNATURE * signatures + priority;
}
