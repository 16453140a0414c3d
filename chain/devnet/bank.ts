// The bank: accounts, slots and blockhashes, transaction processing and
// history, commitment levels, persistence through the ledger. Single-threaded
// by design: a transaction executes to completion inside one call, so
// copy-on-write per transaction is all the isolation needed.
import { createHash, randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { type Logger, pino } from 'pino';
import { AccountStore } from './account-store.ts';
import { BankEvents } from './bank-events.ts';
import {
  BankHaltedError,
  type BankOptions,
  type ProcessOptions,
  type ProcessOutcome,
  type SignatureStatus,
} from './bank-types.ts';
import { createComputeBudgetProgram, programAccount } from './builtins.ts';
import { MAX_PROCESSING_AGE, rentExemptMinimum, STATUS_CACHE_SLOTS } from './constants.ts';
import { type Ed25519Signer, generateSigner, signerFromSeed } from './ed25519.ts';
import { type ExecutionResult, executeTransaction } from './executor.ts';
import { airdropTransaction, FAUCET_LAMPORTS } from './faucet.ts';
import { type AddressQuery, TxHistory, type TxRecord } from './history.ts';
import { EMPTY_ACCOUNT } from './invoke-context.ts';
import { Ledger, type LoadedLedger } from './ledger.ts';
import type { SlotInfo, SlotRecord, SnapshotHeader } from './ledger-codec.ts';
import type { AccountState, Address, Program } from './program-api.ts';
import { type Commitment, SlotTracker } from './slot-tracker.ts';
import { createSystemProgram } from './system-program.ts';
import {
  type DecodedTransaction,
  decodeTransaction,
  transactionSignature,
  verifyTransactionSignatures,
} from './transaction.ts';
import { type TransactionErrorJson, TransactionRefused } from './tx-error.ts';

const SILENT = pino({ level: 'silent' });

export * from './bank-types.ts';
export type { Commitment } from './slot-tracker.ts';

export class Bank {
  readonly genesisHash: string;
  readonly faucet: Ed25519Signer;
  readonly faucetAddress: Address;
  private readonly accounts = new AccountStore();
  private readonly programs = new Map<Address, Program>();
  private readonly history = new TxHistory();
  private readonly slots: SlotTracker;
  private readonly unfinalized: SlotRecord[] = [];
  /** Slot, landed-transaction and commitment events (the PubSub server listens). */
  readonly events = new BankEvents();
  private readonly historyLimit: number;
  private readonly compactBytes: number;
  private readonly log: Logger;
  private ledger: Ledger | null = null;
  private pendingTxs: TxRecord[] = [];
  private pendingAccounts = new Map<Address, AccountState | null>();
  private txCount = 0;
  private timer: NodeJS.Timeout | null = null;
  private haltReason: string | null = null;
  private closed = false;

  private constructor(opts: BankOptions, genesisHash: string, faucet: Ed25519Signer) {
    this.slots = new SlotTracker(
      genesisHash,
      opts.finalizeDepth ?? 32,
      opts.clock ?? (() => Date.now() / 1000),
    );
    this.historyLimit = opts.historyLimit ?? 100_000;
    this.compactBytes = opts.compactBytes ?? 16 * 1024 * 1024;
    this.log = opts.logger ?? SILENT;
    this.genesisHash = genesisHash;
    this.faucet = faucet;
    this.faucetAddress = bs58.encode(faucet.publicKey);
    for (const p of [createSystemProgram(), createComputeBudgetProgram(), ...(opts.programs ?? [])]) {
      this.programs.set(p.programId, p);
    }
  }

  /** Opens the ledger in `ledgerDir` (creating genesis when empty) or an in-memory chain. */
  static open(opts: BankOptions = {}): Bank {
    const opened = opts.ledgerDir ? Ledger.open(opts.ledgerDir) : null;
    try {
      const loaded = opened?.loaded ?? null;
      const bank = loaded
        ? new Bank(opts, loaded.header.genesisHash, signerFromSeed(bs58.decode(loaded.header.faucetSeed)))
        : new Bank(
            opts,
            bs58.encode(createHash('sha256').update(randomBytes(32)).digest()),
            generateSigner(),
          );
      bank.ledger = opened?.ledger ?? null;
      if (loaded) bank.restore(loaded);
      else bank.genesis();
      for (const id of bank.programs.keys()) bank.accounts.set(id, programAccount(id));
      return bank;
    } catch (err) {
      opened?.ledger.close();
      throw err;
    }
  }

  private genesis(): void {
    this.accounts.set(this.faucetAddress, { ...EMPTY_ACCOUNT, lamports: FAUCET_LAMPORTS });
    this.slots.openSlot(0);
    this.slots.confirm(0);
    this.ledger?.writeSnapshot(this.snapshotHeader(0), this.persistentAccounts(), []);
    this.slots.openSlot(1);
  }

  private restore(loaded: LoadedLedger): void {
    const { header } = loaded;
    for (const info of header.recentSlots) this.slots.remember(info);
    for (const [address, state] of loaded.accounts) this.accounts.set(address, state);
    for (const record of loaded.history) this.history.add(record);
    this.txCount = header.transactionCount;
    let last = header.slot;
    for (const record of loaded.records) {
      this.slots.remember({ slot: record.slot, blockhash: record.blockhash, blockTime: record.blockTime });
      for (const [address, state] of record.accounts) this.accounts.set(address, state);
      for (const tx of record.txs) this.history.add(tx);
      this.txCount += record.txs.length;
      last = record.slot;
    }
    if (loaded.truncatedBytes > 0) {
      this.log.warn(
        { bytes: loaded.truncatedBytes },
        'devnet ledger: cut a torn or corrupt tail off the log',
      );
    }
    this.slots.confirm(last);
    this.slots.openSlot(last + 1);
  }

  // ── slots ────────────────────────────────────────────────────────────

  /** Starts producing a slot every `slotMs`. */
  start(slotMs: number): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => this.advanceSlot(), slotMs);
    this.timer.unref();
  }

  /** Closes the current slot (persisting it) and opens the next. */
  advanceSlot(): void {
    if (this.closed || this.haltReason) return;
    const record = this.takeSlotRecord();
    try {
      this.ledger?.append(record, record.txs.length > 0 || record.accounts.size > 0);
    } catch (err) {
      // Without a durable ledger nothing may be reported confirmed again.
      this.haltReason = `ledger write failed: ${(err as Error).message}`;
      this.log.error({ err }, 'devnet halted');
      if (this.timer) clearInterval(this.timer);
      return;
    }
    this.slots.openSlot(record.slot + 1);
    this.commitSlot(record);
    this.events.emitSlot(this.slots.current.slot);
    if (this.ledger && this.ledger.logBytes > Math.max(this.compactBytes, this.ledger.snapshotBytes)) {
      this.compact();
    }
  }

  private takeSlotRecord(): SlotRecord {
    const record: SlotRecord = {
      ...this.slots.current,
      txs: this.pendingTxs,
      accounts: this.pendingAccounts,
    };
    this.pendingTxs = [];
    this.pendingAccounts = new Map();
    return record;
  }

  private commitSlot(record: SlotRecord): void {
    const finalized = this.slots.confirm(record.slot);
    this.unfinalized.push(record);
    this.events.emitCommitted(record, 'confirmed');
    while (this.unfinalized[0] && this.unfinalized[0].slot <= finalized) {
      const done = this.unfinalized.shift() as SlotRecord;
      this.events.emitCommitted(done, 'finalized');
    }
  }

  get slot(): number {
    return this.slots.current.slot;
  }

  slotAt(commitment: Commitment): number {
    return this.slots.slotAt(commitment);
  }

  commitmentOf(slot: number): Commitment {
    return this.slots.commitmentOf(slot);
  }

  get halted(): string | null {
    return this.haltReason;
  }

  get transactionCount(): number {
    return this.txCount;
  }

  slotInfo(slot: number): SlotInfo | undefined {
    return this.slots.info(slot);
  }

  /** The blockhash of the newest slot at `commitment`, usable until `lastValidBlockHeight`. */
  latestBlockhash(commitment: Commitment): { slot: number; blockhash: string; lastValidBlockHeight: number } {
    return this.slots.latestBlockhash(commitment);
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.slots.isBlockhashValid(blockhash);
  }

  // ── accounts ─────────────────────────────────────────────────────────

  /** Committed state; callers must not mutate it. */
  getAccount(address: Address): AccountState | null {
    return this.accounts.get(address) ?? null;
  }

  accountsOwnedBy(owner: Address): Iterable<[Address, AccountState]> {
    return this.accounts.ownedBy(owner);
  }

  rentExemptMinimum(dataLength: number): bigint {
    return rentExemptMinimum(dataLength);
  }

  // ── transactions ─────────────────────────────────────────────────────

  processTransaction(tx: DecodedTransaction, opts: ProcessOptions): ProcessOutcome {
    const signature = transactionSignature(tx);
    const refuse = (err: TransactionErrorJson): ProcessOutcome => ({
      signature,
      err,
      execution: null,
      landed: false,
    });
    if (this.closed) throw new BankHaltedError('devnet is closed');
    if (this.haltReason && opts.mode !== 'simulate')
      throw new BankHaltedError(`devnet halted: ${this.haltReason}`);
    if (opts.verifySignatures && !verifyTransactionSignatures(tx)) return refuse('SignatureFailure');
    if (this.history.has(signature)) return refuse('AlreadyProcessed');
    if (
      !(opts.mode === 'simulate' && opts.replaceRecentBlockhash) &&
      !this.isBlockhashValid(tx.recentBlockhash)
    ) {
      return refuse('BlockhashNotFound');
    }
    let execution: ExecutionResult;
    try {
      execution = executeTransaction(
        {
          programs: this.programs,
          read: (address) => this.accounts.get(address) ?? EMPTY_ACCOUNT,
          clock: {
            slot: BigInt(this.slots.current.slot),
            unixTimestamp: BigInt(this.slots.current.blockTime),
          },
        },
        tx,
      );
    } catch (err) {
      if (err instanceof TransactionRefused) return refuse(err.error);
      throw err;
    }
    if (execution.programFault) {
      this.log.warn({ err: execution.programFault, signature }, 'devnet: a program threw a non-ProgramError');
    }
    const land = opts.mode === 'commit' || (opts.mode === 'preflight' && execution.err === null);
    if (land) this.commitTransaction(tx, signature, execution);
    return { signature, err: execution.err, execution, landed: land };
  }

  private commitTransaction(tx: DecodedTransaction, signature: string, execution: ExecutionResult): void {
    for (const [address, state] of execution.writes) {
      this.accounts.set(address, state);
      this.pendingAccounts.set(address, state);
    }
    const record: TxRecord = {
      signature,
      slot: this.slots.current.slot,
      blockTime: this.slots.current.blockTime,
      err: execution.err,
      fee: execution.fee,
      preBalances: execution.preBalances,
      postBalances: execution.postBalances,
      logs: execution.logs,
      unitsConsumed: execution.unitsConsumed,
      wire: tx.wire.slice(),
      accountKeys: tx.accountKeys,
    };
    this.history.add(record);
    this.pendingTxs.push(record);
    this.txCount++;
    this.events.emitProcessed(record, execution.writes);
  }

  /** Transfers from the faucet; the outcome carries the signature (or the error). */
  requestAirdrop(to: Address, lamports: bigint): ProcessOutcome {
    // An identical airdrop under the same blockhash would repeat a signature,
    // so walk back through still-valid blockhashes until one is unused.
    let outcome: ProcessOutcome | null = null;
    for (
      let slot = this.slots.current.slot;
      slot >= Math.max(0, this.slots.current.slot - MAX_PROCESSING_AGE);
      slot--
    ) {
      const info = this.slots.info(slot);
      if (!info) continue;
      const tx = decodeTransaction(airdropTransaction(this.faucet, to, lamports, info.blockhash));
      outcome = this.processTransaction(tx, { mode: 'preflight', verifySignatures: false });
      if (outcome.err !== 'AlreadyProcessed') return outcome;
    }
    return outcome ?? { signature: '', err: 'BlockhashNotFound', execution: null, landed: false };
  }

  getTransaction(signature: string): TxRecord | undefined {
    return this.history.get(signature);
  }

  signatureStatus(signature: string, searchHistory: boolean): SignatureStatus | null {
    const record = this.history.get(signature);
    if (!record) return null;
    if (!searchHistory && record.slot < this.slots.current.slot - STATUS_CACHE_SLOTS) return null;
    const confirmationStatus = this.commitmentOf(record.slot);
    return {
      slot: record.slot,
      confirmations: confirmationStatus === 'finalized' ? null : this.slots.current.slot - record.slot,
      err: record.err,
      confirmationStatus,
    };
  }

  signaturesForAddress(address: Address, query: AddressQuery): TxRecord[] {
    return this.history.forAddress(address, query);
  }

  // ── persistence ──────────────────────────────────────────────────────

  private snapshotHeader(slot: number): SnapshotHeader {
    return {
      version: 1,
      genesisHash: this.genesisHash,
      faucetSeed: bs58.encode(this.faucet.seed),
      slot,
      recentSlots: this.slots.recent(slot),
      transactionCount: this.txCount,
    };
  }

  /** Program accounts are re-created at start, so they are left out. */
  private *persistentAccounts(): Generator<[Address, AccountState]> {
    for (const entry of this.accounts.entries()) if (!this.programs.has(entry[0])) yield entry;
  }

  /** Writes a snapshot of everything up to the last closed slot and empties the log. */
  private compact(): void {
    if (!this.ledger || this.pendingTxs.length > 0 || this.pendingAccounts.size > 0) return;
    const started = Date.now();
    const dropped = this.history.prune(this.historyLimit, this.slots.current.slot - STATUS_CACHE_SLOTS);
    try {
      this.ledger.writeSnapshot(
        this.snapshotHeader(this.slots.slotAt('confirmed')),
        this.persistentAccounts(),
        this.history.all(),
      );
    } catch (err) {
      // The log still holds everything; try again at the next threshold.
      this.log.error({ err }, 'devnet ledger: snapshot failed');
      return;
    }
    this.log.info(
      { ms: Date.now() - started, bytes: this.ledger.snapshotBytes, droppedHistory: dropped },
      'devnet ledger: snapshot written',
    );
  }

  /** Stops slot production, persists the open slot and a snapshot, releases the ledger. */
  close(): void {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!this.haltReason) {
      const record = this.takeSlotRecord();
      try {
        this.ledger?.append(record, true);
        this.commitSlot(record);
        this.compact();
      } catch (err) {
        this.log.error({ err }, 'devnet ledger: final flush failed');
      }
    }
    this.closed = true;
    this.ledger?.close();
    this.ledger = null;
  }
}
