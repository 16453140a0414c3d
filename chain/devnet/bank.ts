// The bank: what a node adds around Solana's runtime (chain-state.ts, svm.ts)
// — slots and their blockhashes, the blockhash and duplicate checks, preflight,
// history, commitment levels, events, and persistence through the ledger.
// Single-threaded: a transaction executes to completion inside one call.
import bs58 from 'bs58';
import { type Logger, pino } from 'pino';
import type { AccountState, Address } from './account-store.ts';
import { BankEvents } from './bank-events.ts';
import { type OpenedState, openState, snapshotHeader } from './bank-open.ts';
import {
  BankHaltedError,
  type BankOptions,
  type ProcessOptions,
  type ProcessOutcome,
  type ProgramImage,
  type SignatureStatus,
} from './bank-types.ts';
import type { ChainState } from './chain-state.ts';
import { STATUS_CACHE_SLOTS } from './constants.ts';
import { installPrograms } from './deploy.ts';
import type { Ed25519Signer } from './ed25519.ts';
import { airdrop } from './faucet.ts';
import type { AddressQuery, TxRecord } from './history.ts';
import type { Ledger } from './ledger.ts';
import type { SlotInfo, SlotRecord } from './ledger-codec.ts';
import type { Commitment, SlotTracker } from './slot-tracker.ts';
import { type DecodedTransaction, transactionSignature } from './transaction.ts';
import type { TransactionErrorJson } from './tx-error.ts';

const SILENT = pino({ level: 'silent' });

export * from './bank-types.ts';
export type { Commitment } from './slot-tracker.ts';

export class Bank {
  readonly genesisHash: string;
  readonly faucet: Ed25519Signer;
  readonly faucetAddress: Address;
  /** The runtime, the node's copy of its accounts, and the history. */
  private readonly chain: ChainState;
  private readonly slots: SlotTracker;
  private readonly unfinalized: SlotRecord[] = [];
  /** Slot, landed-transaction and commitment events (the PubSub server listens). */
  readonly events = new BankEvents();
  private readonly historyLimit: number;
  private readonly compactBytes: number;
  private readonly log: Logger;
  private ledger: Ledger | null;
  private timer: NodeJS.Timeout | null = null;
  private haltReason: string | null = null;
  private closed = false;

  private constructor(
    opts: BankOptions,
    private readonly state: OpenedState,
  ) {
    this.historyLimit = opts.historyLimit ?? 100_000;
    this.compactBytes = opts.compactBytes ?? 16 * 1024 * 1024;
    this.log = opts.logger ?? SILENT;
    this.genesisHash = state.genesisHash;
    this.faucet = state.faucet;
    this.faucetAddress = bs58.encode(state.faucet.publicKey);
    this.chain = state.chain;
    this.slots = state.slots;
    this.ledger = state.ledger;
  }

  /** Opens the ledger in `ledgerDir` (creating genesis when empty) or an in-memory chain. */
  static open(opts: BankOptions = {}): Bank {
    const bank = new Bank(opts, openState(opts, opts.logger ?? SILENT));
    try {
      bank.install(opts.programs ?? []);
    } catch (err) {
      bank.close();
      throw err;
    }
    return bank;
  }

  /** Deploys or upgrades the configured programs, then closes the slot so they can run. */
  private install(programs: readonly ProgramImage[]): void {
    if (installPrograms(this, programs, this.log)) this.advanceSlot();
  }

  /** Opens `slot` with a new blockhash and gives programs its clock. */
  private openSlot(slot: number): void {
    this.chain.setClock(this.slots.openSlot(slot));
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
    this.openSlot(record.slot + 1);
    this.commitSlot(record);
    this.events.emitSlot(this.slots.current.slot);
    if (this.ledger && this.ledger.logBytes > Math.max(this.compactBytes, this.ledger.snapshotBytes)) {
      this.compact();
    }
  }

  private takeSlotRecord(): SlotRecord {
    return { ...this.slots.current, ...this.chain.takePending() };
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
    return this.chain.transactionCount;
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

  /**
   * Committed state; callers must not mutate it. Accounts no transaction has
   * written (builtins, sysvars, the runtime's preloaded programs) come from the runtime.
   */
  getAccount(address: Address): AccountState | null {
    return this.chain.getAccount(address);
  }

  accountsOwnedBy(owner: Address): Iterable<[Address, AccountState]> {
    return this.chain.accountsOwnedBy(owner);
  }

  rentExemptMinimum(dataLength: number): bigint {
    return this.chain.rentExemptMinimum(dataLength);
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
    if (this.chain.history.has(signature)) return refuse('AlreadyProcessed');
    if (
      !(opts.mode === 'simulate' && opts.replaceRecentBlockhash) &&
      !this.isBlockhashValid(tx.recentBlockhash)
    ) {
      return refuse('BlockhashNotFound');
    }
    if (opts.mode !== 'commit') {
      // Preflight is a simulation; only a transaction that passes it is sent.
      const simulated = this.chain.simulate(tx, opts.verifySignatures);
      if (opts.mode === 'simulate' || simulated.err !== null) {
        return { signature, err: simulated.err, execution: simulated, landed: false };
      }
    }
    const { execution, record } = this.chain.send(tx, signature, opts.verifySignatures, this.slots.current);
    if (record) this.events.emitProcessed(record, execution.writes);
    return { signature, err: execution.err, execution, landed: record !== null };
  }

  /** Transfers from the faucet; the outcome carries the signature (or the error). */
  requestAirdrop(to: Address, lamports: bigint): ProcessOutcome {
    return airdrop(this, to, lamports);
  }

  getTransaction(signature: string): TxRecord | undefined {
    return this.chain.history.get(signature);
  }

  signatureStatus(signature: string, searchHistory: boolean): SignatureStatus | null {
    const record = this.chain.history.get(signature);
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
    return this.chain.signaturesForAddress(address, query);
  }

  // ── persistence ──────────────────────────────────────────────────────

  /** Writes a snapshot of everything up to the last closed slot and empties the log. */
  private compact(): void {
    if (!this.ledger || this.chain.hasPending) return;
    const started = Date.now();
    const dropped = this.chain.history.prune(this.historyLimit, this.slots.current.slot - STATUS_CACHE_SLOTS);
    try {
      const header = snapshotHeader(this.state, this.slots.slotAt('confirmed'));
      this.ledger.writeSnapshot(header, this.chain.allAccounts(), this.chain.history.all());
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
