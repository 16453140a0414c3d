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
  /** Closed slots waiting `confirmLag` slots before they count as confirmed (fidelity). */
  private readonly unconfirmed: SlotRecord[] = [];
  private confirmLag = 0;
  /** The last slot closed (persisted to the ledger). */
  private lastClosedSlot: number;
  /** Fidelity: the state each account had before its first write in each slot still above the finalized one. */
  private journal: Map<Address, { slot: number; before: AccountState | null }[]> | null = null;
  private journalOrder: { slot: number; address: Address }[] = [];
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
    this.lastClosedSlot = state.slots.current.slot - 1;
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
    this.lastClosedSlot = record.slot;
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

  private commitSlot(record: SlotRecord, lag = this.confirmLag): void {
    this.unconfirmed.push(record);
    while (this.unconfirmed.length > lag) {
      const confirmed = this.unconfirmed.shift() as SlotRecord;
      const finalized = this.slots.confirm(confirmed.slot);
      this.unfinalized.push(confirmed);
      this.events.emitCommitted(confirmed, 'confirmed');
      while (this.unfinalized[0] && this.unfinalized[0].slot <= finalized) {
        const done = this.unfinalized.shift() as SlotRecord;
        this.events.emitCommitted(done, 'finalized');
      }
    }
    if (this.journal) this.pruneJournal(this.slots.slotAt('finalized'));
  }

  // ── fidelity: commitment-true reads, block heights, rollback ─────────

  /**
   * Fidelity: a closed slot counts as confirmed only `lag` slots after it
   * closed (0 = at once, plain devnet), so `confirmed` trails `processed`.
   */
  setConfirmLag(lag: number): void {
    this.confirmLag = Math.max(0, Math.floor(lag));
  }

  /** Fidelity: block height = slot − min(skip, ⌊slot/2⌋); 0 = block height is the slot. */
  setBlockHeightSkip(skip: number): void {
    this.slots.blockHeightSkip = Math.max(0, Math.floor(skip));
  }

  /** The block height of `slot`: the slot itself, unless a block-height skip is set. */
  heightOf(slot: number): number {
    return this.slots.heightOf(slot);
  }

  blockHeightAt(commitment: Commitment): number {
    return this.slots.heightOf(this.slotAt(commitment));
  }

  /**
   * Keeps, from now on, the state every account had before each write in
   * the slots not finalized yet: what commitment-true reads (`accountAt`)
   * and `rollbackSlots` need. Off by default (plain devnet keeps nothing).
   */
  enableJournal(): void {
    if (this.journal) return;
    const journal = new Map<Address, { slot: number; before: AccountState | null }[]>();
    this.journal = journal;
    this.chain.journal = (address, before, slot) => {
      let list = journal.get(address);
      if (!list) {
        list = [];
        journal.set(address, list);
      }
      if (list[list.length - 1]?.slot === slot) return; // only the first write of a slot
      list.push({ slot, before });
      this.journalOrder.push({ slot, address });
    };
  }

  get journaling(): boolean {
    return this.journal !== null;
  }

  private pruneJournal(finalized: number): void {
    const journal = this.journal as NonNullable<typeof this.journal>;
    let drop = 0;
    while (drop < this.journalOrder.length && (this.journalOrder[drop]?.slot as number) <= finalized) {
      const { address } = this.journalOrder[drop] as { address: Address };
      const list = journal.get(address);
      list?.shift();
      if (list && list.length === 0) journal.delete(address);
      drop++;
    }
    if (drop > 0) this.journalOrder = this.journalOrder.slice(drop);
  }

  /**
   * The account as it was at the end of `slot` (committed state when the
   * journal is off, or for the open slot). Slots at or below the finalized
   * one read today's state for accounts written since (the journal is pruned there).
   */
  accountAt(address: Address, slot: number): AccountState | null {
    if (this.journal && slot < this.slot) {
      const list = this.journal.get(address);
      if (list) for (const entry of list) if (entry.slot > slot) return entry.before;
    }
    return this.getAccount(address);
  }

  /** The accounts `owner` owned at the end of `slot` (as accountAt; the newest state without the journal). */
  *accountsOwnedByAt(owner: Address, slot: number): Generator<[Address, AccountState]> {
    if (!this.journal || slot >= this.slot) {
      yield* this.chain.accountsOwnedBy(owner);
      return;
    }
    const seen = new Set<Address>();
    for (const [address] of this.chain.accountsOwnedBy(owner)) {
      seen.add(address);
      const state = this.accountAt(address, slot);
      if (state && state.owner === owner) yield [address, state];
    }
    // Accounts written since `slot` that the owner held then (closed or reassigned since).
    for (const address of this.journal.keys()) {
      if (seen.has(address)) continue;
      const state = this.accountAt(address, slot);
      if (state && state.owner === owner) yield [address, state];
    }
  }

  /**
   * A fork that drops the last `n` slots, the open one included (n = 1: only
   * what the open slot holds; n = 3: it and the two closed before): their transactions leave the history and their account writes
   * are undone, in the runtime, the store and the ledger (a snapshot is
   * written). Slot numbers go on (the dropped slots become empty), their
   * blockhashes stay valid, and PubSub subscribers are not told. Needs the
   * journal (`enableJournal`, i.e. a devnet started with `fidelity`) from
   * before the dropped slots, and the oldest dropped slot above the
   * finalized one. Returns the signatures dropped.
   */
  rollbackSlots(n: number): { fromSlot: number; toSlot: number; signatures: string[] } {
    if (!Number.isInteger(n) || n < 1) throw new RangeError('rollbackSlots: n must be a positive integer');
    if (!this.journal) throw new Error('rollbackSlots needs the journal: start the devnet with `fidelity`');
    if (this.closed || this.haltReason) throw new BankHaltedError('devnet is closed or halted');
    const toSlot = this.slot;
    const keep = toSlot - n;
    const finalized = this.slotAt('finalized');
    if (keep < finalized) {
      throw new RangeError(
        `rollbackSlots: slot ${keep + 1} is finalized (finalized slot ${finalized}); at most ${toSlot - finalized} slots can be dropped`,
      );
    }
    this.advanceSlot(); // the open slot's transactions are closed (and persisted) first
    for (const [address, list] of this.journal) {
      const first = list.findIndex((e) => e.slot > keep);
      if (first < 0) continue;
      this.chain.restoreAccount(address, (list[first] as { before: AccountState | null }).before);
      list.length = first;
      if (list.length === 0) this.journal.delete(address);
    }
    this.journalOrder = this.journalOrder.filter((e) => e.slot <= keep);
    const removed = this.chain.history.removeAfter(keep);
    this.chain.transactionCount -= removed.length;
    // Commitment events still to come must not name the dropped transactions.
    for (const r of [...this.unconfirmed, ...this.unfinalized]) {
      if (r.slot <= keep) continue;
      r.txs = [];
      r.accounts = new Map();
    }
    // The restored states go to the ledger with this slot; the snapshot drops the dropped history.
    this.advanceSlot();
    this.compact(true);
    this.log.warn({ fromSlot: keep + 1, toSlot, dropped: removed.length }, 'devnet: rolled back slots');
    return { fromSlot: keep + 1, toSlot, signatures: removed.map((r) => r.signature) };
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
  private compact(force = false): void {
    if (!this.ledger || this.chain.hasPending) {
      if (force && this.ledger)
        this.log.error('devnet ledger: snapshot after a rollback skipped (pending state)');
      return;
    }
    const started = Date.now();
    const dropped = this.chain.history.prune(this.historyLimit, this.slots.current.slot - STATUS_CACHE_SLOTS);
    try {
      const header = snapshotHeader(this.state, this.lastClosedSlot);
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
        this.lastClosedSlot = record.slot;
        this.commitSlot(record, 0);
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
