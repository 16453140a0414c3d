// Builders for the frombox and stamp instructions (CreateFrombox …
// ReclaimFromboxStamps), with the account lists of docs/protocol.md.
import type { TransactionInstruction } from '@solana/web3.js';
import type { Key } from './bytes.ts';
import { fromHash as hashOfFrom } from './hash.ts';
import { instruction } from './ix-helpers.ts';
import { fromboxAddress, mailboxAddress, postofficeAddress } from './pda.ts';

export interface FromboxPriceParams {
  programId: Key;
  /** The recipient mailbox's owner. */
  owner: Key;
  fromHash: Uint8Array;
  requiredPostage: bigint;
}

/** The owner, its mailbox and the frombox of `fromHash` toward it. */
function fromboxAccounts(p: FromboxPriceParams) {
  return {
    owner: p.owner,
    mailbox: mailboxAddress(p.programId, p.owner)[0],
    frombox: fromboxAddress(p.programId, p.fromHash, p.owner)[0],
  };
}

export function createFromboxInstruction(p: FromboxPriceParams): TransactionInstruction {
  return instruction(p.programId, 'CreateFrombox', fromboxAccounts(p), {
    fromHash: p.fromHash,
    requiredPostage: p.requiredPostage,
  });
}

export function updateFromboxInstruction(p: FromboxPriceParams): TransactionInstruction {
  return instruction(p.programId, 'UpdateFrombox', fromboxAccounts(p), {
    fromHash: p.fromHash,
    requiredPostage: p.requiredPostage,
  });
}

/** The stamp purchases' accounts after the paying signer: the recipient's mailbox, the frombox, the postoffice. */
function stampAccounts(programId: Key, recipient: Key, fromHash: Uint8Array) {
  return {
    mailbox: mailboxAddress(programId, recipient)[0],
    frombox: fromboxAddress(programId, fromHash, recipient)[0],
    postoffice: postofficeAddress(programId)[0],
  };
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
  const accounts = { payer: p.payer, ...stampAccounts(p.programId, p.recipient, p.fromHash) };
  return instruction(p.programId, 'AddStamps', accounts, {
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
  const accounts = { buyer: p.buyer, ...stampAccounts(p.programId, p.recipient, hashOfFrom(p.buyer)) };
  return instruction(p.programId, 'BuyStamps', accounts, {
    stamps: p.stamps,
    maxPriceLamports: p.maxPriceLamports ?? null,
  });
}

/** Buys more stamps on the buyer's existing frombox. */
export function topUpStampsInstruction(p: BuyStampsParams): TransactionInstruction {
  const accounts = { buyer: p.buyer, ...stampAccounts(p.programId, p.recipient, hashOfFrom(p.buyer)) };
  return instruction(p.programId, 'TopUpStamps', accounts, {
    stamps: p.stamps,
    maxPriceLamports: p.maxPriceLamports ?? null,
  });
}

export function reclaimFromboxStampsInstruction(p: {
  programId: Key;
  sender: Key;
  recipient: Key;
}): TransactionInstruction {
  const accounts = {
    sender: p.sender,
    mailbox: mailboxAddress(p.programId, p.recipient)[0],
    frombox: fromboxAddress(p.programId, hashOfFrom(p.sender), p.recipient)[0],
  };
  return instruction(p.programId, 'ReclaimFromboxStamps', accounts, {});
}
