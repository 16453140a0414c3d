// Rows the account API answers with that a reader (the webmail in server
// mode, the CLI) decodes: the market's listings, offers and bids, and a
// wallet's pending timelocks. Type-only for the browser: nothing here runs.

export interface ListingRow {
  /** The listing account. */
  address: string;
  kind: ListingKind;
  /** The listed account: an Alias (kind alias) or a MailDomain (kind domain). */
  item: string;
  /** The alias's name (read from its creation) or the domain's (from its MailDomain); null when unknown. */
  name: string | null;
  holder: string;
  /** The only wallet that may buy (a domain listing named for one buyer); null: anyone. */
  buyer: string | null;
  mode: 'fixed' | 'auction';
  /** Fixed price, or the auction's reserve (decimal lamports). */
  price_lamports: string;
  created_at: number;
  /** Auction end (chain seconds; moved later by anti-snipe); null for a fixed price. */
  ends_at: number | null;
  antisnipe_window_secs: number;
  high_bid_lamports: string;
  high_bidder: string | null;
  /** The least the next bid may be (auctions), else null. */
  min_bid_lamports: string | null;
  /** The auction's end has passed at the snapshot's chain time (settle it). */
  ended: boolean;
  /** A domain listing's expiry (chain seconds: buy before it, anyone returns it from then on); null for aliases. */
  expires_at: number | null;
  /** The domain listing's expiry has passed at the snapshot's chain time (return it to its holder). */
  expired: boolean;
}

export interface EscrowRow {
  address: string;
  alias: string;
  name: string | null;
  holder: string;
  recipient: string;
  fee_lamports: string;
  offered_at: number;
  expires_at: number;
  expired: boolean;
}

export interface BidRow {
  address: string;
  listing: string;
  bidder: string;
  amount_lamports: string;
  bid_at: number;
}

export interface MarketSnapshot {
  /** Unix ms when the chain was read. */
  refreshedAt: number;
  /** The chain's time (Unix seconds) at that read. */
  chainTime: number;
  listings: ListingRow[];
  escrows: EscrowRow[];
  bids: BidRow[];
}

export type ListingKind = 'alias' | 'domain';

export interface TimelockRow {
  kind: 'mailbox_close' | 'domain_deactivation' | 'domain_reclaim';
  /** The pending record's account. */
  address: string;
  /** mailbox_close: the wallet; otherwise the MailDomain account. */
  subject: string;
  /** The domain's name (domain kinds), else null. */
  domain: string | null;
  requested_at: number;
  /** Chain seconds from which it can be completed. */
  ends_at: number;
  /** The window is over at `chain_time`: it can be completed now. */
  can_complete: boolean;
  /** domain_reclaim: the authority it installs and the delegate that paid for it. */
  new_authority?: string;
  payer?: string;
  /** How this wallet is involved: the mailbox owner, the domain's authority, or the reclaim's new authority. */
  role: 'owner' | 'authority' | 'new_authority';
}
