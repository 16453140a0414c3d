// Builders for the pin-lease and beacon instructions (docs/protocol.md,
// "Pin leases" and "Participant beacons"), with their account lists.
import type { TransactionInstruction } from '@solana/web3.js';
import type { Key } from './bytes.ts';
import { blake3Text } from './hash.ts';
import { instruction } from './ix-helpers.ts';
import { beaconAddress, pinLeaseAddress } from './pda.ts';

/** A PinLease's cid_hash: blake3 of the CID's text as given (pind's CIDv1 base32 form). */
export function pinLeaseCidHash(cid: string): Uint8Array {
  return blake3Text(cid);
}

/** The lease named by a CID (hashed here) or by its hash. */
export type LeaseCid = { cid: string } | { cidHash: Uint8Array };

function cidHashOf(ref: LeaseCid): Uint8Array {
  return 'cid' in ref ? pinLeaseCidHash(ref.cid) : ref.cidHash;
}

export type CreatePinLeaseParams = LeaseCid & {
  programId: Key;
  /** Signer; pays the lease's rent and the fee. */
  holder: Key;
  /** The pin operator's fee wallet (a System account); receives the fee. */
  operator: Key;
  /** Unix seconds; must be later than the chain time. */
  expiresAt: bigint;
  /** Lamports paid to the operator, at least 1. */
  feeLamports: bigint;
};

export function createPinLeaseInstruction(p: CreatePinLeaseParams): TransactionInstruction {
  const cidHash = cidHashOf(p);
  const accounts = {
    holder: p.holder,
    operator: p.operator,
    pinLease: pinLeaseAddress(p.programId, cidHash, p.holder)[0],
  };
  return instruction(p.programId, 'CreatePinLease', accounts, {
    cidHash,
    expiresAt: p.expiresAt,
    feeLamports: p.feeLamports,
  });
}

export type ClosePinLeaseParams = LeaseCid & { programId: Key; holder: Key };

export function closePinLeaseInstruction(p: ClosePinLeaseParams): TransactionInstruction {
  const lease = pinLeaseAddress(p.programId, cidHashOf(p), p.holder)[0];
  return instruction(p.programId, 'ClosePinLease', { holder: p.holder, pinLease: lease }, {});
}

export interface PublishBeaconParams {
  programId: Key;
  /** Signer; pays the rent when the beacon is created. */
  owner: Key;
  /** Tag bitmap (bit n = tag n, 0..63). */
  tags: bigint;
  /** CID of the encrypted profile blob, 1..=96 bytes of visible ASCII. */
  detailCid: string;
}

export function publishBeaconInstruction(p: PublishBeaconParams): TransactionInstruction {
  const accounts = { owner: p.owner, beacon: beaconAddress(p.programId, p.owner)[0] };
  return instruction(p.programId, 'PublishBeacon', accounts, { tags: p.tags, detailCid: p.detailCid });
}

export function closeBeaconInstruction(p: { programId: Key; owner: Key }): TransactionInstruction {
  const accounts = { owner: p.owner, beacon: beaconAddress(p.programId, p.owner)[0] };
  return instruction(p.programId, 'CloseBeacon', accounts, {});
}

/** The bitmap of tag numbers (each 0..63). */
export function beaconTagBits(tags: readonly number[]): bigint {
  let bits = 0n;
  for (const t of tags) {
    if (!Number.isInteger(t) || t < 0 || t > 63) throw new RangeError(`beacon tag must be 0..63, got ${t}`);
    bits |= 1n << BigInt(t);
  }
  return bits;
}

/** The tag numbers set in a bitmap, ascending. */
export function beaconTagList(bits: bigint): number[] {
  const out: number[] = [];
  for (let t = 0; t < 64; t++) if ((bits >> BigInt(t)) & 1n) out.push(t);
  return out;
}
