// Program accounts devnet provides at start (not persisted: they are
// re-created from the registered programs on every start) and the
// ComputeBudget program, whose instructions are accepted as no-ops because
// devnet neither meters compute nor charges priority fees.
import {
  BPF_LOADER_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  NATIVE_LOADER_ID,
  rentExemptMinimum,
} from './constants.ts';
import type { AccountState, Address, Program } from './program-api.ts';

export const BUILTIN_PROGRAM_IDS: ReadonlySet<Address> = new Set([
  '11111111111111111111111111111111',
  COMPUTE_BUDGET_PROGRAM_ID,
]);

export function createComputeBudgetProgram(): Program {
  return { programId: COMPUTE_BUDGET_PROGRAM_ID, process: () => {} };
}

/** The executable account a program id resolves to. */
export function programAccount(programId: Address): AccountState {
  if (BUILTIN_PROGRAM_IDS.has(programId)) {
    const name = programId === COMPUTE_BUDGET_PROGRAM_ID ? 'compute_budget_program' : 'system_program';
    return { lamports: 1n, owner: NATIVE_LOADER_ID, data: new TextEncoder().encode(name), executable: true };
  }
  return { lamports: rentExemptMinimum(0), owner: BPF_LOADER_ID, data: new Uint8Array(0), executable: true };
}
