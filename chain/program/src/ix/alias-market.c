/* Part of mail.c (one translation unit). The alias marketplace's listings: ListAlias, BidAlias, BuyAlias, SettleAuction, CancelListing. */

/* ---- alias marketplace (tags 34-41, errors 40-48) ---------------------------- */
/*
 * docs/protocol.md "Alias marketplace". The alias itself is in the program's
 * custody while listed or offered: ListAlias / OfferAlias set Alias.owner to
 * the listing / escrow PDA, so every rule that asks for the owner's signature
 * refuses the holder (AliasLocked) until the record is closed, and the record
 * closing is the only way the owner changes again: to the buyer, the winning
 * bidder or the escrow's recipient (who also become Alias.address, the wallet
 * mail to the alias is delivered to), or back to the holder. Bid lamports sit
 * in the AliasBid PDA of the current high bidder (at most one per listing);
 * fixed prices and escrow fees move from payer to holder inside the
 * instruction that hands the alias over.
 */

static void seeds_listing(Ctx *c, const u8 *alias) {
  SEEDS(c, SEED_ALIAS_LISTING);
  seeds_add(c, alias, 32);
}

static void seeds_escrow(Ctx *c, const u8 *alias) {
  SEEDS(c, SEED_ALIAS_ESCROW);
  seeds_add(c, alias, 32);
}

static void seeds_bid(Ctx *c, const u8 *listing, const u8 *bidder) {
  SEEDS(c, SEED_ALIAS_BID);
  seeds_add(c, listing, 32);
  seeds_add(c, bidder, 32);
}

/* An Alias read by address, checked against its stored bump. */
static u64 require_alias(Ctx *c, const Acc *al) {
  TRY(require_kind(c, al, TAG_ALIAS));
  seeds_alias(c, al->data + AL_NAME_HASH);
  return pda_with_bump(c, al->data[AL_BUMP], al->key) ? OK : E_INVALID_PDA;
}

/* A record of `tag` (listing or escrow) read by address; its stored alias and bump give that address. */
static u64 require_alias_record(Ctx *c, const Acc *rec, u8 tag) {
  TRY(require_kind(c, rec, tag));
  if (tag == TAG_ALIAS_LISTING) {
    seeds_listing(c, rec->data + LS_ALIAS);
    return pda_with_bump(c, rec->data[LS_BUMP], rec->key) ? OK : E_INVALID_PDA;
  }
  seeds_escrow(c, rec->data + ES_ALIAS);
  return pda_with_bump(c, rec->data[ES_BUMP], rec->key) ? OK : E_INVALID_PDA;
}

/*
 * The record's alias and holder accounts: the alias named in the record
 * (stored at offset 1 of both kinds) and in the record's custody, the holder
 * wallet the record names.
 */
static u64 check_custody(Ctx *c, const Acc *rec, const Acc *al, const Acc *holder, u64 holder_off) {
  if (!eq32(rec->data + 1, al->key)) return E_INVALID_ACCOUNT;
  TRY(require_alias(c, al));
  if (!eq32(al->data + AL_OWNER, rec->key)) return E_INVALID_ACCOUNT;
  if (!eq32(rec->data + holder_off, holder->key)) return E_INVALID_ACCOUNT;
  return OK;
}

/* The signer may list or offer the alias: it is its owner. An alias in a listing's or escrow's custody is locked. */
static u64 check_alias_owner(Ctx *c, const Acc *al, const u8 *signer) {
  const u8 *owner = al->data + AL_OWNER;
  if (eq32(owner, signer)) return OK;
  seeds_listing(c, al->key);
  if (pda_find(c, owner) == OK) return E_ALIAS_LOCKED;
  seeds_escrow(c, al->key);
  if (pda_find(c, owner) == OK) return E_ALIAS_LOCKED;
  return E_UNAUTHORIZED;
}

/* The alias leaves custody: to `to` as owner, and as delivery address when it changed hands. */
static void release_alias(Acc *al, const u8 *to, int sold) {
  cp32(al->data + AL_OWNER, to);
  if (sold) cp32(al->data + AL_ADDRESS, to);
}

HANDLER list_alias(Ctx *c, const ListAliasArgs *a, ListAliasAccounts *k) {
  Acc *holder = k->holder, *al = k->alias, *ls = k->alias_listing;
  TRY(require_alias(c, al));
  TRY(check_alias_owner(c, al, holder->key));
  i64 t = now(c);
  i64 ends = a->expires_at, window = a->antisnipe_window_secs;
  if (a->price_lamports == 0) return E_INVALID_ARGUMENT;
  if (a->mode == 0) {
    if (ends != 0 || window != 0) return E_INVALID_ARGUMENT;
  } else if (ends <= t || ends - t > AUCTION_MAX || window < 0 || window > ANTISNIPE_MAX) {
    return E_INVALID_ARGUMENT;
  }
  seeds_listing(c, al->key);
  TRY(pda_find(c, ls->key));
  if (!is_absent(ls)) return E_ALREADY_EXISTS;
  u64 lamports = rent(ALIAS_LISTING_SIZE);
  TRY(check_payer(holder, lamports, 0));
  u8 bump = c->bump;
  TRY(create_pda(c, holder, ls, ALIAS_LISTING_SIZE, lamports));
  u8 *d = ls->data;
  d[0] = TAG_ALIAS_LISTING;
  cp32(d + LS_ALIAS, al->key);
  cp32(d + LS_HOLDER, holder->key);
  wr64(d + LS_PRICE, a->price_lamports);
  wr64(d + LS_CREATED_AT, (u64)t);
  wr64(d + LS_EXPIRES_AT, (u64)ends);
  d[LS_MODE] = a->mode;
  wr64(d + LS_ANTISNIPE, (u64)window);
  wr64(d + LS_HIGH_BID, 0);
  memset(d + LS_HIGH_BIDDER, 0, 32);
  d[LS_BUMP] = bump;
  cp32(al->data + AL_OWNER, ls->key);
  return OK;
}

/*
 * BidAlias: bidder (s,w), listing (w), bid (w), System, and when another
 * wallet holds the high bid: its bid (w) and that wallet (w), refunded here.
 */
HANDLER bid_alias(Ctx *c, const BidAliasArgs *a, BidAliasAccounts *k) {
  if (c->n != 4 && c->n != 6) return E_INVALID_INSTRUCTION;
  Acc *bidder = k->bidder, *ls = k->alias_listing, *bid = k->alias_bid;
  TRY(require_alias_record(c, ls, TAG_ALIAS_LISTING));
  u8 *d = ls->data;
  if (d[LS_MODE] != 1) return E_WRONG_LISTING_MODE;
  if (eq32(d + LS_HOLDER, bidder->key)) return E_OWN_LISTING;
  i64 t = now(c), ends = (i64)rd64(d + LS_EXPIRES_AT);
  if (t >= ends) return E_AUCTION_ENDED;
  u64 high = rd64(d + LS_HIGH_BID), min = rd64(d + LS_PRICE);
  const u8 *high_bidder = d + LS_HIGH_BIDDER;
  int raise = high > 0 && eq32(high_bidder, bidder->key);
  int refund = high > 0 && !raise;
  if (c->n != (refund ? 6 : 4)) return E_INVALID_INSTRUCTION;
  if (high > 0) {
    u64 inc = high / BID_INCREMENT_DIVISOR;
    TRY(add(high, inc > MIN_BID_INCREMENT ? inc : MIN_BID_INCREMENT, &min));
  }
  if (a->amount_lamports < min) return E_BID_TOO_LOW;
  seeds_bid(c, ls->key, bidder->key);
  TRY(expect_pda(c, bid, TAG_ALIAS_BID, BD_BUMP));
  u8 bump = c->bump;
  int present;
  TRY(read_kind(c, bid, TAG_ALIAS_BID, &present));
  /* Only the high bidder has a bid account (outbid ones are closed), so presence follows `raise`. */
  if (present != raise) return raise ? E_NOT_FOUND : E_ALREADY_EXISTS;
  u64 pay = a->amount_lamports - high;
  if (!raise) TRY(add(rent(ALIAS_BID_SIZE), a->amount_lamports, &pay));
  Acc *prev = &c->acc[4], *prev_wallet = &c->acc[5];
  if (refund) {
    TRY(need_writable(prev));
    TRY(need_writable(prev_wallet));
    if (!eq32(prev_wallet->key, high_bidder)) return E_INVALID_ACCOUNT;
    seeds_bid(c, ls->key, high_bidder);
    TRY(expect_pda(c, prev, TAG_ALIAS_BID, BD_BUMP));
    TRY(require_kind(c, prev, TAG_ALIAS_BID));
    TRY(check_credit(prev_wallet, *prev->lamports));
  }
  TRY(check_payer(bidder, pay, 0));
  /*
   * Anti-snipe: another wallet's bid inside the last `window` seconds moves
   * the end to t + window (the leader raising its own bid snipes nobody),
   * never past the listing's hard limit, so bids are never locked for long.
   */
  i64 window = (i64)rd64(d + LS_ANTISNIPE);
  if (!raise && ends - t < window) {
    i64 limit = (i64)rd64(d + LS_CREATED_AT) + AUCTION_MAX + ANTISNIPE_MAX;
    ends = t + window < limit ? t + window : limit;
    if (ends < (i64)rd64(d + LS_EXPIRES_AT)) ends = (i64)rd64(d + LS_EXPIRES_AT);
  }

  if (raise) {
    TRY(cpi_transfer(c, bidder, bid, pay));
  } else {
    seeds_bid(c, ls->key, bidder->key);
    c->bump = bump;
    TRY(create_pda(c, bidder, bid, ALIAS_BID_SIZE, pay));
    bid->data[0] = TAG_ALIAS_BID;
    cp32(bid->data + BD_LISTING, ls->key);
    cp32(bid->data + BD_BIDDER, bidder->key);
    bid->data[BD_BUMP] = bump;
  }
  wr64(bid->data + BD_AMOUNT, a->amount_lamports);
  wr64(bid->data + BD_BID_AT, (u64)t);
  if (refund) close_account(prev, prev_wallet);
  wr64(d + LS_HIGH_BID, a->amount_lamports);
  cp32(d + LS_HIGH_BIDDER, bidder->key);
  wr64(d + LS_EXPIRES_AT, (u64)ends);
  return OK;
}

/* BuyAlias: buyer (s,w), listing (w), alias (w), holder (w), System. Fixed price only. */
HANDLER buy_alias(Ctx *c, BuyAliasAccounts *k) {
  Acc *buyer = k->buyer, *ls = k->alias_listing, *al = k->alias, *holder = k->holder;
  TRY(require_alias_record(c, ls, TAG_ALIAS_LISTING));
  TRY(check_custody(c, ls, al, holder, LS_HOLDER));
  if (ls->data[LS_MODE] != 0) return E_WRONG_LISTING_MODE;
  if (eq32(buyer->key, holder->key)) return E_OWN_LISTING;
  u64 price = rd64(ls->data + LS_PRICE), credit;
  TRY(add(price, *ls->lamports, &credit));
  TRY(check_payer(buyer, price, 0));
  TRY(check_credit(holder, credit));
  TRY(cpi_transfer(c, buyer, holder, price));
  close_account(ls, holder);
  release_alias(al, buyer->key, 1);
  return OK;
}

/*
 * SettleAuction (anyone, after the end): listing (w), alias (w), holder (w),
 * and when there is a high bid: its bid (w) and the bidder (w).
 */
HANDLER settle_auction(Ctx *c, SettleAuctionAccounts *k) {
  if (c->n != 3 && c->n != 5) return E_INVALID_INSTRUCTION;
  Acc *ls = k->alias_listing, *al = k->alias, *holder = k->holder;
  TRY(require_alias_record(c, ls, TAG_ALIAS_LISTING));
  TRY(check_custody(c, ls, al, holder, LS_HOLDER));
  u8 *d = ls->data;
  if (d[LS_MODE] != 1) return E_WRONG_LISTING_MODE;
  if (now(c) < (i64)rd64(d + LS_EXPIRES_AT)) return E_AUCTION_NOT_ENDED;
  u64 high = rd64(d + LS_HIGH_BID);
  if (c->n != (high > 0 ? 5 : 3)) return E_INVALID_INSTRUCTION;
  u64 credit;
  TRY(add(high, *ls->lamports, &credit));
  TRY(check_credit(holder, credit));
  if (high == 0) {
    close_account(ls, holder);
    release_alias(al, holder->key, 0);
    return OK;
  }
  Acc *bid = &c->acc[3], *bidder = &c->acc[4];
  TRY(need_writable(bid));
  TRY(need_writable(bidder));
  if (!eq32(bidder->key, d + LS_HIGH_BIDDER)) return E_INVALID_ACCOUNT;
  seeds_bid(c, ls->key, bidder->key);
  TRY(expect_pda(c, bid, TAG_ALIAS_BID, BD_BUMP));
  TRY(require_kind(c, bid, TAG_ALIAS_BID));
  if (rd64(bid->data + BD_AMOUNT) != high || *bid->lamports < high) return E_INVALID_ACCOUNT;
  TRY(check_credit(bidder, *bid->lamports - high));
  move_lamports(bid, holder, high);
  close_account(bid, bidder);
  close_account(ls, holder);
  release_alias(al, bidder->key, 1);
  return OK;
}

/* CancelListing: holder (s,w), listing (w), alias (w); only while nobody has bid. */
HANDLER cancel_listing(Ctx *c, CancelListingAccounts *k) {
  Acc *holder = k->holder, *ls = k->alias_listing, *al = k->alias;
  TRY(require_alias_record(c, ls, TAG_ALIAS_LISTING));
  if (!eq32(ls->data + LS_HOLDER, holder->key)) return E_UNAUTHORIZED;
  TRY(check_custody(c, ls, al, holder, LS_HOLDER));
  if (rd64(ls->data + LS_HIGH_BID) != 0) return E_LISTING_HAS_BIDS;
  TRY(check_credit(holder, *ls->lamports));
  close_account(ls, holder);
  release_alias(al, holder->key, 0);
  return OK;
}
