/* Part of mail.c (one translation unit). SendMail, DeleteMail, ClaimBounty. */

/* ---- SendMail, DeleteMail, ClaimBounty -------------------------------------- */

static u64 send_extras(Ctx *c, const Acc *sender, const u8 *recipient);
static u64 send_rule(Ctx *c);
static u64 send_extras_cost(Ctx *c, const Acc *wallet, u64 lamports, u64 *total);
static u64 send_extras_pay(Ctx *c, Acc *sender, Acc *wallet);

/*
 * The relayed sender's domain (eighth account) or the direct sender's
 * from_hash. A relayed send speaks for a sender the program cannot check, on
 * the word of a domain's authority: only the domain the mailbox names may,
 * and a mailbox without a domain takes no relayed mail.
 */
static u64 check_sender(Ctx *c, const Acc *sender, const Acc *mb) {
  const SendMailArgs *a = &c->a.send_mail;
  if (c->sx.relayed) {
    const Acc *dom = &c->acc[7];
    TRY(require_domain(c, dom));
    if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
    if (!eq32(dom->data + MD_AUTHORITY, sender->key)) return E_UNAUTHORIZED;
    if (!eq32(mb->data + MB_DOMAIN, dom->key)) return E_RELAY_NOT_ALLOWED;
    if (a->bounty_lamports > 0) return E_BOUNTY_NOT_ALLOWED;
    return OK;
  }
  wallet_hash(c, sender->key);
  return eq32(c->hash, a->from_hash) ? OK : E_FROM_HASH_MISMATCH;
}

/*
 * The frombox account of a send: a stored one must be this send's (its own
 * seeds); an absent one must sit at the PDA of (from_hash, recipient).
 */
static u64 check_send_frombox(Ctx *c, const Acc *fb, const u8 *recipient, int *present) {
  TRY(read_kind(c, fb, TAG_FROMBOX, present));
  if (*present) {
    if (!eq32(fb->data + FB_FROM_HASH, c->a.send_mail.from_hash) || !eq32(fb->data + FB_RECIPIENT, recipient))
      return E_INVALID_PDA;
    seeds_frombox(c, fb->data + FB_FROM_HASH, recipient);
    return pda_with_bump(c, fb->data[FB_BUMP], fb->key) ? OK : E_INVALID_PDA;
  }
  seeds_frombox(c, c->a.send_mail.from_hash, recipient);
  return pda_find(c, fb->key);
}

HANDLER send_mail(Ctx *c, const SendMailArgs *a, SendMailAccounts *k) {
  if (c->n < 7 || c->n > 9) return E_INVALID_INSTRUCTION;
  Acc *sender = k->sender, *mb = k->mailbox, *em = k->email, *fb = k->frombox;
  Acc *wallet = k->recipient_wallet, *po = k->postoffice;
  TRY(require_mailbox(c, mb));
  const u8 *recipient = mb->data + MB_OWNER;
  if (!eq32(wallet->key, recipient)) return E_INVALID_ACCOUNT;
  TRY(require_postoffice(c, po));
  TRY(send_extras(c, sender, recipient));
  TRY(check_sender(c, sender, mb));
  TRY(check_cid(a->cid, a->cid_len, mb->data[MB_NO_IPFS]));
  i64 t = now(c);
  if (a->bounty_lamports > 0) {
    if (a->expires_at <= t) return E_BOUNTY_EXPIRED;
  } else if (a->expires_at != 0) {
    return E_INVALID_ARGUMENT;
  }
  u64 index = rd64(mb->data + MB_MAIL_COUNT);
  seeds_email(c, recipient, mb->data + MB_MAIL_COUNT);
  TRY(pda_find(c, em->key));
  u8 email_bump = c->bump;
  if (!is_absent(em)) return E_ALREADY_EXISTS;

  int fb_present;
  TRY(check_send_frombox(c, fb, recipient, &fb_present));
  int free_send = eq32(sender->key, recipient) ||
                  (fb_present ? rd64(fb->data + FB_REQUIRED) == 0 : rd64(mb->data + MB_DEFAULT_POSTAGE) == 0);
  if (!free_send) TRY(send_rule(c));
  if (c->sx.by_rule && c->sx.rule_postage == 0) free_send = 1;
  int stamp = !free_send && !c->sx.by_rule;
  u64 share = 0, surcharge = 0, stamps = 0;
  if (stamp) {
    stamps = fb_present ? rd64(fb->data + FB_STAMPS) : 0;
    if (stamps == 0) return E_POSTAGE_REQUIRED;
    /* A wallet's own stamps pay only for its own (direct) sends. */
    if (c->sx.relayed && fb->data[FB_WALLET]) return E_STAMPS_NOT_RELAYABLE;
    /*
     * Postage and surcharge are both fixed at purchase: the frombox holds
     * rent + postage_escrow + the surcharges paid in, and one stamp takes
     * its share of each (the last one the remainder), whatever the
     * postoffice charges now.
     */
    u64 escrow = rd64(fb->data + FB_ESCROW), have = *fb->lamports, floor;
    TRY(add(rent(*fb->len), escrow, &floor));
    if (have < floor) return E_INSUFFICIENT_FUNDS;
    share = escrow / stamps;
    surcharge = (have - floor) / stamps;
    TRY(check_credit(wallet, share));
  }
  c->sx.credited = stamp ? share : (free_send ? 0 : c->sx.rule_postage);
  u64 size = EMAIL_FIXED + 4 + a->cid_len;
  u64 lamports, next_count, total;
  TRY(add(rent(size), a->bounty_lamports, &lamports));
  TRY(send_extras_cost(c, wallet, lamports, &total));
  TRY(check_payer(sender, total, surcharge));
  TRY(add(index, 1, &next_count));

  if (stamp) {
    /* The spent stamp pays out first, as in the reference: the surcharge may fund the Email. */
    move_lamports(fb, wallet, share);
    move_lamports(fb, sender, surcharge);
    c->moved[0] = fb;
    c->moved[1] = wallet;
    c->nmoved = 2;
  }
  seeds_email(c, recipient, mb->data + MB_MAIL_COUNT);
  c->bump = email_bump;
  TRY(create_pda(c, sender, em, size, lamports));
  if (stamp) {
    wr64(fb->data + FB_STAMPS, stamps - 1);
    wr64(fb->data + FB_ESCROW, rd64(fb->data + FB_ESCROW) - share);
  }
  u8 *d = em->data;
  d[0] = TAG_EMAIL;
  cp32(d + EM_RECIPIENT, recipient);
  cp32(d + EM_SENDER, sender->key);
  cp32(d + EM_FROM_HASH, a->from_hash);
  memcpy(d + EM_INDEX, mb->data + MB_MAIL_COUNT, 8);
  wr64(d + EM_EPOCH, (u64)t);
  wr64(d + EM_BOUNTY, a->bounty_lamports);
  wr64(d + EM_EXPIRES_AT, (u64)a->expires_at);
  cp32(d + EM_REPLY_TO, a->reply_to_hash);
  cp32(d + EM_RENT_PAYER, sender->key);
  d[EM_BUMP] = email_bump;
  wr32(d + EM_CID, (u32)a->cid_len);
  memcpy(d + EM_CID + 4, a->cid, a->cid_len);
  wr64(mb->data + MB_MAIL_COUNT, next_count);
  return send_extras_pay(c, sender, wallet);
}

HANDLER delete_mail(Ctx *c, DeleteMailAccounts *k) {
  Acc *signer = k->signer, *em = k->email, *payer = k->rent_payer;
  TRY(require_email(c, em));
  int by_recipient = eq32(em->data + EM_RECIPIENT, signer->key);
  if (!by_recipient && !eq32(em->data + EM_SENDER, signer->key)) return E_UNAUTHORIZED;
  if (!eq32(em->data + EM_RENT_PAYER, payer->key)) return E_INVALID_ACCOUNT;
  /* A bounty is the recipient's to claim until its window ends: the sender takes it back only after. */
  if (!by_recipient && rd64(em->data + EM_BOUNTY) > 0 && now(c) < (i64)rd64(em->data + EM_EXPIRES_AT))
    return E_BOUNTY_LOCKED;
  TRY(check_credit(payer, *em->lamports));
  close_account(em, payer);
  return OK;
}

HANDLER claim_bounty(Ctx *c, ClaimBountyAccounts *k) {
  Acc *recipient = k->recipient, *em = k->email;
  TRY(require_email(c, em));
  if (!eq32(em->data + EM_RECIPIENT, recipient->key)) return E_UNAUTHORIZED;
  u64 bounty = rd64(em->data + EM_BOUNTY);
  if (bounty == 0) return E_NOTHING_TO_CLAIM;
  i64 t = now(c);
  if (t < (i64)rd64(em->data + EM_EPOCH) || t >= (i64)rd64(em->data + EM_EXPIRES_AT)) return E_BOUNTY_EXPIRED;
  if (*em->lamports < bounty) return E_INSUFFICIENT_FUNDS;
  TRY(check_credit(recipient, bounty));
  move_lamports(em, recipient, bounty);
  wr64(em->data + EM_BOUNTY, 0);
  return OK;
}
