// The node's copy of the committed account state, with an owner index for
// getProgramAccounts. The runtime (svm.ts) holds the same accounts for
// execution; the bank copies every account a transaction changed into this
// store, which also feeds the ledger and the PubSub notifications. Stored
// states are never mutated: a write replaces the object, so slot records and
// notifications can keep references to them.

/** 32-byte public key as base58 text; the map key. */
export type Address = string;

export interface AccountState {
  lamports: bigint;
  /** base58 program id that owns the account. */
  owner: Address;
  data: Uint8Array;
  executable: boolean;
}

export class AccountStore {
  private readonly accounts = new Map<Address, AccountState>();
  private readonly byOwner = new Map<Address, Set<Address>>();

  get(address: Address): AccountState | undefined {
    return this.accounts.get(address);
  }

  /** null deletes. */
  set(address: Address, state: AccountState | null): void {
    const old = this.accounts.get(address);
    if (old && (!state || old.owner !== state.owner)) this.byOwner.get(old.owner)?.delete(address);
    if (!state) {
      this.accounts.delete(address);
      return;
    }
    this.accounts.set(address, state);
    let owned = this.byOwner.get(state.owner);
    if (!owned) {
      owned = new Set();
      this.byOwner.set(state.owner, owned);
    }
    owned.add(address);
  }

  *ownedBy(owner: Address): Generator<[Address, AccountState]> {
    for (const address of this.byOwner.get(owner) ?? []) {
      const state = this.accounts.get(address);
      if (state) yield [address, state];
    }
  }

  entries(): IterableIterator<[Address, AccountState]> {
    return this.accounts.entries();
  }
}
