// Slots, their blockhashes and block times, and the three commitment levels.
// Every slot is a block here (no skipped slots), so block height == slot,
// unless a block-height skip is set (fidelity mode: block height = slot minus
// a skip count, as on a real cluster where skipped slots have no block).
// processed: the open slot; confirmed: closed and durable in the ledger;
// finalized: confirmed `finalizeDepth` slots ago.
import { createHash, randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { MAX_PROCESSING_AGE } from './constants.ts';
import type { SlotInfo } from './ledger-codec.ts';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

/** Slot infos kept in memory: enough for blockhash validity, finalization and recent getBlockTime. */
const RECENT_SLOTS_KEPT = 512;

export class SlotTracker {
  private readonly slots = new Map<number, SlotInfo>();
  private readonly blockhashSlots = new Map<string, number>();
  private open!: SlotInfo;
  private confirmedSlot = 0;
  private finalizedSlot = 0;
  /** Fidelity: block height = slot − min(skip, ⌊slot/2⌋); 0 = block height is the slot. */
  blockHeightSkip = 0;

  constructor(
    private readonly genesisHash: string,
    readonly finalizeDepth: number,
    private readonly clock: () => number,
  ) {}

  get current(): SlotInfo {
    return this.open;
  }

  /** Adds a slot known from genesis or the ledger. */
  remember(info: SlotInfo): void {
    this.slots.set(info.slot, info);
    this.blockhashSlots.set(info.blockhash, info.slot);
    const old = this.slots.get(info.slot - RECENT_SLOTS_KEPT);
    if (old) {
      this.slots.delete(old.slot);
      this.blockhashSlots.delete(old.blockhash);
    }
  }

  /** Opens `slot` with a fresh blockhash chained to its parent's; block time never goes backwards. */
  openSlot(slot: number): SlotInfo {
    const parent = this.slots.get(slot - 1);
    const hash = createHash('sha256')
      .update(bs58.decode(parent?.blockhash ?? this.genesisHash))
      .update(Buffer.from(BigInt(slot).toString(16), 'utf8'))
      .update(randomBytes(8))
      .digest();
    this.open = {
      slot,
      blockhash: bs58.encode(hash),
      blockTime: Math.max(parent?.blockTime ?? 0, Math.floor(this.clock())),
    };
    this.remember(this.open);
    return this.open;
  }

  /** The block height of `slot` (monotonic in the slot). */
  heightOf(slot: number): number {
    if (this.blockHeightSkip === 0) return slot;
    return slot - Math.min(this.blockHeightSkip, Math.floor(slot / 2));
  }

  /** Marks `slot` confirmed; returns the new finalized slot. */
  confirm(slot: number): number {
    this.confirmedSlot = slot;
    this.finalizedSlot = Math.max(this.finalizedSlot, slot - this.finalizeDepth, 0);
    return this.finalizedSlot;
  }

  slotAt(commitment: Commitment): number {
    if (commitment === 'processed') return this.open.slot;
    return commitment === 'confirmed' ? this.confirmedSlot : this.finalizedSlot;
  }

  commitmentOf(slot: number): Commitment {
    if (slot <= this.finalizedSlot) return 'finalized';
    return slot <= this.confirmedSlot ? 'confirmed' : 'processed';
  }

  info(slot: number): SlotInfo | undefined {
    return this.slots.get(slot);
  }

  latestBlockhash(commitment: Commitment): { slot: number; blockhash: string; lastValidBlockHeight: number } {
    const info = this.slots.get(this.slotAt(commitment)) ?? this.open;
    return {
      slot: info.slot,
      blockhash: info.blockhash,
      lastValidBlockHeight: this.heightOf(info.slot) + MAX_PROCESSING_AGE,
    };
  }

  isBlockhashValid(blockhash: string): boolean {
    const slot = this.blockhashSlots.get(blockhash);
    if (slot === undefined) return false;
    if (this.blockHeightSkip === 0) return this.open.slot <= slot + MAX_PROCESSING_AGE;
    return this.heightOf(this.open.slot) <= this.heightOf(slot) + MAX_PROCESSING_AGE;
  }

  /** Slots up to `last` a restart needs: the blockhash window plus the finalization lag. */
  recent(last: number): SlotInfo[] {
    const keep = MAX_PROCESSING_AGE + this.finalizeDepth + 1;
    return [...this.slots.values()]
      .filter((s) => s.slot <= last && s.slot > last - keep)
      .sort((a, b) => a.slot - b.slot);
  }
}
