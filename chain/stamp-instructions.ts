// Builders for the frombox and stamp instructions (CreateFrombox …
// ReclaimFromboxStamps), with the account lists of docs/protocol.md.
import type { AccountMeta, TransactionInstruction } from '@solana/web3.js';
import type { Key } from './bytes.ts';
import { fromHash as hashOfFrom } from './hash.ts';
import { ix, readonly, signer, signerW, system, writable } from './ix-helpers.ts';
import { fromboxAddress, mailboxAddress, postofficeAddress } from './pda.ts';

export interface FromboxPriceParams {
  programId: Key;
  /** The recipient mailbox's owner. */
  owner: Key;
  fromHash: Uint8Array;
  requiredPostage: bigint;
}

export function createFromboxInstruction(p: FromboxPriceParams): TransactionInstruction {
  const keys = [
    signerW(p.owner),
    readonly(mailboxAddress(p.programId, p.owner)[0]),
    writable(fromboxAddress(p.programId, p.fromHash, p.owner)[0]),
    system(),
  ];
  return ix(p.programId, keys, {
    kind: 'CreateFrombox',
    fromHash: p.fromHash,
    requiredPostage: p.requiredPostage,
  });
}

export function updateFromboxInstruction(p: FromboxPriceParams): TransactionInstruction {
  const keys = [
    signer(p.owner),
    readonly(mailboxAddress(p.programId, p.owner)[0]),
    writable(fromboxAddress(p.programId, p.fromHash, p.owner)[0]),
  ];
  return ix(p.programId, keys, {
    kind: 'UpdateFrombox',
    fromHash: p.fromHash,
    requiredPostage: p.requiredPostage,
  });
}

function stampKeys(programId: Key, buyer: Key, recipient: Key, fromHash: Uint8Array): AccountMeta[] {
  return [
    signerW(buyer),
    readonly(mailboxAddress(programId, recipient)[0]),
    writable(fromboxAddress(programId, fromHash, recipient)[0]),
    writable(postofficeAddress(programId)[0]),
    system(),
  ];
}

export interface AddStampsParams {
  programId: Key;
  payer: Key;
  recipient: Key;
  /** Any sender's hash, e.g. fromHash('alice@example.com') for a relayed sender. */
  fromHash: Uint8Array;
  stamps: bigint;
  /** Refuse when one stamp would cost more than this in all (postage + surcharge + fee; `StampQuote.perStamp`). */
  maxPriceLamports?: bigint;
}

export function addStampsInstruction(p: AddStampsParams): TransactionInstruction {
  return ix(p.programId, stampKeys(p.programId, p.payer, p.recipient, p.fromHash), {
    kind: 'AddStamps',
    fromHash: p.fromHash,
    stamps: p.stamps,
    maxPriceLamports: p.maxPriceLamports ?? null,
  });
}

export interface BuyStampsParams {
  programId: Key;
  /** Buys toward the frombox keyed on fromHash(buyer). */
  buyer: Key;
  recipient: Key;
  stamps: bigint;
  /** Refuse when one stamp would cost more than this in all (postage + surcharge + fee; `StampQuote.perStamp`). */
  maxPriceLamports?: bigint;
}

/** First purchase: creates the buyer's frombox toward `recipient`. */
export function buyStampsInstruction(p: BuyStampsParams): TransactionInstruction {
  return ix(p.programId, stampKeys(p.programId, p.buyer, p.recipient, hashOfFrom(p.buyer)), {
    kind: 'BuyStamps',
    stamps: p.stamps,
    maxPriceLamports: p.maxPriceLamports ?? null,
  });
}

/** Buys more stamps on the buyer's existing frombox. */
export function topUpStampsInstruction(p: BuyStampsParams): TransactionInstruction {
  return ix(p.programId, stampKeys(p.programId, p.buyer, p.recipient, hashOfFrom(p.buyer)), {
    kind: 'TopUpStamps',
    stamps: p.stamps,
    maxPriceLamports: p.maxPriceLamports ?? null,
  });
}

export function reclaimFromboxStampsInstruction(p: {
  programId: Key;
  sender: Key;
  recipient: Key;
}): TransactionInstruction {
  const keys = [
    signerW(p.sender),
    readonly(mailboxAddress(p.programId, p.recipient)[0]),
    writable(fromboxAddress(p.programId, hashOfFrom(p.sender), p.recipient)[0]),
  ];
  return ix(p.programId, keys, { kind: 'ReclaimFromboxStamps' });
}
