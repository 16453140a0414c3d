/* Part of mail.c (one translation unit). CreateFrombox, UpdateFrombox, AddStamps / BuyStamps / TopUpStamps, ReclaimFromboxStamps. */

/* ---- fromboxes and stamps --------------------------------------------------- */

HANDLER create_frombox(Ctx *c, const CreateFromboxArgs *a, CreateFromboxAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *fb = k->frombox;
  TRY(require_own_mailbox(c, mb, owner->key));
  seeds_frombox(c, a->from_hash, owner->key);
  TRY(pda_find(c, fb->key));
  if (!is_absent(fb)) return E_ALREADY_EXISTS;
  u64 lamports = rent(FROMBOX_SIZE);
  TRY(check_payer(owner, lamports, 0));
  TRY(create_pda(c, owner, fb, FROMBOX_SIZE, lamports));
  u8 *d = fb->data;
  d[0] = TAG_FROMBOX;
  cp32(d + FB_FROM_HASH, a->from_hash);
  cp32(d + FB_RECIPIENT, owner->key);
  wr64(d + FB_REQUIRED, a->required_postage);
  wr64(d + FB_STAMPS, 0);
  wr64(d + FB_ESCROW, 0);
  d[FB_WALLET] = 0;
  d[FB_BUMP] = c->bump;
  return OK;
}

HANDLER update_frombox(Ctx *c, const UpdateFromboxArgs *a, UpdateFromboxAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *fb = k->frombox;
  TRY(require_own_mailbox(c, mb, owner->key));
  seeds_frombox(c, a->from_hash, owner->key);
  TRY(expect_pda(c, fb, TAG_FROMBOX, FB_BUMP));
  TRY(require_kind(c, fb, TAG_FROMBOX));
  wr64(fb->data + FB_REQUIRED, a->required_postage);
  return OK;
}


/*
 * The price rules of AddStamps / BuyStamps / TopUpStamps (docs/protocol.md
 * "Stamp prices"). The ceiling bounds what one stamp costs the buyer in all:
 * postage + surcharge + fee, each read live, so neither the recipient's
 * reprice nor the admin's fee change can land first and charge more.
 */
static u64 price(Ctx *c, const Acc *mb, const Acc *po, const Acc *fb, int present) {
  Purchase *p = &c->purchase;
  const Acc *buyer = &c->acc[0];
  p->postage = present ? rd64(fb->data + FB_REQUIRED) : rd64(mb->data + MB_DEFAULT_POSTAGE);
  int own = eq32(mb->data + MB_OWNER, buyer->key);
  u64 fee = own ? 0 : rd64(po->data + PO_STAMP_FEE), surcharge = rd64(po->data + PO_SURCHARGE);
  u64 each;
  TRY(add(p->postage, surcharge, &each));
  TRY(add(each, fee, &each));
  if (p->has_ceiling && each > p->ceiling) return E_PRICE_ABOVE_CEILING;
  u64 n = p->ordered;
  if (n == 0 && !own) return E_INVALID_ARGUMENT;
  u64 escrow, surcharges;
  TRY(mul(p->postage, n, &escrow));
  TRY(mul(surcharge, n, &surcharges));
  TRY(mul(fee, n, &p->fees));
  TRY(add(escrow, surcharges, &p->held));
  TRY(add(present ? rd64(fb->data + FB_STAMPS) : 0, n, &p->stamps));
  TRY(add(present ? rd64(fb->data + FB_ESCROW) : 0, escrow, &p->escrow));
  return OK;
}

static u64 purchase_stamps(Ctx *c) {
  BuyStampsAccounts k;
  TRY(bind_buy_stamps(c, &k));
  Acc *buyer = k.buyer, *mb = k.mailbox, *fb = k.frombox, *po = k.postoffice;
  u8 tag = c->tag;
  /* AddStamps names the frombox by its hash; BuyStamps and TopUpStamps (one layout) by the buyer's own. */
  const AddStampsArgs *add_args = &c->a.add_stamps;
  Purchase *order = &c->purchase;
  if (tag == IX_ADD_STAMPS) {
    order->ordered = add_args->stamps;
    order->has_ceiling = add_args->has_max_price_lamports;
    order->ceiling = add_args->max_price_lamports;
  } else {
    const BuyStampsArgs *own = tag == IX_BUY_STAMPS ? &c->a.buy_stamps : (const BuyStampsArgs *)(const void *)&c->a.top_up_stamps;
    order->ordered = own->stamps;
    order->has_ceiling = own->has_max_price_lamports;
    order->ceiling = own->max_price_lamports;
  }
  TRY(require_mailbox(c, mb));
  TRY(require_postoffice(c, po));
  const u8 *recipient = mb->data + MB_OWNER;
  const u8 *from_hash = tag == IX_ADD_STAMPS ? add_args->from_hash : NULL;
  /* Stamps the sender wallet buys for itself (BuyStamps, TopUpStamps, or AddStamps on its own hash). */
  wallet_hash(c, buyer->key);
  int own_stamps = tag != IX_ADD_STAMPS || eq32(c->hash, add_args->from_hash);
  if (tag != IX_ADD_STAMPS) from_hash = c->hash;
  seeds_frombox(c, from_hash, recipient);
  TRY(expect_pda(c, fb, TAG_FROMBOX, FB_BUMP));
  u8 bump = c->bump;
  int present;
  TRY(read_kind(c, fb, TAG_FROMBOX, &present));
  if (tag == IX_BUY_STAMPS && present) return E_ALREADY_EXISTS;
  if (tag != IX_BUY_STAMPS && !present) return E_NOT_FOUND;
  TRY(price(c, mb, po, fb, present));
  Purchase p = c->purchase;
  u64 into_frombox = p.held;
  if (!present) TRY(add(rent(FROMBOX_SIZE), p.held, &into_frombox));
  u64 total;
  TRY(add(into_frombox, p.fees, &total));
  TRY(check_payer(buyer, total, 0));
  if (p.fees > 0) TRY(add(rd64(po->data + PO_FEES_COLLECTED), p.fees, &p.fees_collected));

  if (present) {
    TRY(cpi_transfer(c, buyer, fb, into_frombox));
  } else {
    seeds_frombox(c, from_hash, recipient);
    c->bump = bump;
    TRY(create_pda(c, buyer, fb, FROMBOX_SIZE, into_frombox));
    u8 *d = fb->data;
    d[0] = TAG_FROMBOX;
    cp32(d + FB_FROM_HASH, from_hash);
    cp32(d + FB_RECIPIENT, recipient);
    wr64(d + FB_REQUIRED, p.postage);
    d[FB_WALLET] = 0;
    d[FB_BUMP] = bump;
  }
  TRY(cpi_transfer(c, buyer, po, p.fees));
  u8 *d = fb->data;
  wr64(d + FB_STAMPS, p.stamps);
  wr64(d + FB_ESCROW, p.escrow);
  if (own_stamps) d[FB_WALLET] = 1;
  if (p.fees > 0) wr64(po->data + PO_FEES_COLLECTED, p.fees_collected);
  return OK;
}

HANDLER reclaim_frombox_stamps(Ctx *c, ReclaimFromboxStampsAccounts *k) {
  Acc *sender = k->sender, *mb = k->mailbox, *fb = k->frombox;
  TRY(require_mailbox(c, mb));
  wallet_hash(c, sender->key);
  seeds_frombox(c, c->hash, mb->data + MB_OWNER);
  TRY(expect_pda(c, fb, TAG_FROMBOX, FB_BUMP));
  TRY(require_kind(c, fb, TAG_FROMBOX));
  if (rd64(fb->data + FB_STAMPS) == 0) return E_NOTHING_TO_CLAIM;
  /* Everything above rent is stamp money: postage_escrow + stamps x surcharge as paid in. */
  u64 floor = rent(FROMBOX_SIZE);
  u64 refund = *fb->lamports > floor ? *fb->lamports - floor : 0;
  TRY(check_credit(sender, refund));
  move_lamports(fb, sender, refund);
  wr64(fb->data + FB_STAMPS, 0);
  wr64(fb->data + FB_ESCROW, 0);
  return OK;
}
