/* Part of mail.c (one translation unit). CreateMailbox, SetMailboxFlags, SetMailboxDomain, PublishKey, RemoveKey, CreateAlias. */

/* ---- CreateMailbox, SetMailboxFlags, PublishKey, RemoveKey, CreateAlias ---- */

/*
 * A mailbox names `domain` (CreateMailbox, SetMailboxDomain): `dom` is that
 * MailDomain, valid and active. Naming a domain is the owner's choice of
 * whose relayed mail it takes (SendMail), so the authority's consent is not
 * asked: it grants the domain nothing it must do (docs/protocol.md "Trust
 * model").
 */
static u64 check_joined_domain(Ctx *c, const Acc *dom, const u8 *domain) {
  if (!eq32(dom->key, domain)) return E_INVALID_ACCOUNT;
  TRY(require_domain(c, dom));
  return dom->data[MD_IS_ACTIVE] ? OK : E_DOMAIN_INACTIVE;
}

HANDLER create_mailbox(Ctx *c, const CreateMailboxArgs *a, CreateMailboxAccounts *k) {
  int with_domain = !is_zero32(a->domain);
  ACCOUNTS(c, with_domain ? 5 : 4);
  Acc *payer = k->payer, *owner = k->owner, *mb = k->mailbox;
  seeds_mailbox(c, owner->key);
  TRY(pda_find(c, mb->key));
  u8 bump = c->bump;
  if (!is_absent(mb)) return E_ALREADY_EXISTS;
  if (with_domain) TRY(check_joined_domain(c, &c->acc[4], a->domain));
  u64 lamports = rent(MAILBOX_SIZE);
  TRY(check_payer(payer, lamports, 0));
  seeds_mailbox(c, owner->key);
  c->bump = bump;
  TRY(create_pda(c, payer, mb, MAILBOX_SIZE, lamports));
  u8 *d = mb->data;
  d[0] = TAG_MAILBOX;
  cp32(d + MB_OWNER, owner->key);
  wr64(d + MB_MAIL_COUNT, 0);
  wr64(d + MB_DEFAULT_POSTAGE, a->default_postage);
  cp32(d + MB_DOMAIN, a->domain);
  d[MB_NO_IPFS] = 0;
  d[MB_BUMP] = bump;
  return OK;
}

HANDLER set_mailbox_flags(Ctx *c, const SetMailboxFlagsArgs *a, SetMailboxFlagsAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox;
  TRY(require_mailbox(c, mb));
  if (!eq32(mb->data + MB_OWNER, owner->key)) return E_UNAUTHORIZED;
  if (a->has_no_ipfs) mb->data[MB_NO_IPFS] = a->no_ipfs;
  if (a->has_default_postage) wr64(mb->data + MB_DEFAULT_POSTAGE, a->default_postage);
  return OK;
}

/*
 * SetMailboxDomain: owner (s), mailbox (w), [mail_domain — when `domain` is
 * set]. Moves the mailbox to another domain, or out of every domain (the zero
 * key): from then on only that domain's authority relays mail into it.
 */
HANDLER set_mailbox_domain(Ctx *c, const SetMailboxDomainArgs *a, SetMailboxDomainAccounts *k) {
  int with_domain = !is_zero32(a->domain);
  ACCOUNTS(c, with_domain ? 3 : 2);
  Acc *owner = k->owner, *mb = k->mailbox;
  TRY(require_mailbox(c, mb));
  if (!eq32(mb->data + MB_OWNER, owner->key)) return E_UNAUTHORIZED;
  if (with_domain) TRY(check_joined_domain(c, &c->acc[2], a->domain));
  cp32(mb->data + MB_DOMAIN, a->domain);
  return OK;
}

HANDLER publish_key(Ctx *c, const PublishKeyArgs *a, PublishKeyAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *key = k->mailbox_key;
  TRY(require_own_mailbox(c, mb, owner->key));
  seeds_mailbox_key(c, owner->key);
  TRY(expect_pda(c, key, TAG_MAILBOX_KEY, MK_BUMP));
  if (is_zero32(a->pub_key)) return E_INVALID_ARGUMENT;
  int present;
  TRY(read_kind(c, key, TAG_MAILBOX_KEY, &present));
  if (!present) {
    u64 lamports = rent(MAILBOX_KEY_SIZE);
    TRY(check_payer(owner, lamports, 0));
    TRY(create_pda(c, owner, key, MAILBOX_KEY_SIZE, lamports));
  }
  u8 *d = key->data;
  d[0] = TAG_MAILBOX_KEY;
  cp32(d + MK_OWNER, owner->key);
  cp32(d + MK_PUB_KEY, a->pub_key);
  d[MK_BUMP] = c->bump;
  return OK;
}

HANDLER remove_key(Ctx *c, RemoveKeyAccounts *k) {
  Acc *owner = k->owner, *key = k->mailbox_key;
  seeds_mailbox_key(c, owner->key);
  TRY(expect_pda(c, key, TAG_MAILBOX_KEY, MK_BUMP));
  TRY(require_kind(c, key, TAG_MAILBOX_KEY));
  TRY(check_credit(owner, *key->lamports));
  close_account(key, owner);
  return OK;
}

HANDLER create_alias(Ctx *c, const CreateAliasArgs *a, CreateAliasAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *alias = k->alias;
  TRY(require_own_mailbox(c, mb, owner->key));
  if (!alias_ok(a->name, a->name_len)) return E_INVALID_ARGUMENT;
  blake3(a->name, a->name_len, c->hash, &c->b3);
  seeds_alias(c, c->hash);
  TRY(pda_find(c, alias->key));
  if (!is_absent(alias)) return E_ALREADY_EXISTS;
  u64 lamports = rent(ALIAS_SIZE);
  TRY(check_payer(owner, lamports, 0));
  TRY(create_pda(c, owner, alias, ALIAS_SIZE, lamports));
  u8 *d = alias->data;
  d[0] = TAG_ALIAS;
  cp32(d + AL_NAME_HASH, c->hash);
  cp32(d + AL_ADDRESS, owner->key);
  cp32(d + AL_OWNER, owner->key);
  d[AL_BUMP] = c->bump;
  return OK;
}
