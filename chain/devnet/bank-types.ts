// Types of the bank's API, apart from the Bank class itself.
import type { Logger } from 'pino';
import type { AccountState, Address } from './account-store.ts';
import type { Commitment } from './slot-tracker.ts';
import type { RuntimeResult } from './svm.ts';
import type { TransactionErrorJson } from './tx-error.ts';

/** An SBF program devnet deploys through the BPF Upgradeable Loader at `programId`. */
export interface ProgramImage {
  programId: Address;
  /** The ELF shared object (a `.so` file's bytes). */
  elf: Uint8Array;
}

export interface BankOptions {
  /** Directory of the ledger files; omitted = in memory only. */
  ledgerDir?: string;
  /**
   * Programs to deploy (the mail program): at genesis, or at start when the
   * ledger lacks one or holds different bytes (then upgraded in place).
   */
  programs?: ProgramImage[];
  /** Unix seconds; default the system clock. */
  clock?: () => number;
  /** Slots a confirmed slot waits before it counts as finalized (default 32, like a real cluster). */
  finalizeDepth?: number;
  /** Landed transactions kept for getTransaction/getSignatureStatuses (default 100 000). */
  historyLimit?: number;
  /** Log size that triggers a snapshot, at least (default 16 MiB; also ≥ the last snapshot's size). */
  compactBytes?: number;
  logger?: Logger;
}

export interface ProcessOptions {
  /** simulate: never commit; preflight: commit only a success; commit: land failures too (fee charged). */
  mode: 'simulate' | 'preflight' | 'commit';
  verifySignatures: boolean;
  /** Simulation only: run as if the transaction used the latest blockhash. */
  replaceRecentBlockhash?: boolean;
}

/** The runtime's report on one execution, with what the node adds. */
export interface ExecutionResult extends RuntimeResult {
  preBalances: bigint[];
  postBalances: bigint[];
  /**
   * Landed: the accounts the transaction changed (null = deleted).
   * Simulated: every account it loaded, as it would be afterwards.
   */
  writes: Map<Address, AccountState | null>;
}

export interface ProcessOutcome {
  signature: string;
  err: TransactionErrorJson | null;
  /** Null when the transaction was refused before executing (it cannot land). */
  execution: ExecutionResult | null;
  landed: boolean;
}

export interface SignatureStatus {
  slot: number;
  confirmations: number | null;
  err: TransactionErrorJson | null;
  confirmationStatus: Commitment;
}

/** The ledger could not be written: the node stops landing transactions (RPC -32005). */
export class BankHaltedError extends Error {
  override name = 'BankHaltedError';
}
