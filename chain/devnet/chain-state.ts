// The chain's state under the bank: the runtime (which holds and changes the
// accounts), the node's copy of every account written so far (the store the
// RPC filters and the ledger read), the transaction history, and what the
// open slot has collected for its ledger record.
import { type AccountState, AccountStore, type Address } from './account-store.ts';
import type { ExecutionResult } from './bank-types.ts';
import { SYSTEM_PROGRAM_ID } from './constants.ts';
import { sendTransaction, simulateTransaction } from './execute.ts';
import { type AddressQuery, TxHistory, type TxRecord } from './history.ts';
import type { LoadedLedger } from './ledger.ts';
import type { SlotInfo } from './ledger-codec.ts';
import { Svm } from './svm.ts';
import type { DecodedTransaction } from './transaction.ts';

export class ChainState {
  private readonly svm = new Svm();
  private readonly accounts = new AccountStore();
  readonly history = new TxHistory();
  private pendingTxs: TxRecord[] = [];
  private pendingAccounts = new Map<Address, AccountState | null>();
  transactionCount = 0;
  /** Fidelity: told the state an account had before a transaction of `slot` first changed it. */
  journal: ((address: Address, before: AccountState | null, slot: number) => void) | null = null;

  /** Places a genesis account (no transaction), as a cluster's genesis does. */
  place(address: Address, state: AccountState): void {
    this.accounts.set(address, state);
    this.svm.setAccount(address, state);
  }

  /** Loads a ledger's accounts and history; returns the last slot it holds. */
  restore(loaded: LoadedLedger, remember: (slot: SlotInfo) => void): number {
    for (const [address, state] of loaded.accounts) this.accounts.set(address, state);
    for (const record of loaded.history) this.history.add(record);
    this.transactionCount = loaded.header.transactionCount;
    let last = loaded.header.slot;
    for (const record of loaded.records) {
      remember({ slot: record.slot, blockhash: record.blockhash, blockTime: record.blockTime });
      for (const [address, state] of record.accounts) this.accounts.set(address, state);
      for (const tx of record.txs) this.history.add(tx);
      this.transactionCount += record.txs.length;
      last = record.slot;
    }
    // Into the fresh runtime: ProgramData before the programs that load from it.
    const all = [...this.accounts.entries()];
    for (const [address, state] of all) if (!state.executable) this.svm.setAccount(address, state);
    for (const [address, state] of all) if (state.executable) this.svm.setAccount(address, state);
    return last;
  }

  /** The Clock sysvar programs read. */
  setClock(slot: SlotInfo): void {
    this.svm.setClock(slot.slot, slot.blockTime);
  }

  /**
   * Committed state; callers must not mutate it. Accounts no transaction has
   * written (builtins, sysvars, the runtime's preloaded programs) come from the runtime.
   */
  getAccount(address: Address): AccountState | null {
    return this.accounts.get(address) ?? this.svm.getAccount(address);
  }

  accountsOwnedBy(owner: Address): Iterable<[Address, AccountState]> {
    return this.accounts.ownedBy(owner);
  }

  allAccounts(): Iterable<[Address, AccountState]> {
    return this.accounts.entries();
  }

  rentExemptMinimum(dataLength: number): bigint {
    return this.svm.rentExemptMinimum(dataLength);
  }

  simulate(tx: DecodedTransaction, verify: boolean): ExecutionResult {
    return simulateTransaction(this.svm, tx, verify);
  }

  /** Executes; a transaction that landed is recorded in `slot` and returned with its record. */
  send(
    tx: DecodedTransaction,
    signature: string,
    verify: boolean,
    slot: SlotInfo,
  ): { execution: ExecutionResult; record: TxRecord | null } {
    const { execution, landed } = sendTransaction(this.svm, tx, verify);
    if (!landed) return { execution, record: null };
    for (const [address, state] of execution.writes) {
      this.journal?.(address, this.accounts.get(address) ?? null, slot.slot);
      this.accounts.set(address, state);
      this.pendingAccounts.set(address, state);
    }
    const record: TxRecord = {
      signature,
      slot: slot.slot,
      blockTime: slot.blockTime,
      err: execution.err,
      fee: execution.fee,
      preBalances: execution.preBalances,
      postBalances: execution.postBalances,
      logs: execution.logs,
      unitsConsumed: execution.unitsConsumed,
      innerInstructions: execution.innerInstructions,
      returnData: execution.returnData,
      wire: tx.wire.slice(),
      accountKeys: tx.accountKeys,
    };
    this.history.add(record);
    this.pendingTxs.push(record);
    this.transactionCount++;
    return { execution, record };
  }

  /**
   * Puts an account back to an earlier state (a rolled-back fork), in the
   * runtime and the store; recorded for the ledger with the open slot.
   */
  restoreAccount(address: Address, state: AccountState | null): void {
    this.accounts.set(address, state);
    this.pendingAccounts.set(address, state);
    this.svm.setAccount(
      address,
      state ?? { lamports: 0n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false },
    );
  }

  /** True when the open slot has collected something for the ledger. */
  get hasPending(): boolean {
    return this.pendingTxs.length > 0 || this.pendingAccounts.size > 0;
  }

  /** What the open slot collected (landed transactions, final account states); starts afresh. */
  takePending(): { txs: TxRecord[]; accounts: Map<Address, AccountState | null> } {
    const pending = { txs: this.pendingTxs, accounts: this.pendingAccounts };
    this.pendingTxs = [];
    this.pendingAccounts = new Map();
    return pending;
  }

  signaturesForAddress(address: Address, query: AddressQuery): TxRecord[] {
    return this.history.forAddress(address, query);
  }
}
