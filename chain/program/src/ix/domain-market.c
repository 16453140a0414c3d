/* Part of mail.c (one translation unit). The domain marketplace: ListDomain, BuyDomain, CancelDomainListing; the market's dispatch. */

/* ---- domain marketplace (tags 42-44, errors 49-52) ------------------------- */
/*
 * docs/protocol.md "Domain marketplace". A MailDomain changes hands at a
 * price, to anyone or to one named wallet, through a DomainListing that holds
 * the domain in custody: ListDomain sets MailDomain.authority to the listing
 * PDA, so nothing that asks for the authority's signature (relayed SendMail,
 * AttestSender, RequestDeactivation, a cancel by the authority) works while
 * it is listed, and only closing the listing sets the authority again: to the
 * buyer inside the instruction that pays the holder (BuyDomain), or back to
 * the holder (CancelDomainListing). A listing is bounded (at most
 * DOMAIN_LISTING_MAX) and anyone may return an expired one. No listing while
 * a deactivation or a reclaim is pending; no purchase while a reclaim is
 * pending; a reclaim does not settle while the domain is listed.
 */

static void seeds_domain_listing(Ctx *c, const u8 *domain) {
  SEEDS(c, SEED_DOMAIN_LISTING);
  seeds_add(c, domain, 32);
}

/* The domain is in its listing's custody: its authority is the canonical ["domain_listing", domain] PDA. */
static int domain_listed(Ctx *c, const Acc *dom) {
  seeds_domain_listing(c, dom->key);
  return pda_find(c, dom->data + MD_AUTHORITY) == OK;
}

/* `p` is the domain's pending record of `prefix` (InvalidPda otherwise) and does not exist (DomainPending). */
static u64 no_pending(Ctx *c, const Acc *p, const char *prefix, u64 len, const u8 *domain) {
  seeds_pending(c, prefix, len, domain);
  TRY(pda_find(c, p->key));
  return is_absent(p) ? OK : E_DOMAIN_PENDING;
}

#define NO_PENDING(c, p, s, domain) no_pending((c), (p), (s), sizeof(s) - 1, (domain))

/*
 * ListDomain: holder (s,w), mail_domain (w), domain_listing (w),
 * pending_deactivation, pending_reclaim, System.
 */
HANDLER list_domain(Ctx *c, const ListDomainArgs *a, ListDomainAccounts *k) {
  Acc *holder = k->holder, *dom = k->mail_domain, *ls = k->domain_listing;
  TRY(require_domain(c, dom));
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  if (!eq32(dom->data + MD_AUTHORITY, holder->key)) return domain_listed(c, dom) ? E_DOMAIN_LOCKED : E_UNAUTHORIZED;
  TRY(NO_PENDING(c, k->pending_deactivation, SEED_PENDING_DEACTIVATION, dom->key));
  TRY(NO_PENDING(c, k->pending_reclaim, SEED_PENDING_RECLAIM, dom->key));
  if (eq32(a->buyer, holder->key)) return E_INVALID_ARGUMENT;
  if (a->price_lamports == 0 && is_zero32(a->buyer)) return E_INVALID_ARGUMENT;
  i64 t = now(c), ends = a->expires_at;
  if (ends <= t) return E_LISTING_EXPIRED;
  if ((u64)(ends - t) > DOMAIN_LISTING_MAX) return E_INVALID_ARGUMENT;
  seeds_domain_listing(c, dom->key);
  TRY(pda_find(c, ls->key));
  if (!is_absent(ls)) return E_ALREADY_EXISTS;
  u64 lamports = rent(DOMAIN_LISTING_SIZE);
  TRY(check_payer(holder, lamports, 0));
  u8 bump = c->bump;
  TRY(create_pda(c, holder, ls, DOMAIN_LISTING_SIZE, lamports));
  u8 *d = ls->data;
  d[0] = TAG_DOMAIN_LISTING;
  cp32(d + DL_DOMAIN, dom->key);
  cp32(d + DL_HOLDER, holder->key);
  cp32(d + DL_BUYER, a->buyer);
  wr64(d + DL_PRICE, a->price_lamports);
  wr64(d + DL_CREATED_AT, (u64)t);
  wr64(d + DL_EXPIRES_AT, (u64)ends);
  d[DL_BUMP] = bump;
  cp32(dom->data + MD_AUTHORITY, ls->key);
  return OK;
}

/*
 * An existing DomainListing at its address, its MailDomain (the one it names,
 * valid, in the listing's custody) and its holder wallet.
 */
static u64 check_domain_custody(Ctx *c, const Acc *ls, const Acc *dom, const Acc *holder) {
  TRY(require_kind(c, ls, TAG_DOMAIN_LISTING));
  seeds_domain_listing(c, ls->data + DL_DOMAIN);
  if (!pda_with_bump(c, ls->data[DL_BUMP], ls->key)) return E_INVALID_PDA;
  if (!eq32(ls->data + DL_DOMAIN, dom->key)) return E_INVALID_ACCOUNT;
  TRY(require_domain(c, dom));
  if (!eq32(dom->data + MD_AUTHORITY, ls->key)) return E_INVALID_ACCOUNT;
  if (!eq32(ls->data + DL_HOLDER, holder->key)) return E_INVALID_ACCOUNT;
  return OK;
}

/* BuyDomain: buyer (s,w), mail_domain (w), domain_listing (w), holder (w), pending_reclaim, System. */
HANDLER buy_domain(Ctx *c, BuyDomainAccounts *k) {
  Acc *buyer = k->buyer, *dom = k->mail_domain, *ls = k->domain_listing, *holder = k->holder;
  TRY(check_domain_custody(c, ls, dom, holder));
  if (eq32(buyer->key, holder->key)) return E_OWN_LISTING;
  const u8 *named = ls->data + DL_BUYER;
  if (!is_zero32(named) && !eq32(named, buyer->key)) return E_UNAUTHORIZED;
  if (now(c) >= (i64)rd64(ls->data + DL_EXPIRES_AT)) return E_LISTING_EXPIRED;
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  TRY(NO_PENDING(c, k->pending_reclaim, SEED_PENDING_RECLAIM, dom->key));
  u64 price = rd64(ls->data + DL_PRICE), credit;
  TRY(add(price, *ls->lamports, &credit));
  TRY(check_payer(buyer, price, 0));
  TRY(check_credit(holder, credit));
  TRY(cpi_transfer(c, buyer, holder, price));
  close_account(ls, holder);
  cp32(dom->data + MD_AUTHORITY, buyer->key);
  return OK;
}

/*
 * CancelDomainListing: signer (s), mail_domain (w), domain_listing (w),
 * holder (w). The holder at any time, anyone from expires_at on; the domain
 * and the listing's rent go back to the holder.
 */
HANDLER cancel_domain_listing(Ctx *c, CancelDomainListingAccounts *k) {
  Acc *signer = k->signer, *dom = k->mail_domain, *ls = k->domain_listing, *holder = k->holder;
  TRY(check_domain_custody(c, ls, dom, holder));
  if (!eq32(signer->key, holder->key) && now(c) < (i64)rd64(ls->data + DL_EXPIRES_AT))
    return E_LISTING_NOT_EXPIRED;
  TRY(check_credit(holder, *ls->lamports));
  close_account(ls, holder);
  cp32(dom->data + MD_AUTHORITY, holder->key);
  return OK;
}
