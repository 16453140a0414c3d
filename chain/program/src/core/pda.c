/* Part of mail.c (one translation unit). PDA seeds and derivation, and the requires that check an account is the expected PDA of its kind. */

/* ---- PDAs ------------------------------------------------------------------- */

static void seeds_begin(Ctx *c, const char *prefix, u64 len) {
  c->seeds[0].addr = (const u8 *)prefix;
  c->seeds[0].len = len;
  c->nseeds = 1;
}

static void seeds_add(Ctx *c, const u8 *p, u64 len) {
  c->seeds[c->nseeds].addr = p;
  c->seeds[c->nseeds].len = len;
  c->nseeds++;
}

#define SEEDS(c, s) seeds_begin((c), (s), sizeof(s) - 1)

static void seeds_mailbox(Ctx *c, const u8 *owner) {
  SEEDS(c, SEED_MAILBOX);
  seeds_add(c, owner, 32);
}

static void seeds_mailbox_key(Ctx *c, const u8 *owner) {
  SEEDS(c, SEED_MAILBOX_KEY);
  seeds_add(c, owner, 32);
}

/* index_le: the u64 index as its 8 little-endian bytes (as stored in accounts). */
static void seeds_email(Ctx *c, const u8 *recipient, const u8 *index_le) {
  SEEDS(c, SEED_EMAIL);
  seeds_add(c, recipient, 32);
  seeds_add(c, index_le, 8);
}

static void seeds_frombox(Ctx *c, const u8 *from_hash, const u8 *recipient) {
  SEEDS(c, SEED_FROMBOX);
  seeds_add(c, from_hash, 32);
  seeds_add(c, recipient, 32);
}

static void seeds_alias(Ctx *c, const u8 *name_hash) {
  SEEDS(c, SEED_ALIAS);
  seeds_add(c, name_hash, 32);
}

static void seeds_domain(Ctx *c, const u8 *name_hash) {
  SEEDS(c, SEED_DOMAIN);
  seeds_add(c, name_hash, 32);
}

static void seeds_postoffice(Ctx *c) { SEEDS(c, SEED_POSTOFFICE); }

static void seeds_beacon(Ctx *c, const u8 *owner) {
  SEEDS(c, SEED_BEACON);
  seeds_add(c, owner, 32);
}

static void seeds_pin_lease(Ctx *c, const u8 *cid_hash, const u8 *holder) {
  SEEDS(c, SEED_PIN_LEASE);
  seeds_add(c, cid_hash, 32);
  seeds_add(c, holder, 32);
}

/* Timelock records: one per wallet (mailbox close) or per MailDomain account. */
static void seeds_pending(Ctx *c, const char *prefix, u64 len, const u8 *key) {
  seeds_begin(c, prefix, len);
  seeds_add(c, key, 32);
}

#define SEEDS_PENDING(c, s, key) seeds_pending((c), (s), sizeof(s) - 1, (key))

/*
 * Program-derived addresses, computed here rather than by the
 * create_program_address / try_find_program_address syscalls (1,500 CU per
 * bump each): an address is sha256(seeds || bump || program_id ||
 * "ProgramDerivedAddress"), valid when it is not an ed25519 point. sol_sha256
 * and sol_curve_validate_point give the same answer for ~300 CU a bump.
 */
static const char PDA_MARKER[] = "ProgramDerivedAddress";

/* c->pda = the address of the current seeds with c->bump under `program`; false when it is on the curve (no PDA). */
static int pda_derive_in(Ctx *c, const u8 *program) {
  u64 n = c->nseeds;
  c->seeds[n].addr = &c->bump;
  c->seeds[n].len = 1;
  c->seeds[n + 1].addr = program;
  c->seeds[n + 1].len = 32;
  c->seeds[n + 2].addr = (const u8 *)PDA_MARKER;
  c->seeds[n + 2].len = sizeof(PDA_MARKER) - 1;
  sol_sha256(c->seeds, n + 3, c->pda);
  return sol_curve_validate_point(0, c->pda, NULL) != 0;
}

/* c->pda = the address of the current seeds with c->bump; false when it is on the curve (no PDA). */
static int pda_derive(Ctx *c) { return pda_derive_in(c, c->program_id); }

/* `key` is an ed25519 point: an address someone can sign for, never a PDA of any program. */
static int on_curve(const u8 *key) { return sol_curve_validate_point(0, key, NULL) == 0; }

/* The current seeds with `bump` give `key` (TS expectStoredPda). */
static int pda_with_bump(Ctx *c, u8 bump, const u8 *key) {
  c->bump = bump;
  return pda_derive(c) && eq32(c->pda, key);
}

/* `key` is the canonical PDA of the current seeds under `program`: the first valid bump from 255 down to 1. */
static u64 pda_find_in(Ctx *c, const u8 *key, const u8 *program) {
  for (u32 b = 255; b > 0; b--) {
    c->bump = (u8)b;
    if (pda_derive_in(c, program)) return eq32(c->pda, key) ? OK : E_INVALID_PDA;
  }
  return E_INVALID_PDA;
}

/* `key` is the canonical PDA of the current seeds (TS expectPda). */
static u64 pda_find(Ctx *c, const u8 *key) { return pda_find_in(c, key, c->program_id); }

/*
 * TS expectPda for an account that may already exist: when it is a valid
 * record of `tag` whose stored bump gives its address, one derivation
 * suffices (the program only ever stores canonical bumps); otherwise the
 * canonical search decides.
 */
static u64 expect_pda(Ctx *c, const Acc *a, u8 tag, u64 bump_off) {
  int present;
  if (read_kind(c, a, tag, &present) == OK && present && pda_with_bump(c, a->data[bump_off], a->key))
    return OK;
  return pda_find(c, a->key);
}

/* The signer's own mailbox at its PDA, existing (TS requireOwnMailbox). */
static u64 require_own_mailbox(Ctx *c, const Acc *mb, const u8 *owner) {
  seeds_mailbox(c, owner);
  TRY(expect_pda(c, mb, TAG_MAILBOX, MB_BUMP));
  return require_kind(c, mb, TAG_MAILBOX);
}

/* A mailbox read by address, then checked against its stored bump (TS requireMailbox). */
static u64 require_mailbox(Ctx *c, const Acc *mb) {
  TRY(require_kind(c, mb, TAG_MAILBOX));
  seeds_mailbox(c, mb->data + MB_OWNER);
  return pda_with_bump(c, mb->data[MB_BUMP], mb->key) ? OK : E_INVALID_PDA;
}

static u64 require_domain(Ctx *c, const Acc *d) {
  TRY(require_kind(c, d, TAG_MAIL_DOMAIN));
  seeds_domain(c, d->data + MD_NAME_HASH);
  return pda_with_bump(c, d->data[MD_BUMP], d->key) ? OK : E_INVALID_PDA;
}

static u64 require_postoffice(Ctx *c, const Acc *po) {
  seeds_postoffice(c);
  TRY(expect_pda(c, po, TAG_POSTOFFICE, PO_BUMP));
  return require_kind(c, po, TAG_POSTOFFICE);
}

static u64 require_email(Ctx *c, const Acc *em) {
  TRY(require_kind(c, em, TAG_EMAIL));
  seeds_email(c, em->data + EM_RECIPIENT, em->data + EM_INDEX);
  return pda_with_bump(c, em->data[EM_BUMP], em->key) ? OK : E_INVALID_PDA;
}
