// Builders for the domain marketplace (docs/protocol.md "Domain marketplace"):
// a MailDomain listed at a price, for anyone or for one named wallet (the
// escrowed hand-off), bought, or returned to its holder. While listed, the
// domain's authority is the listing's address (custody); every builder
// derives the PDAs itself from the domain.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { type Key, toPublicKey, ZERO_KEY } from './bytes.ts';
import { instruction } from './ix-helpers.ts';
import { domainListingAddress, pendingDeactivationAddress, pendingReclaimAddress } from './pda.ts';
import { type DomainRef, domainAccount } from './timelock-instructions.ts';

/** Longest a domain may stay listed (seconds): its relayed mail is refused meanwhile. */
export const DOMAIN_LISTING_MAX_SECS = 7n * 86_400n;

/** The DomainListing address of a domain (by name or MailDomain account). */
export function domainListingOf(programId: Key, ref: DomainRef): PublicKey {
  return domainListingAddress(programId, domainAccount(programId, ref))[0];
}

/** True when `authority` (a MailDomain's) is that domain's listing: the domain is in custody. */
export function isDomainListed(programId: Key, mailDomain: Key, authority: Key): boolean {
  return domainListingAddress(programId, mailDomain)[0].equals(toPublicKey(authority));
}

export type ListDomainParams = DomainRef & {
  programId: Key;
  /** Signer: the domain's authority; pays the listing's rent (returned when it closes). */
  holder: Key;
  /** What the buyer pays; 0 only with a named buyer (a gift). */
  priceLamports: bigint;
  /** Unix seconds; the listing can be bought before it, and returned by anyone from it on. */
  expiresAt: bigint;
  /** The only wallet that may buy (an escrowed hand-off); omitted = anyone. */
  buyer?: Key;
};

export function listDomainInstruction(p: ListDomainParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const accounts = {
    holder: p.holder,
    mailDomain,
    domainListing: domainListingAddress(p.programId, mailDomain)[0],
    pendingDeactivation: pendingDeactivationAddress(p.programId, mailDomain)[0],
    pendingReclaim: pendingReclaimAddress(p.programId, mailDomain)[0],
  };
  return instruction(p.programId, 'ListDomain', accounts, {
    priceLamports: p.priceLamports,
    expiresAt: p.expiresAt,
    buyer: p.buyer === undefined ? ZERO_KEY : toPublicKey(p.buyer),
  });
}

export type BuyDomainParams = DomainRef & {
  programId: Key;
  /** Signer: pays the price to the holder and becomes the domain's authority. */
  buyer: Key;
  /** The listing's holder (receives the price and the listing's rent). */
  holder: Key;
};

export function buyDomainInstruction(p: BuyDomainParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const accounts = {
    buyer: p.buyer,
    mailDomain,
    domainListing: domainListingAddress(p.programId, mailDomain)[0],
    holder: p.holder,
    pendingReclaim: pendingReclaimAddress(p.programId, mailDomain)[0],
  };
  return instruction(p.programId, 'BuyDomain', accounts, {});
}

export type CancelDomainListingParams = DomainRef & {
  programId: Key;
  /** The holder (any time) or anyone (from the listing's expiry on). */
  signer: Key;
  holder: Key;
};

export function cancelDomainListingInstruction(p: CancelDomainListingParams): TransactionInstruction {
  const mailDomain = domainAccount(p.programId, p);
  const accounts = {
    signer: p.signer,
    mailDomain,
    domainListing: domainListingAddress(p.programId, mailDomain)[0],
    holder: p.holder,
  };
  return instruction(p.programId, 'CancelDomainListing', accounts, {});
}
