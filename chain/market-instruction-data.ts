// Instruction data of the marketplace: aliases (tags 34–41; docs/protocol.md
// "Alias marketplace") and domains (42–44, "Domain marketplace"). Kept apart from instruction-data.ts, which spreads
// these layouts into the program's one table.
import type { PublicKey } from '@solana/web3.js';
import { defineLayout, type Layout } from './accounts/layout.ts';

/** AliasListing.mode. */
export const LISTING_MODE = { fixed: 0, auction: 1 } as const;

export interface ListAliasData {
  kind: 'ListAlias';
  /** 0 fixed price, 1 auction (any other byte does not decode). */
  mode: number;
  /** Fixed price, or the auction's reserve (lowest first bid); ≥ 1. */
  priceLamports: bigint;
  /** Auction end (Unix seconds, later than the chain time); 0 for a fixed price. */
  expiresAt: bigint;
  /** Auction anti-snipe window, 0..=86 400 s; 0 for a fixed price. */
  antisnipeWindowSecs: bigint;
}
export interface BidAliasData {
  kind: 'BidAlias';
  amountLamports: bigint;
}
export interface BuyAliasData {
  kind: 'BuyAlias';
}
export interface SettleAuctionData {
  kind: 'SettleAuction';
}
export interface CancelListingData {
  kind: 'CancelListing';
}
export interface OfferAliasData {
  kind: 'OfferAlias';
  recipient: PublicKey;
  feeLamports: bigint;
  expiresAt: bigint;
}
export interface AcceptAliasData {
  kind: 'AcceptAlias';
}
export interface ReclaimAliasData {
  kind: 'ReclaimAlias';
}

export interface ListDomainData {
  kind: 'ListDomain';
  /** What the buyer pays the holder; 0 only with a named buyer (a gift). */
  priceLamports: bigint;
  /** Unix seconds, later than the chain time and at most DOMAIN_LISTING_MAX_SECS after it. */
  expiresAt: bigint;
  /** The only wallet that may buy; the zero key = anyone. */
  buyer: PublicKey;
}
export interface BuyDomainData {
  kind: 'BuyDomain';
}
export interface CancelDomainListingData {
  kind: 'CancelDomainListing';
}

export type MarketInstruction =
  | ListAliasData
  | BidAliasData
  | BuyAliasData
  | SettleAuctionData
  | CancelListingData
  | OfferAliasData
  | AcceptAliasData
  | ReclaimAliasData
  | ListDomainData
  | BuyDomainData
  | CancelDomainListingData;

type MarketLayouts = {
  readonly [K in MarketInstruction['kind']]: Layout<Extract<MarketInstruction, { kind: K }>>;
};

export const MARKET_INSTRUCTION_LAYOUTS: MarketLayouts = {
  ListAlias: defineLayout<ListAliasData>('ListAlias', 34, {
    mode: 'u8',
    priceLamports: 'u64',
    expiresAt: 'i64',
    antisnipeWindowSecs: 'i64',
  }),
  BidAlias: defineLayout<BidAliasData>('BidAlias', 35, { amountLamports: 'u64' }),
  BuyAlias: defineLayout<BuyAliasData>('BuyAlias', 36, {}),
  SettleAuction: defineLayout<SettleAuctionData>('SettleAuction', 37, {}),
  CancelListing: defineLayout<CancelListingData>('CancelListing', 38, {}),
  OfferAlias: defineLayout<OfferAliasData>('OfferAlias', 39, {
    recipient: 'key',
    feeLamports: 'u64',
    expiresAt: 'i64',
  }),
  AcceptAlias: defineLayout<AcceptAliasData>('AcceptAlias', 40, {}),
  ReclaimAlias: defineLayout<ReclaimAliasData>('ReclaimAlias', 41, {}),
  ListDomain: defineLayout<ListDomainData>('ListDomain', 42, {
    priceLamports: 'u64',
    expiresAt: 'i64',
    buyer: 'key',
  }),
  BuyDomain: defineLayout<BuyDomainData>('BuyDomain', 43, {}),
  CancelDomainListing: defineLayout<CancelDomainListingData>('CancelDomainListing', 44, {}),
};
