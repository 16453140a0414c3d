// Landed transactions (successes and failures that paid their fee), looked
// up by signature and by account. Bounded: the oldest records beyond the
// limit are dropped once they are too old to be replayed anyway.
import type { Address } from './account-store.ts';
import type { InnerInstructions, ReturnData } from './svm.ts';
import type { TransactionErrorJson } from './tx-error.ts';

export interface TxRecord {
  signature: string;
  slot: number;
  blockTime: number;
  err: TransactionErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  logs: string[];
  unitsConsumed: number;
  /** CPIs, per top-level instruction that made any. */
  innerInstructions: InnerInstructions[];
  returnData: ReturnData | null;
  /** The transaction as sent (signatures + message). */
  wire: Uint8Array;
  accountKeys: Address[];
}

export interface AddressQuery {
  limit: number;
  before?: string;
  until?: string;
  /** Skip records from later slots (not yet at the caller's commitment). */
  maxSlot?: number;
}

export class TxHistory {
  private readonly bySignature = new Map<string, TxRecord>();
  private readonly byAddress = new Map<Address, TxRecord[]>();
  private order: TxRecord[] = [];

  get size(): number {
    return this.bySignature.size;
  }

  has(signature: string): boolean {
    return this.bySignature.has(signature);
  }

  get(signature: string): TxRecord | undefined {
    return this.bySignature.get(signature);
  }

  add(record: TxRecord): void {
    this.bySignature.set(record.signature, record);
    this.order.push(record);
    for (const key of new Set(record.accountKeys)) {
      let list = this.byAddress.get(key);
      if (!list) {
        list = [];
        this.byAddress.set(key, list);
      }
      list.push(record);
    }
  }

  /** Oldest first. */
  all(): readonly TxRecord[] {
    return this.order;
  }

  /** Newest first, like getSignaturesForAddress. */
  forAddress(address: Address, query: AddressQuery): TxRecord[] {
    const list = this.byAddress.get(address) ?? [];
    const out: TxRecord[] = [];
    let i = list.length - 1;
    if (query.before !== undefined) {
      while (i >= 0 && list[i]?.signature !== query.before) i--;
      i--;
    }
    for (; i >= 0 && out.length < query.limit; i--) {
      const record = list[i] as TxRecord;
      if (record.signature === query.until) break;
      if (query.maxSlot === undefined || record.slot <= query.maxSlot) out.push(record);
    }
    return out;
  }

  /** Removes every record of a slot after `slot` (a rolled-back fork); returns them, oldest first. */
  removeAfter(slot: number): TxRecord[] {
    let keep = this.order.length;
    while (keep > 0 && (this.order[keep - 1] as TxRecord).slot > slot) keep--;
    const removed = this.order.slice(keep);
    if (removed.length === 0) return removed;
    this.order = this.order.slice(0, keep);
    for (const record of removed) {
      this.bySignature.delete(record.signature);
      for (const key of new Set(record.accountKeys)) {
        const list = this.byAddress.get(key);
        if (!list) continue;
        while (list.length > 0 && (list[list.length - 1] as TxRecord).slot > slot) list.pop();
        if (list.length === 0) this.byAddress.delete(key);
      }
    }
    return removed;
  }

  /** Drops the oldest records beyond `keep`, never one from `minSlot` or later. */
  prune(keep: number, minSlot: number): number {
    let drop = 0;
    while (this.order.length - drop > keep && (this.order[drop]?.slot ?? minSlot) < minSlot) drop++;
    if (drop === 0) return 0;
    const dropped = this.order.slice(0, drop);
    this.order = this.order.slice(drop);
    const touched = new Set<Address>();
    for (const record of dropped) {
      this.bySignature.delete(record.signature);
      for (const key of record.accountKeys) touched.add(key);
    }
    for (const key of touched) {
      const kept = (this.byAddress.get(key) ?? []).filter((r) => this.bySignature.get(r.signature) === r);
      if (kept.length > 0) this.byAddress.set(key, kept);
      else this.byAddress.delete(key);
    }
    return drop;
  }
}
