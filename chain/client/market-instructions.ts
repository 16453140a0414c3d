// Builders for the alias marketplace (docs/protocol.md "Alias marketplace"):
// listings (fixed price or auction), bids, purchase, settlement, cancel, and
// the escrowed hand-off to a named wallet. Every builder derives the PDAs
// itself; the ones whose account list depends on chain state (the current
// high bidder) take it as a parameter.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { type Key, toBase58, toPublicKey } from './bytes.ts';
import { normalizeAlias } from './hash.ts';
import { LISTING_MODE } from './instruction-data.ts';
import { instruction } from './ix-helpers.ts';
import { aliasAddress, aliasBidAddress, aliasEscrowAddress, aliasListingAddress } from './pda.ts';

/** Lowest raise over a high bid: max(high / 20, this). */
export const MIN_BID_INCREMENT_LAMPORTS = 1_000_000n;
/** Longest anti-snipe window an auction may ask for (seconds). */
export const ANTISNIPE_MAX_SECS = 86_400n;
/** Longest an auction may run: it ends at most this long after it is listed (seconds; ListAlias refuses more). */
export const AUCTION_MAX_SECS = 30n * 86_400n;

/** An alias by its name (any spelling normalizeAlias accepts) or by its account address. */
export type AliasRef = { alias: string } | { aliasAccount: Key };

/** The Alias account address of a reference. */
export function aliasAccountOf(programId: Key, ref: AliasRef): PublicKey {
  return 'alias' in ref
    ? aliasAddress(programId, normalizeAlias(ref.alias))[0]
    : toPublicKey(ref.aliasAccount);
}

/** The AliasListing address of an alias. */
export function listingOf(programId: Key, ref: AliasRef): PublicKey {
  return aliasListingAddress(programId, aliasAccountOf(programId, ref))[0];
}

/** The AliasEscrow address of an alias. */
export function escrowOf(programId: Key, ref: AliasRef): PublicKey {
  return aliasEscrowAddress(programId, aliasAccountOf(programId, ref))[0];
}

/** The least a bid must be: the reserve when nobody has bid, else high + max(high / 20, 0.001 SOL). */
export function minimumBid(listing: { priceLamports: bigint; highBidLamports: bigint }): bigint {
  const high = listing.highBidLamports;
  if (high === 0n) return listing.priceLamports;
  const inc = high / 20n;
  return high + (inc > MIN_BID_INCREMENT_LAMPORTS ? inc : MIN_BID_INCREMENT_LAMPORTS);
}

export type ListAliasParams = AliasRef & {
  programId: Key;
  /** Signer; the alias's owner; pays the listing's rent (returned when it closes). */
  holder: Key;
} & (
    | { priceLamports: bigint }
    | {
        auction: {
          /** Lowest first bid, ≥ 1. */
          reserveLamports: bigint;
          /** Unix seconds. */
          endsAt: bigint;
          /** 0..=86 400. */
          antisnipeSecs: bigint;
        };
      }
  );

export function listAliasInstruction(p: ListAliasParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const accounts = { holder: p.holder, alias, aliasListing: aliasListingAddress(p.programId, alias)[0] };
  const data =
    'auction' in p
      ? {
          mode: LISTING_MODE.auction,
          priceLamports: p.auction.reserveLamports,
          expiresAt: p.auction.endsAt,
          antisnipeWindowSecs: p.auction.antisnipeSecs,
        }
      : { mode: LISTING_MODE.fixed, priceLamports: p.priceLamports, expiresAt: 0n, antisnipeWindowSecs: 0n };
  return instruction(p.programId, 'ListAlias', accounts, data);
}

export type BidAliasParams = AliasRef & {
  programId: Key;
  /** Signer; pays the bid (held in its AliasBid account) and that account's rent. */
  bidder: Key;
  amountLamports: bigint;
  /** The listing's current high bidder (null when nobody has bid): refunded in this transaction. */
  highBidder: Key | null;
};

export function bidAliasInstruction(p: BidAliasParams): TransactionInstruction {
  const listing = listingOf(p.programId, p);
  const outbid = p.highBidder !== null && toBase58(p.highBidder) !== toBase58(p.bidder) ? p.highBidder : null;
  const accounts = {
    bidder: p.bidder,
    aliasListing: listing,
    aliasBid: aliasBidAddress(p.programId, listing, p.bidder)[0],
    previousBid: outbid === null ? null : aliasBidAddress(p.programId, listing, outbid)[0],
    previousBidder: outbid,
  };
  return instruction(p.programId, 'BidAlias', accounts, { amountLamports: p.amountLamports });
}

export type BuyAliasParams = AliasRef & {
  programId: Key;
  /** Signer; pays the price to the holder. */
  buyer: Key;
  /** The listing's holder (receives the price and the listing's rent). */
  holder: Key;
};

export function buyAliasInstruction(p: BuyAliasParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const accounts = {
    buyer: p.buyer,
    aliasListing: aliasListingAddress(p.programId, alias)[0],
    alias,
    holder: p.holder,
  };
  return instruction(p.programId, 'BuyAlias', accounts, {});
}

export type SettleAuctionParams = AliasRef & {
  programId: Key;
  holder: Key;
  /** The listing's high bidder, null when nobody bid (the alias returns to the holder). */
  highBidder: Key | null;
};

/** Anyone may send it after the end: no signer of its own (the fee payer signs the transaction). */
export function settleAuctionInstruction(p: SettleAuctionParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const listing = aliasListingAddress(p.programId, alias)[0];
  const accounts = {
    aliasListing: listing,
    alias,
    holder: p.holder,
    aliasBid: p.highBidder === null ? null : aliasBidAddress(p.programId, listing, p.highBidder)[0],
    bidder: p.highBidder,
  };
  return instruction(p.programId, 'SettleAuction', accounts, {});
}

export type CancelListingParams = AliasRef & { programId: Key; holder: Key };

export function cancelListingInstruction(p: CancelListingParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const accounts = { holder: p.holder, aliasListing: aliasListingAddress(p.programId, alias)[0], alias };
  return instruction(p.programId, 'CancelListing', accounts, {});
}

export type OfferAliasParams = AliasRef & {
  programId: Key;
  /** Signer; the alias's owner; pays the escrow's rent (returned when it closes). */
  holder: Key;
  /** The only wallet that may accept. */
  recipient: Key;
  /** Lamports the recipient pays the holder on acceptance (0 = a gift). */
  feeLamports: bigint;
  /** Unix seconds; acceptance must come before. */
  expiresAt: bigint;
};

export function offerAliasInstruction(p: OfferAliasParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const accounts = { holder: p.holder, alias, aliasEscrow: aliasEscrowAddress(p.programId, alias)[0] };
  return instruction(p.programId, 'OfferAlias', accounts, {
    recipient: toPublicKey(p.recipient),
    feeLamports: p.feeLamports,
    expiresAt: p.expiresAt,
  });
}

export type AcceptAliasParams = AliasRef & { programId: Key; recipient: Key; holder: Key };

export function acceptAliasInstruction(p: AcceptAliasParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const accounts = {
    recipient: p.recipient,
    aliasEscrow: aliasEscrowAddress(p.programId, alias)[0],
    alias,
    holder: p.holder,
  };
  return instruction(p.programId, 'AcceptAlias', accounts, {});
}

export type ReclaimAliasParams = AliasRef & {
  programId: Key;
  /** The holder (any time) or anyone (after expiry). */
  signer: Key;
  holder: Key;
};

export function reclaimAliasInstruction(p: ReclaimAliasParams): TransactionInstruction {
  const alias = aliasAccountOf(p.programId, p);
  const accounts = {
    signer: p.signer,
    aliasEscrow: aliasEscrowAddress(p.programId, alias)[0],
    alias,
    holder: p.holder,
  };
  return instruction(p.programId, 'ReclaimAlias', accounts, {});
}
