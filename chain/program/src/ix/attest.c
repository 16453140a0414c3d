/* Part of mail.c (one translation unit). Sender attestations, reputation and recipient rules, and SendMail's use of them. */

/* ---- sender attestations, reputation and recipient rules (tags 28-31) ------- */

static void seeds_attestation(Ctx *c, const u8 *domain, const u8 *wallet) {
  SEEDS(c, SEED_ATTESTATION);
  seeds_add(c, domain, 32);
  seeds_add(c, wallet, 32);
}

static void seeds_reputation(Ctx *c, const u8 *wallet) {
  SEEDS(c, SEED_REPUTATION);
  seeds_add(c, wallet, 32);
}

static void seeds_recipient_rule(Ctx *c, const u8 *owner) {
  SEEDS(c, SEED_RECIPIENT_RULE);
  seeds_add(c, owner, 32);
}

/*
 * AttestSender: the domain's authority vouches for `wallet` as a sender of
 * its domain. Anyone else signing is a forged attestation (NotDomainAuthority);
 * an inactive domain attests nobody. One record per (domain, wallet).
 */
HANDLER attest_sender(Ctx *c, const AttestSenderArgs *a, AttestSenderAccounts *k) {
  Acc *authority = k->authority, *payer = k->payer, *dom = k->mail_domain, *att = k->attestation;
  TRY(require_domain(c, dom));
  if (!eq32(dom->data + MD_AUTHORITY, authority->key)) return E_NOT_DOMAIN_AUTHORITY;
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  if (is_zero32(a->wallet)) return E_INVALID_ARGUMENT;
  seeds_attestation(c, dom->key, a->wallet);
  TRY(pda_find(c, att->key));
  if (!is_absent(att)) return E_ALREADY_EXISTS;
  u64 lamports = rent(ATTESTATION_SIZE);
  TRY(check_payer(payer, lamports, 0));
  u8 bump = c->bump;
  TRY(create_pda(c, payer, att, ATTESTATION_SIZE, lamports));
  u8 *d = att->data;
  d[0] = TAG_ATTESTATION;
  cp32(d + SA_DOMAIN, dom->key);
  cp32(d + SA_WALLET, a->wallet);
  cp32(d + SA_AUTHORITY, authority->key);
  cp32(d + SA_RENT_PAYER, payer->key);
  wr64(d + SA_ATTESTED_AT, (u64)now(c));
  d[SA_BUMP] = bump;
  return OK;
}

/*
 * RevokeAttestation: the domain's current authority, or the attested wallet
 * itself, closes the record; its rent goes back to the rent payer.
 */
HANDLER revoke_attestation(Ctx *c, RevokeAttestationAccounts *k) {
  Acc *signer = k->signer, *att = k->attestation, *payer = k->rent_payer, *dom = k->mail_domain;
  TRY(require_kind(c, att, TAG_ATTESTATION));
  seeds_attestation(c, att->data + SA_DOMAIN, att->data + SA_WALLET);
  if (!pda_with_bump(c, att->data[SA_BUMP], att->key)) return E_INVALID_PDA;
  if (!eq32(dom->key, att->data + SA_DOMAIN)) return E_INVALID_ACCOUNT;
  if (!eq32(signer->key, att->data + SA_WALLET)) {
    TRY(require_domain(c, dom));
    if (!eq32(dom->data + MD_AUTHORITY, signer->key)) return E_UNAUTHORIZED;
  }
  if (!eq32(payer->key, att->data + SA_RENT_PAYER)) return E_INVALID_ACCOUNT;
  TRY(check_credit(payer, *att->lamports));
  close_account(att, payer);
  return OK;
}

/* SetRecipientRule: creates or replaces the owner's rule (a Mailbox is needed). */
HANDLER set_recipient_rule(Ctx *c, const SetRecipientRuleArgs *a, SetRecipientRuleAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *rule = k->recipient_rule;
  TRY(require_own_mailbox(c, mb, owner->key));
  if (a->min_reputation_lamports == 0) return E_INVALID_ARGUMENT;
  seeds_recipient_rule(c, owner->key);
  TRY(expect_pda(c, rule, TAG_RECIPIENT_RULE, RR_BUMP));
  u8 bump = c->bump;
  int present;
  TRY(read_kind(c, rule, TAG_RECIPIENT_RULE, &present));
  if (!present) {
    u64 lamports = rent(RECIPIENT_RULE_SIZE);
    TRY(check_payer(owner, lamports, 0));
    TRY(create_pda(c, owner, rule, RECIPIENT_RULE_SIZE, lamports));
  }
  u8 *d = rule->data;
  d[0] = TAG_RECIPIENT_RULE;
  cp32(d + RR_OWNER, owner->key);
  wr64(d + RR_MIN_REPUTATION, a->min_reputation_lamports);
  wr64(d + RR_POSTAGE, a->postage_lamports);
  d[RR_BUMP] = bump;
  return OK;
}

/* CloseRecipientRule: the owner's own rule; its rent back to the owner. */
HANDLER close_recipient_rule(Ctx *c, CloseRecipientRuleAccounts *k) {
  Acc *owner = k->owner, *rule = k->recipient_rule;
  seeds_recipient_rule(c, owner->key);
  TRY(expect_pda(c, rule, TAG_RECIPIENT_RULE, RR_BUMP));
  TRY(require_kind(c, rule, TAG_RECIPIENT_RULE));
  TRY(check_credit(owner, *rule->lamports));
  close_account(rule, owner);
  return OK;
}

/* `a` is the signer's SenderReputation address (existing or not); sets rep_bump / rep_present. */
static int is_reputation_of(Ctx *c, const Acc *a, const u8 *wallet) {
  int present;
  if (read_kind(c, a, TAG_REPUTATION, &present) != OK) return 0;
  seeds_reputation(c, wallet);
  if (present ? !pda_with_bump(c, a->data[SR_BUMP], a->key) : pda_find(c, a->key) != OK) return 0;
  c->sx.rep_bump = c->bump;
  c->sx.rep_present = (u8)present;
  return 1;
}

/*
 * SendMail's account forms: 7 (direct), 8 with a MailDomain (relayed), 8 with
 * the signer's SenderReputation (direct, recorded), 9 with the reputation and
 * the recipient's RecipientRule PDA (direct, recorded, rule applied when it
 * exists). An eighth account that is not the signer's reputation address is
 * read as the relayed form's MailDomain, so its errors are the relayed ones.
 */
static u64 send_extras(Ctx *c, const Acc *sender, const u8 *recipient) {
  SendExtras *x = &c->sx;
  memset(x, 0, sizeof(*x));
  if (c->n == 7) return OK;
  Acc *a7 = &c->acc[7];
  if (c->n == 8 && !is_reputation_of(c, a7, sender->key)) {
    x->relayed = 1;
    return OK;
  }
  if (c->n == 9) {
    int domain;
    if (read_kind(c, a7, TAG_MAIL_DOMAIN, &domain) == OK && domain) return E_INVALID_INSTRUCTION;
    if (!is_reputation_of(c, a7, sender->key)) return E_INVALID_PDA;
    Acc *rule = &c->acc[8];
    seeds_recipient_rule(c, recipient);
    TRY(expect_pda(c, rule, TAG_RECIPIENT_RULE, RR_BUMP));
    x->rule = rule;
  }
  TRY(need_writable(a7));
  x->rep = a7;
  return OK;
}

/* A send that needs postage: the recipient's rule replaces the stamp when the signer's reputation reaches it. */
static u64 send_rule(Ctx *c) {
  SendExtras *x = &c->sx;
  if (!x->rule) return OK;
  int present;
  TRY(read_kind(c, x->rule, TAG_RECIPIENT_RULE, &present));
  if (!present) return OK;
  u64 reputation = x->rep_present ? rd64(x->rep->data + SR_SPEND) : 0;
  if (reputation < rd64(x->rule->data + RR_MIN_REPUTATION)) return OK;
  x->by_rule = 1;
  x->rule_postage = rd64(x->rule->data + RR_POSTAGE);
  return OK;
}

/* What the signer pays beyond the Email (`lamports`): postage under a rule, and a new reputation's rent. */
static u64 send_extras_cost(Ctx *c, const Acc *wallet, u64 lamports, u64 *total) {
  SendExtras *x = &c->sx;
  TRY(add(lamports, x->by_rule ? x->rule_postage : 0, total));
  if (x->by_rule) TRY(check_credit(wallet, x->rule_postage));
  if (x->rep && x->credited > 0) {
    if (!x->rep_present) TRY(add(*total, rent(REPUTATION_SIZE), total));
    TRY(add(x->rep_present ? rd64(x->rep->data + SR_SPEND) : 0, x->credited, &x->cumulative));
  }
  return OK;
}

/*
 * After the Email: postage under a rule moves from the signer to the
 * recipient, and the postage this send paid (a spent stamp's share or the
 * rule's postage) is added to the signer's reputation, created on first use.
 */
static u64 send_extras_pay(Ctx *c, Acc *sender, Acc *wallet) {
  SendExtras *x = &c->sx;
  if (x->by_rule) TRY(cpi_transfer(c, sender, wallet, x->rule_postage));
  if (!x->rep || x->credited == 0) return OK;
  Acc *rep = x->rep;
  if (!x->rep_present) {
    seeds_reputation(c, sender->key);
    c->bump = x->rep_bump;
    TRY(create_pda(c, sender, rep, REPUTATION_SIZE, rent(REPUTATION_SIZE)));
    rep->data[0] = TAG_REPUTATION;
    cp32(rep->data + SR_WALLET, sender->key);
    rep->data[SR_BUMP] = x->rep_bump;
  }
  wr64(rep->data + SR_SPEND, x->cumulative);
  wr64(rep->data + SR_UPDATED_AT, (u64)now(c));
  return OK;
}
