/* Part of mail.c (one translation unit). The alias marketplace's escrow: OfferAlias, AcceptAlias, ReclaimAlias. */

/* OfferAlias: holder (s,w), alias (w), escrow (w), System. */
HANDLER offer_alias(Ctx *c, const OfferAliasArgs *a, OfferAliasAccounts *k) {
  Acc *holder = k->holder, *al = k->alias, *es = k->alias_escrow;
  TRY(require_alias(c, al));
  TRY(check_alias_owner(c, al, holder->key));
  if (is_zero32(a->recipient) || eq32(a->recipient, holder->key)) return E_INVALID_ARGUMENT;
  i64 t = now(c);
  if (a->expires_at <= t) return E_ESCROW_EXPIRED;
  seeds_escrow(c, al->key);
  TRY(pda_find(c, es->key));
  if (!is_absent(es)) return E_ALREADY_EXISTS;
  u64 lamports = rent(ALIAS_ESCROW_SIZE);
  TRY(check_payer(holder, lamports, 0));
  u8 bump = c->bump;
  TRY(create_pda(c, holder, es, ALIAS_ESCROW_SIZE, lamports));
  u8 *d = es->data;
  d[0] = TAG_ALIAS_ESCROW;
  cp32(d + ES_ALIAS, al->key);
  cp32(d + ES_HOLDER, holder->key);
  cp32(d + ES_RECIPIENT, a->recipient);
  wr64(d + ES_FEE, a->fee_lamports);
  wr64(d + ES_OFFERED_AT, (u64)t);
  wr64(d + ES_EXPIRES_AT, (u64)a->expires_at);
  d[ES_BUMP] = bump;
  cp32(al->data + AL_OWNER, es->key);
  return OK;
}

/* AcceptAlias: recipient (s,w), escrow (w), alias (w), holder (w), System; before expiry. */
HANDLER accept_alias(Ctx *c, AcceptAliasAccounts *k) {
  Acc *recipient = k->recipient, *es = k->alias_escrow, *al = k->alias, *holder = k->holder;
  TRY(require_alias_record(c, es, TAG_ALIAS_ESCROW));
  TRY(check_custody(c, es, al, holder, ES_HOLDER));
  if (!eq32(es->data + ES_RECIPIENT, recipient->key)) return E_UNAUTHORIZED;
  if (now(c) >= (i64)rd64(es->data + ES_EXPIRES_AT)) return E_ESCROW_EXPIRED;
  u64 fee = rd64(es->data + ES_FEE), credit;
  TRY(add(fee, *es->lamports, &credit));
  TRY(check_payer(recipient, fee, 0));
  TRY(check_credit(holder, credit));
  TRY(cpi_transfer(c, recipient, holder, fee));
  close_account(es, holder);
  release_alias(al, recipient->key, 1);
  return OK;
}

/* ReclaimAlias: signer (s), escrow (w), alias (w), holder (w); the holder any time, anyone after expiry. */
HANDLER reclaim_alias(Ctx *c, ReclaimAliasAccounts *k) {
  Acc *signer = k->signer, *es = k->alias_escrow, *al = k->alias, *holder = k->holder;
  TRY(require_alias_record(c, es, TAG_ALIAS_ESCROW));
  TRY(check_custody(c, es, al, holder, ES_HOLDER));
  if (!eq32(signer->key, holder->key) && now(c) < (i64)rd64(es->data + ES_EXPIRES_AT))
    return E_ESCROW_NOT_EXPIRED;
  TRY(check_credit(holder, *es->lamports));
  close_account(es, holder);
  release_alias(al, holder->key, 0);
  return OK;
}
