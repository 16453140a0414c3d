// The bank's events: a slot opened, a transaction landed (processed), a
// closed slot reached confirmed or finalized. Listeners run synchronously.

import type { AccountState, Address } from './account-store.ts';
import type { TxRecord } from './history.ts';
import type { SlotRecord } from './ledger-codec.ts';

export type Writes = ReadonlyMap<Address, AccountState | null>;
type Listener<A extends unknown[]> = (...args: A) => void;

export class BankEvents {
  private readonly slot: Listener<[number]>[] = [];
  private readonly processed: Listener<[TxRecord, Writes]>[] = [];
  private readonly committed: Listener<[SlotRecord, 'confirmed' | 'finalized']>[] = [];

  /** A new slot opened. Returns the unsubscribe function. */
  onSlot(listener: Listener<[number]>): () => void {
    return add(this.slot, listener);
  }

  /** A transaction landed (processed commitment), with the account states it wrote. */
  onProcessed(listener: Listener<[TxRecord, Writes]>): () => void {
    return add(this.processed, listener);
  }

  /** A closed slot reached confirmed (durable in the ledger) or finalized. */
  onCommitted(listener: Listener<[SlotRecord, 'confirmed' | 'finalized']>): () => void {
    return add(this.committed, listener);
  }

  emitSlot(slot: number): void {
    for (const l of [...this.slot]) l(slot);
  }

  emitProcessed(record: TxRecord, writes: Writes): void {
    for (const l of [...this.processed]) l(record, writes);
  }

  emitCommitted(record: SlotRecord, commitment: 'confirmed' | 'finalized'): void {
    for (const l of [...this.committed]) l(record, commitment);
  }
}

function add<A extends unknown[]>(list: Listener<A>[], listener: Listener<A>): () => void {
  list.push(listener);
  return () => {
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  };
}
