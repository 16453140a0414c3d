// Opening a bank's state: a fresh genesis (the faucet's account placed, the
// genesis snapshot written) or a ledger loaded back into a fresh runtime,
// with the slot tracker resumed after the last persisted slot.
import { createHash, randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Logger } from 'pino';
import type { BankOptions } from './bank-types.ts';
import { ChainState } from './chain-state.ts';
import { SYSTEM_PROGRAM_ID } from './constants.ts';
import { type Ed25519Signer, generateSigner, signerFromSeed } from './ed25519.ts';
import { FAUCET_LAMPORTS } from './faucet.ts';
import { Ledger } from './ledger.ts';
import type { SnapshotHeader } from './ledger-codec.ts';
import { SlotTracker } from './slot-tracker.ts';

export interface OpenedState {
  genesisHash: string;
  faucet: Ed25519Signer;
  chain: ChainState;
  slots: SlotTracker;
  ledger: Ledger | null;
}

/** The snapshot header for state up to `slot`. */
export function snapshotHeader(s: OpenedState, slot: number): SnapshotHeader {
  return {
    version: 2,
    genesisHash: s.genesisHash,
    faucetSeed: bs58.encode(s.faucet.seed),
    slot,
    recentSlots: s.slots.recent(slot),
    transactionCount: s.chain.transactionCount,
  };
}

/** Loads the ledger in `opts.ledgerDir` (or starts in memory), ready for the open slot. */
export function openState(opts: BankOptions, log: Logger): OpenedState {
  const opened = opts.ledgerDir ? Ledger.open(opts.ledgerDir) : null;
  try {
    const loaded = opened?.loaded ?? null;
    const genesisHash = loaded
      ? loaded.header.genesisHash
      : bs58.encode(createHash('sha256').update(randomBytes(32)).digest());
    const state: OpenedState = {
      genesisHash,
      faucet: loaded ? signerFromSeed(bs58.decode(loaded.header.faucetSeed)) : generateSigner(),
      chain: new ChainState(),
      slots: new SlotTracker(genesisHash, opts.finalizeDepth ?? 32, opts.clock ?? (() => Date.now() / 1000)),
      ledger: opened?.ledger ?? null,
    };
    const { chain, slots } = state;
    let last: number;
    if (loaded) {
      for (const info of loaded.header.recentSlots) slots.remember(info);
      last = chain.restore(loaded, (info) => slots.remember(info));
      if (loaded.truncatedBytes > 0) {
        log.warn({ bytes: loaded.truncatedBytes }, 'devnet ledger: cut a torn or corrupt tail off the log');
      }
    } else {
      // The faucet's account is placed, not transferred, as a cluster's genesis accounts are.
      const faucet = bs58.encode(state.faucet.publicKey);
      const lamports = FAUCET_LAMPORTS;
      chain.place(faucet, { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false });
      chain.setClock(slots.openSlot(0));
      last = 0;
      state.ledger?.writeSnapshot(snapshotHeader(state, 0), chain.allAccounts(), []);
    }
    slots.confirm(last);
    chain.setClock(slots.openSlot(last + 1));
    return state;
  } catch (err) {
    opened?.ledger.close();
    throw err;
  }
}
