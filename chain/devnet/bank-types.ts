// Types of the bank's API, apart from the Bank class itself.
import type { Logger } from 'pino';
import type { ExecutionResult } from './executor.ts';
import type { Program } from './program-api.ts';
import type { Commitment } from './slot-tracker.ts';
import type { TransactionErrorJson } from './tx-error.ts';

export interface BankOptions {
  /** Directory of the ledger files; omitted = in memory only. */
  ledgerDir?: string;
  /** Programs besides System and ComputeBudget (the mail program). */
  programs?: Program[];
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
