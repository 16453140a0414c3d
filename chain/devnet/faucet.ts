// requestAirdrop: a System transfer from devnet's faucet key, signed here and
// processed like any other transaction (the runtime executes it) so it has a
// signature that confirms.
import bs58 from 'bs58';
import type { Address } from './account-store.ts';
import type { Bank, ProcessOutcome } from './bank.ts';
import { MAX_PROCESSING_AGE, SYSTEM_PROGRAM_ID } from './constants.ts';
import type { Ed25519Signer } from './ed25519.ts';
import { decodeTransaction } from './transaction.ts';

/** 500 million SOL: airdrops never run dry in practice. */
export const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

/** A signed legacy transaction: faucet → `to`, `lamports`, under `blockhash`. */
export function airdropTransaction(
  faucet: Ed25519Signer,
  to: string,
  lamports: bigint,
  blockhash: string,
): Uint8Array {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  const message = new Uint8Array(4 + 96 + 32 + 6 + data.length);
  let o = 0;
  // header: one signer (the faucet), no read-only signers, one read-only unsigned (System)
  message.set([1, 0, 1, 3], o);
  o += 4;
  for (const key of [faucet.publicKey, bs58.decode(to), bs58.decode(SYSTEM_PROGRAM_ID)]) {
    message.set(key, o);
    o += 32;
  }
  message.set(bs58.decode(blockhash), o);
  o += 32;
  message.set([1, 2, 2, 0, 1, data.length], o);
  o += 6;
  message.set(data, o);
  const signature = faucet.sign(message);
  const wire = new Uint8Array(1 + 64 + message.length);
  wire[0] = 1;
  wire.set(signature, 1);
  wire.set(message, 65);
  return wire;
}

/** Lands an airdrop through preflight; the outcome carries the signature (or the error). */
export function airdrop(bank: Bank, to: Address, lamports: bigint): ProcessOutcome {
  // An identical airdrop under the same blockhash would repeat a signature,
  // so walk back through still-valid blockhashes until one is unused.
  let outcome: ProcessOutcome | null = null;
  for (let slot = bank.slot; slot >= Math.max(0, bank.slot - MAX_PROCESSING_AGE); slot--) {
    const info = bank.slotInfo(slot);
    if (!info) continue;
    const tx = decodeTransaction(airdropTransaction(bank.faucet, to, lamports, info.blockhash));
    outcome = bank.processTransaction(tx, { mode: 'preflight', verifySignatures: false });
    if (outcome.err !== 'AlreadyProcessed') return outcome;
  }
  return outcome ?? { signature: '', err: 'BlockhashNotFound', execution: null, landed: false };
}
