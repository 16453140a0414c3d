// Solana's runtime behind the bank: litesvm (Agave's SVM with the System
// program, the ComputeBudget rules, fees, rent, compute metering and the BPF
// loaders) holding every account and executing every transaction. The node
// keeps what a runtime does not have (slots and their blockhashes, history,
// commitment, persistence), so litesvm's own single-blockhash check and
// signature history are off here and the bank does both.
import bs58 from 'bs58';
import {
  Account,
  Clock,
  EpochSchedule,
  FailedTransactionMetadata,
  LiteSvm,
  type TransactionMetadata,
} from 'litesvm/dist/internal.js';
import type { AccountState, Address } from './account-store.ts';
import { SLOTS_PER_EPOCH, U64_MAX } from './constants.ts';
import { encodeKey } from './key-cache.ts';
import { transactionErrorJson } from './svm-errors.ts';
import type { DecodedTransaction } from './transaction.ts';
import type { TransactionErrorJson } from './tx-error.ts';

export interface InnerInstruction {
  programIdIndex: number;
  accounts: number[];
  /** base58, as getTransaction shows it. */
  data: string;
  stackHeight: number;
}

/** The CPIs made by top-level instruction `index` (only instructions that made any). */
export interface InnerInstructions {
  index: number;
  instructions: InnerInstruction[];
}

export interface ReturnData {
  programId: Address;
  data: Uint8Array;
}

/** What the runtime reports for one execution. */
export interface RuntimeResult {
  err: TransactionErrorJson | null;
  fee: bigint;
  logs: string[];
  unitsConsumed: number;
  innerInstructions: InnerInstructions[];
  returnData: ReturnData | null;
}

export interface SimulationResult extends RuntimeResult {
  /** Every account the transaction loaded, as it would be afterwards (empty on failure). */
  postAccounts: Map<Address, AccountState | null>;
}

// The binding prints the runtime's TransactionMetadata with its fee last; the fee is not exposed otherwise.
const FEE_FIELD = /fee: (\d+) \}[ })]*$/;

function innerInstructions(meta: TransactionMetadata): InnerInstructions[] {
  const out: InnerInstructions[] = [];
  meta.innerInstructions().forEach((list, index) => {
    if (list.length === 0) return;
    out.push({
      index,
      instructions: list.map((inner) => {
        const ix = inner.instruction();
        return {
          programIdIndex: ix.programIdIndex(),
          accounts: Array.from(ix.accounts()),
          data: bs58.encode(ix.data()),
          stackHeight: inner.stackHeight(),
        };
      }),
    });
  });
  return out;
}

function runtimeResult(result: TransactionMetadata | FailedTransactionMetadata): RuntimeResult {
  const failed = result instanceof FailedTransactionMetadata ? result : null;
  const meta = failed ? failed.meta() : (result as TransactionMetadata);
  const fee = FEE_FIELD.exec(result.toString())?.[1];
  if (fee === undefined) throw new Error('litesvm did not report the transaction fee');
  const ret = meta.returnData();
  const returnData =
    ret.data().length > 0 ? { programId: encodeKey(ret.programId()), data: ret.data() } : null;
  return {
    err: failed ? transactionErrorJson(failed) : null,
    fee: BigInt(fee),
    logs: meta.logs(),
    unitsConsumed: Number(meta.computeUnitsConsumed()),
    innerInstructions: innerInstructions(meta),
    returnData,
  };
}

function toState(account: Account | null): AccountState | null {
  if (!account || account.lamports() === 0n) return null;
  return {
    lamports: account.lamports(),
    owner: encodeKey(account.owner()),
    data: account.data(),
    executable: account.executable(),
  };
}

export class Svm {
  private readonly vm = new LiteSvm();
  private sigverify = true;
  private epochStart = 0n;

  constructor() {
    this.vm.setBlockhashCheck(false);
    this.vm.setTransactionHistory(0n);
    this.vm.setSigverify(true);
    // The schedule getEpochSchedule reports: fixed-length epochs, no warmup.
    const slots = BigInt(SLOTS_PER_EPOCH);
    this.vm.setEpochSchedule(new EpochSchedule(slots, slots, false, 0n, 0n));
  }

  /** By base58 address or by the 32 key bytes (spares a base58 decode). */
  getAccount(address: Address | Uint8Array): AccountState | null {
    return toState(this.vm.getAccount(typeof address === 'string' ? bs58.decode(address) : address));
  }

  /** Places an account without a transaction (genesis, ledger restore). */
  setAccount(address: Address, state: AccountState): void {
    const account = new Account(
      state.lamports,
      state.data,
      bs58.decode(state.owner),
      state.executable,
      U64_MAX,
    );
    this.vm.setAccount(bs58.decode(address), account);
  }

  balance(key: Uint8Array): bigint {
    return this.vm.getBalance(key) ?? 0n;
  }

  rentExemptMinimum(dataLength: number): bigint {
    return this.vm.minimumBalanceForRentExemption(BigInt(dataLength));
  }

  /** The Clock sysvar programs read: the open slot and its block time. */
  setClock(slot: number, unixTimestamp: number): void {
    const epoch = BigInt(Math.floor(slot / SLOTS_PER_EPOCH));
    const previous = this.vm.getClock();
    if (this.epochStart === 0n || previous.epoch !== epoch) this.epochStart = BigInt(unixTimestamp);
    this.vm.setClock(new Clock(BigInt(slot), this.epochStart, epoch, epoch + 1n, BigInt(unixTimestamp)));
  }

  private verifying(verify: boolean): void {
    if (this.sigverify !== verify) {
      this.vm.setSigverify(verify);
      this.sigverify = verify;
    }
  }

  /** Executes and commits what the runtime commits (all changes, or only the fee on failure). */
  send(tx: DecodedTransaction, verify: boolean): RuntimeResult {
    this.verifying(verify);
    return runtimeResult(
      tx.version === 'legacy'
        ? this.vm.sendLegacyTransaction(tx.wire)
        : this.vm.sendVersionedTransaction(tx.wire),
    );
  }

  /** Executes without committing anything. */
  simulate(tx: DecodedTransaction, verify: boolean): SimulationResult {
    this.verifying(verify);
    const out =
      tx.version === 'legacy'
        ? this.vm.simulateLegacyTransaction(tx.wire)
        : this.vm.simulateVersionedTransaction(tx.wire);
    if (out instanceof FailedTransactionMetadata) return { ...runtimeResult(out), postAccounts: new Map() };
    const postAccounts = new Map<Address, AccountState | null>();
    for (const entry of out.postAccounts())
      postAccounts.set(encodeKey(entry.address), toState(entry.account()));
    return { ...runtimeResult(out.meta()), postAccounts };
  }
}
