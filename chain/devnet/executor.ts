// Runs one sanitized transaction against a copy-on-write view of the
// accounts: fee-payer checks, each instruction through its program, the
// per-instruction lamport balance, the post-transaction rent check. It never
// touches committed state; the bank commits `writes`.
import { BUILTIN_PROGRAM_IDS } from './builtins.ts';
import { LAMPORTS_PER_SIGNATURE, rentExemptMinimum, SYSTEM_PROGRAM_ID } from './constants.ts';
import {
  type AccountsView,
  createInvokeContext,
  EMPTY_ACCOUNT,
  instructionLamports,
  sameAccount,
} from './invoke-context.ts';
import type { AccountState, Address, Clock, InstructionAccount, Program } from './program-api.ts';
import { type DecodedTransaction, isSignerIndex, isWritableIndex } from './transaction.ts';
import {
  type InstructionErrorValue,
  InstructionFailure,
  instructionErrorMessage,
  type TransactionErrorJson,
  TransactionRefused,
} from './tx-error.ts';

/** Nominal compute units reported per instruction (devnet does not meter). */
const BUILTIN_UNITS = 150;
const PROGRAM_UNITS = 5_000;
const LOG_LIMIT_BYTES = 10_000;

export interface ExecutionEnv {
  programs: ReadonlyMap<Address, Program>;
  /** Committed state; EMPTY_ACCOUNT for a missing account. */
  read(address: Address): AccountState;
  clock: Clock;
}

export interface ExecutionResult {
  err: TransactionErrorJson | null;
  fee: bigint;
  logs: string[];
  unitsConsumed: number;
  preBalances: bigint[];
  postBalances: bigint[];
  /** States to commit, null = delete. On failure only the fee payer's debit. */
  writes: Map<Address, AccountState | null>;
  /** A program threw something other than ProgramError: probably a bug worth logging. */
  programFault?: Error;
}

class Overlay implements AccountsView {
  readonly changes = new Map<Address, AccountState>();
  constructor(private readonly read: (address: Address) => AccountState) {}
  get(address: Address): AccountState {
    return this.changes.get(address) ?? this.read(address);
  }
  put(address: Address, state: AccountState): void {
    this.changes.set(address, state);
  }
}

class LogCollector {
  readonly lines: string[] = [];
  private bytes = 0;
  private truncated = false;
  push(line: string): void {
    if (this.truncated) return;
    this.bytes += line.length;
    if (this.bytes > LOG_LIMIT_BYTES) {
      this.truncated = true;
      this.lines.push('Log truncated');
      return;
    }
    this.lines.push(line);
  }
}

function isProgramError(err: unknown): err is Error & { code: number } {
  return (
    err instanceof Error && err.name === 'ProgramError' && Number.isInteger((err as { code?: unknown }).code)
  );
}

export function transactionFee(tx: DecodedTransaction): bigint {
  return LAMPORTS_PER_SIGNATURE * BigInt(tx.header.numRequiredSignatures);
}

/** Throws TransactionRefused when the transaction cannot even pay its fee. */
export function executeTransaction(env: ExecutionEnv, tx: DecodedTransaction): ExecutionResult {
  const keys = tx.accountKeys;
  const payer = keys[0] as Address;
  const payerState = env.read(payer);
  const fee = transactionFee(tx);
  if (payerState.lamports === 0n) throw new TransactionRefused('AccountNotFound');
  if (payerState.owner !== SYSTEM_PROGRAM_ID || payerState.executable) {
    throw new TransactionRefused('InvalidAccountForFee');
  }
  if (payerState.lamports < fee) throw new TransactionRefused('InsufficientFundsForFee');
  const payerAfterFee = payerState.lamports - fee;
  if (payerAfterFee > 0n && payerAfterFee < rentExemptMinimum(payerState.data.length)) {
    throw new TransactionRefused({ InsufficientFundsForRent: { account_index: 0 } });
  }
  const programs: Program[] = [];
  for (const ix of tx.instructions) {
    const id = keys[ix.programIdIndex] as Address;
    const account = env.read(id);
    if (account.lamports === 0n) throw new TransactionRefused('ProgramAccountNotFound');
    const program = env.programs.get(id);
    if (!account.executable || !program) throw new TransactionRefused('InvalidProgramForExecution');
    programs.push(program);
  }

  const preBalances = keys.map((k) => env.read(k).lamports);
  const feeOnly: AccountState = { ...payerState, lamports: payerAfterFee };
  const view = new Overlay(env.read);
  view.put(payer, feeOnly);
  const logs = new LogCollector();
  let units = 0;
  let err: TransactionErrorJson | null = null;
  let programFault: Error | undefined;

  for (let index = 0; index < tx.instructions.length && !err; index++) {
    const ix = tx.instructions[index] as DecodedTransaction['instructions'][number];
    const program = programs[index] as Program;
    const builtin = BUILTIN_PROGRAM_IDS.has(program.programId);
    const accounts: InstructionAccount[] = ix.accountIndexes.map((i) => ({
      address: keys[i] as Address,
      isSigner: isSignerIndex(tx, i),
      isWritable: isWritableIndex(tx, i),
    }));
    const cost = builtin ? BUILTIN_UNITS : PROGRAM_UNITS;
    units += cost;
    logs.push(`Program ${program.programId} invoke [1]`);
    const before = instructionLamports(accounts, view);
    let failure: InstructionErrorValue | null = null;
    try {
      const ctx = createInvokeContext({
        programId: program.programId,
        accounts,
        data: ix.data,
        clock: env.clock,
        view,
        logs,
      });
      program.process(ctx);
      if (instructionLamports(accounts, view) !== before) failure = 'UnbalancedInstruction';
    } catch (e) {
      if (e instanceof InstructionFailure) {
        failure = e.error;
        if (e.message !== instructionErrorMessage(e.error)) logs.push(`Program log: ${e.message}`);
      } else if (isProgramError(e)) {
        // Programs log their own reasons (as real ones msg! before returning an error).
        failure = { Custom: e.code };
      } else {
        programFault = e instanceof Error ? e : new Error(String(e));
        failure = 'ProgramFailedToComplete';
        logs.push(`Program log: panicked: ${programFault.message}`);
      }
    }
    if (!builtin) logs.push(`Program ${program.programId} consumed ${cost} of 200000 compute units`);
    if (failure !== null) {
      logs.push(`Program ${program.programId} failed: ${instructionErrorMessage(failure)}`);
      err = { InstructionError: [index, failure] };
    } else {
      logs.push(`Program ${program.programId} success`);
    }
  }

  if (!err) {
    for (const [address, state] of view.changes) {
      if (state.lamports === 0n || sameAccount(state, env.read(address))) continue;
      if (state.lamports < rentExemptMinimum(state.data.length)) {
        err = { InsufficientFundsForRent: { account_index: keys.indexOf(address) } };
        break;
      }
    }
  }

  const writes = new Map<Address, AccountState | null>();
  const changes = err ? new Map([[payer, feeOnly]]) : view.changes;
  for (const [address, state] of changes) {
    // Solana drops an account whose balance reaches zero, data and all.
    writes.set(address, state.lamports === 0n ? null : state === EMPTY_ACCOUNT ? null : state);
  }
  const postBalances = keys.map((k) => {
    const w = writes.get(k);
    return w === undefined ? env.read(k).lamports : (w?.lamports ?? 0n);
  });
  const result: ExecutionResult = {
    err,
    fee,
    logs: logs.lines,
    unitsConsumed: units,
    preBalances,
    postBalances,
    writes,
  };
  if (programFault) result.programFault = programFault;
  return result;
}
