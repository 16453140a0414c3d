/* Part of mail.c (one translation unit). Checks on single accounts (signer, writable, System) and reads of the program's own accounts. */

/* ---- small checks ----------------------------------------------------------- */

static i64 now(Ctx *c) {
  if (!c->have_clock) {
    sol_get_clock_sysvar(&c->clock);
    c->have_clock = 1;
  }
  return c->clock.unix_timestamp;
}

static u64 need_signer(const Acc *a, int writable) {
  if (!a->is_signer) return E_MISSING_SIGNER;
  if (writable && !a->is_writable) return E_NOT_WRITABLE;
  return OK;
}

static u64 need_writable(const Acc *a) { return a->is_writable ? OK : E_NOT_WRITABLE; }

static u64 need_system(Ctx *c, Acc *a) {
  if (!is_zero32(a->key)) return E_INVALID_ACCOUNT;
  c->system = a;
  return OK;
}

/* a + b, refusing overflow (InvalidArgument). */
static u64 add(u64 a, u64 b, u64 *out) {
  u64 r = a + b;
  if (r < a) return E_INVALID_ARGUMENT;
  *out = r;
  return OK;
}

/* a x b, refusing overflow; in 32-bit halves (the BPF backend has no 128-bit multiply). */
static u64 mul(u64 a, u64 b, u64 *out) {
  u64 ah = a >> 32, al = a & 0xffffffffULL, bh = b >> 32, bl = b & 0xffffffffULL;
  if (ah != 0 && bh != 0) return E_INVALID_ARGUMENT;
  u64 cross = ah * bl + al * bh;
  if (cross >> 32) return E_INVALID_ARGUMENT;
  return add(cross << 32, al * bl, out);
}

/* ---- account reads ---------------------------------------------------------- */

/* No record yet: a System-owned account without data (lamports sent to a PDA early do not count). */
static int is_absent(const Acc *a) { return is_zero32(a->owner) && *a->len == 0; }

/*
 * TS Run.read: *present = 0 when absent; otherwise the account must be owned
 * by the program and have the kind's tag and exact shape (InvalidAccount).
 */
static u64 read_kind(Ctx *c, const Acc *a, u8 tag, int *present) {
  if (is_absent(a)) {
    *present = 0;
    return OK;
  }
  *present = 1;
  if (!eq32(a->owner, c->program_id)) return E_INVALID_ACCOUNT;
  u64 len = *a->len;
  const u8 *d = a->data;
  if (len < 1 || d[0] != tag) return E_INVALID_ACCOUNT;
  switch (tag) {
  case TAG_MAILBOX:
    return len == MAILBOX_SIZE && d[MB_NO_IPFS] <= 1 ? OK : E_INVALID_ACCOUNT;
  case TAG_MAILBOX_KEY:
    return len == MAILBOX_KEY_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_EMAIL:
    return len >= EMAIL_FIXED + 4 && rd32(d + EM_CID) == len - EMAIL_FIXED - 4 ? OK : E_INVALID_ACCOUNT;
  case TAG_FROMBOX:
    return len == FROMBOX_SIZE && d[FB_WALLET] <= 1 ? OK : E_INVALID_ACCOUNT;
  case TAG_ALIAS:
    return len == ALIAS_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_MAIL_DOMAIN:
    return len >= DOMAIN_FIXED + 4 && d[MD_IS_ACTIVE] <= 1 && rd32(d + MD_DOMAIN) == len - DOMAIN_FIXED - 4
               ? OK
               : E_INVALID_ACCOUNT;
  case TAG_POSTOFFICE:
    return len == POSTOFFICE_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_BEACON:
    return len == BEACON_SIZE && d[BC_CID_LEN] <= BEACON_CID_MAX ? OK : E_INVALID_ACCOUNT;
  case TAG_PIN_LEASE:
    return len == PIN_LEASE_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_ALIAS_LISTING:
    return len == ALIAS_LISTING_SIZE && d[LS_MODE] <= 1 ? OK : E_INVALID_ACCOUNT;
  case TAG_ALIAS_ESCROW:
    return len == ALIAS_ESCROW_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_DOMAIN_LISTING:
    return len == DOMAIN_LISTING_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_ALIAS_BID:
    return len == ALIAS_BID_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_PENDING_CLOSE:
    return len == PENDING_CLOSE_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_PENDING_DEACTIVATION:
    return len == PENDING_DEACTIVATION_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_PENDING_RECLAIM:
    return len == PENDING_RECLAIM_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_ATTESTATION:
    return len == ATTESTATION_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_REPUTATION:
    return len == REPUTATION_SIZE ? OK : E_INVALID_ACCOUNT;
  case TAG_RECIPIENT_RULE:
    return len == RECIPIENT_RULE_SIZE ? OK : E_INVALID_ACCOUNT;
  default:
    return E_INVALID_ACCOUNT;
  }
}

/* TS Run.require: absent is NotFound. */
static u64 require_kind(Ctx *c, const Acc *a, u8 tag) {
  int present;
  TRY(read_kind(c, a, tag, &present));
  return present ? OK : E_NOT_FOUND;
}
