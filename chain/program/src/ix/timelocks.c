/* Part of mail.c (one translation unit). Timelocks: mailbox close, domain deactivation, domain reclaim. */

/* ---- timelocks: mailbox close, domain deactivation, domain reclaim ---------- */

/*
 * A pending record's window is over: chain time >= requested_at + window
 * (TimelockNotElapsed before). requested_at is the program's own chain time,
 * so the difference is taken only when it is not negative.
 */
static u64 window_elapsed(Ctx *c, const u8 *requested_at, u64 window) {
  i64 t = now(c), at = (i64)rd64(requested_at);
  if (t < at || (u64)t - (u64)at < window) return E_TIMELOCK_NOT_ELAPSED;
  return OK;
}

/* Creates the pending record at the current seeds (AlreadyExists: one request at a time), paid by `payer`. */
static u64 create_pending(Ctx *c, Acc *payer, Acc *pending, u64 size) {
  TRY(pda_find(c, pending->key));
  if (!is_absent(pending)) return E_ALREADY_EXISTS;
  u64 lamports = rent(size);
  TRY(check_payer(payer, lamports, 0));
  return create_pda(c, payer, pending, size, lamports);
}

/* An existing pending record of `tag` whose stored key (at offset 1) and bump (its last byte) give its address. */
static u64 require_pending(Ctx *c, const Acc *p, u8 tag) {
  TRY(require_kind(c, p, tag));
  const u8 *key = p->data + 1;
  if (tag == TAG_PENDING_CLOSE)
    SEEDS_PENDING(c, SEED_PENDING_CLOSE, key);
  else if (tag == TAG_PENDING_DEACTIVATION)
    SEEDS_PENDING(c, SEED_PENDING_DEACTIVATION, key);
  else
    SEEDS_PENDING(c, SEED_PENDING_RECLAIM, key);
  return pda_with_bump(c, p->data[*p->len - 1], p->key) ? OK : E_INVALID_PDA;
}

/* RequestMailboxClose: the owner of a mailbox starts its close window. */
HANDLER request_mailbox_close(Ctx *c, RequestMailboxCloseAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *pc = k->pending_close;
  TRY(require_own_mailbox(c, mb, owner->key));
  SEEDS_PENDING(c, SEED_PENDING_CLOSE, owner->key);
  TRY(create_pending(c, owner, pc, PENDING_CLOSE_SIZE));
  u8 *d = pc->data;
  d[0] = TAG_PENDING_CLOSE;
  cp32(d + PC_WALLET, owner->key);
  wr64(d + PC_REQUESTED_AT, (u64)now(c));
  d[PC_BUMP] = c->bump;
  return OK;
}

/* The pending close `pc` exists and is the signer's (Unauthorized: another wallet's). */
static u64 require_own_pending_close(Ctx *c, const Acc *pc, const Acc *owner) {
  TRY(require_kind(c, pc, TAG_PENDING_CLOSE));
  if (!eq32(pc->data + PC_WALLET, owner->key)) return E_UNAUTHORIZED;
  return require_pending(c, pc, TAG_PENDING_CLOSE);
}

/* CancelMailboxClose: the owner, at any time before CloseMailbox; the record's rent back to the owner. */
HANDLER cancel_mailbox_close(Ctx *c, CancelMailboxCloseAccounts *k) {
  Acc *owner = k->owner, *pc = k->pending_close;
  TRY(require_own_pending_close(c, pc, owner));
  TRY(check_credit(owner, *pc->lamports));
  close_account(pc, owner);
  return OK;
}

/* CloseMailbox: after the window, the Mailbox and the pending record close; both rents go to the owner. */
HANDLER close_mailbox(Ctx *c, CloseMailboxAccounts *k) {
  Acc *owner = k->owner, *mb = k->mailbox, *pc = k->pending_close;
  TRY(require_own_pending_close(c, pc, owner));
  TRY(require_own_mailbox(c, mb, owner->key));
  TRY(window_elapsed(c, pc->data + PC_REQUESTED_AT, MAILBOX_CLOSE_WINDOW));
  u64 total;
  TRY(add(*mb->lamports, *pc->lamports, &total));
  TRY(check_credit(owner, total));
  close_account(mb, owner);
  close_account(pc, owner);
  return OK;
}

/* The domain's authority signs (Unauthorized otherwise). */
static u64 require_authority(const Acc *dom, const Acc *signer) {
  return eq32(dom->data + MD_AUTHORITY, signer->key) ? OK : E_UNAUTHORIZED;
}

/* RequestDeactivation: the authority of an active domain starts its notice window. */
HANDLER request_deactivation(Ctx *c, RequestDeactivationAccounts *k) {
  Acc *auth = k->authority, *dom = k->mail_domain, *pd = k->pending_deactivation;
  TRY(require_domain(c, dom));
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  TRY(require_authority(dom, auth));
  SEEDS_PENDING(c, SEED_PENDING_DEACTIVATION, dom->key);
  TRY(create_pending(c, auth, pd, PENDING_DEACTIVATION_SIZE));
  u8 *d = pd->data;
  d[0] = TAG_PENDING_DEACTIVATION;
  cp32(d + PD_DOMAIN, dom->key);
  wr64(d + PD_REQUESTED_AT, (u64)now(c));
  d[PD_BUMP] = c->bump;
  return OK;
}

/* A pending record of `dom` (InvalidAccount: a record of another domain). */
static u64 require_domain_pending(Ctx *c, const Acc *dom, const Acc *p, u8 tag) {
  TRY(require_pending(c, p, tag));
  return eq32(p->data + 1, dom->key) ? OK : E_INVALID_ACCOUNT;
}

/* CancelDeactivation: the domain's current authority, until the deactivation is settled; rent to it. */
HANDLER cancel_deactivation(Ctx *c, CancelDeactivationAccounts *k) {
  Acc *auth = k->authority, *dom = k->mail_domain, *pd = k->pending_deactivation;
  TRY(require_domain(c, dom));
  TRY(require_domain_pending(c, dom, pd, TAG_PENDING_DEACTIVATION));
  TRY(require_authority(dom, auth));
  TRY(check_credit(auth, *pd->lamports));
  close_account(pd, auth);
  return OK;
}

/*
 * RequestReclaim: the domain service (the postoffice's delegate, which has
 * checked the DNSSEC proof off chain) names a new authority, which co-signs.
 */
HANDLER request_reclaim(Ctx *c, RequestReclaimAccounts *k) {
  Acc *delegate = k->delegate, *next = k->new_authority, *po = k->postoffice, *dom = k->mail_domain, *pr = k->pending_reclaim;
  TRY(require_postoffice(c, po));
  if (!eq32(po->data + PO_DELEGATE, delegate->key)) return E_UNAUTHORIZED;
  TRY(require_domain(c, dom));
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  /* The new authority is neither the current one nor the service that vouches for it. */
  if (eq32(dom->data + MD_AUTHORITY, next->key) || eq32(delegate->key, next->key)) return E_INVALID_ARGUMENT;
  SEEDS_PENDING(c, SEED_PENDING_RECLAIM, dom->key);
  TRY(create_pending(c, delegate, pr, PENDING_RECLAIM_SIZE));
  u8 *d = pr->data;
  d[0] = TAG_PENDING_RECLAIM;
  cp32(d + PR_DOMAIN, dom->key);
  wr64(d + PR_REQUESTED_AT, (u64)now(c));
  cp32(d + PR_AUTHORITY, next->key);
  cp32(d + PR_PAYER, delegate->key);
  d[PR_BUMP] = c->bump;
  return OK;
}

/* CancelReclaim: the current authority (or the payer withdrawing), until settled; rent to the payer. */
HANDLER cancel_reclaim(Ctx *c, CancelReclaimAccounts *k) {
  Acc *signer = k->signer, *dom = k->mail_domain, *pr = k->pending_reclaim, *payer = k->payer;
  TRY(require_domain(c, dom));
  TRY(require_domain_pending(c, dom, pr, TAG_PENDING_RECLAIM));
  if (!eq32(dom->data + MD_AUTHORITY, signer->key) && !eq32(pr->data + PR_PAYER, signer->key))
    return E_UNAUTHORIZED;
  if (!eq32(pr->data + PR_PAYER, payer->key)) return E_INVALID_ACCOUNT;
  TRY(check_credit(payer, *pr->lamports));
  close_account(pr, payer);
  return OK;
}

/*
 * SettleDomainTimelock: anyone, once the window of the pending record passed
 * is over. A PendingDeactivation makes the domain inactive (rent to the
 * domain's authority); a PendingReclaim makes its authority the domain's
 * (rent to the reclaim's payer).
 */
HANDLER settle_domain_timelock(Ctx *c, SettleDomainTimelockAccounts *k) {
  Acc *dom = k->mail_domain, *p = k->pending, *to = k->rent_to;
  TRY(require_domain(c, dom));
  if (is_absent(p)) return E_NOT_FOUND;
  if (!eq32(p->owner, c->program_id) || *p->len < 1) return E_INVALID_ACCOUNT;
  u8 tag = p->data[0];
  if (tag != TAG_PENDING_DEACTIVATION && tag != TAG_PENDING_RECLAIM) return E_INVALID_ACCOUNT;
  TRY(require_domain_pending(c, dom, p, tag));
  int deactivate = tag == TAG_PENDING_DEACTIVATION;
  const u8 *receiver = deactivate ? dom->data + MD_AUTHORITY : p->data + PR_PAYER;
  if (!eq32(to->key, receiver)) return E_INVALID_ACCOUNT;
  if (deactivate) {
    TRY(window_elapsed(c, p->data + PD_REQUESTED_AT, DEACTIVATION_WINDOW));
  } else {
    TRY(window_elapsed(c, p->data + PR_REQUESTED_AT, RECLAIM_WINDOW));
    if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
    /* Settling would take the domain out of a listing's custody: the listing closes first. */
    if (domain_listed(c, dom)) return E_DOMAIN_LOCKED;
  }
  TRY(check_credit(to, *p->lamports));
  if (deactivate)
    dom->data[MD_IS_ACTIVE] = 0;
  else
    cp32(dom->data + MD_AUTHORITY, p->data + PR_AUTHORITY);
  close_account(p, to);
  return OK;
}
