// The Sealpost mail program (docs/protocol.md): accounts, seeds, the
// instructions and their rules, for the SBPFv0 runtime. One translation unit;
// built by `npm run build:program`.
//
// Shape of every instruction: decode the data completely (InvalidInstruction
// on anything short, unknown, non-canonical or trailing), check the account
// list, then every rule in the order the TypeScript reference checks them,
// all before the first write; then the System-program CPIs (account creation
// and payments from signers), then direct lamport moves out of accounts the
// program owns and the data writes. A failure returns a custom error and the
// runtime discards the whole transaction.
//
// Where the real runtime asks for more than the devnet program's rules:
// - PDAs are created by System CPIs signed with their seeds (CreateAccount,
//   or Transfer + Allocate + Assign when the address already holds lamports:
//   the payer pays rent (+ bounty / stamp money) in full, the early lamports
//   stay on top); payments from signers are System Transfers; lamports leave
//   program-owned accounts by direct arithmetic. SendMail pays a spent stamp
//   out before the Email's CreateAccount (as the reference does), naming the
//   frombox and the recipient wallet in that CPI: the runtime checks that a
//   CPI leaves the caller's balances summed as they were.
// - A payer must be a System account without data, and neither a payer nor a
//   credited wallet may end between 0 and its rent-exempt minimum: the
//   program answers InsufficientFunds / InvalidAccount itself instead of the
//   runtime failing the transaction.
// - PDAs are derived with sol_sha256 + sol_curve_validate_point (what
//   create_program_address computes, at a fifth of the cost); BLAKE3 and
//   base58 are the program's own (blake3.h, base58.h).
#include "base58.h"
#include "blake3.h"
#include "sol.h"

/* Error codes, account layouts, limits, instruction tags, seed prefixes. */
#include "generated/interface.h"

#define OK 0ULL

#define TRY(x)                                                                                         \
  do {                                                                                                 \
    u64 e_ = (x);                                                                                      \
    if (e_) return e_;                                                                                 \
  } while (0)

/* Rent-exempt minimum: (128 + size) x 3480 lamports/byte-year x 2 years. */
static u64 rent(u64 size) { return (128 + size) * 6960; }

/* ---- state ------------------------------------------------------------------ */

#define MAX_ACCOUNTS 9

/* One account of the input buffer; pointers are into the buffer (written in place). */
typedef struct {
  u8 *key;
  u8 *owner;
  u64 *lamports;
  u64 *len; /* serialized data length: the runtime reads it back */
  u8 *data;
  u64 rent_epoch;
  u8 is_signer;
  u8 is_writable;
  u8 executable;
} Acc;

/* Decoded arguments; field use per instruction is noted at each decoder. */
typedef struct {
  u8 tag;
  const u8 *k1;
  const u8 *k2;
  const u8 *k3;
  u64 u1;
  u64 u2;
  const u8 *str;
  u64 str_len;
  u8 has_bool;
  u8 bool_val;
  u8 has_u64;
  u64 u64_val;
  /* UpdatePostoffice's further options */
  u8 has_u64b;
  u64 u64b_val;
  u8 has_k1;
  u8 has_k2;
} Args;

/* Amounts of one purchase, worked out before anything moves. */
typedef struct {
  u64 postage;
  u64 held;
  u64 fees;
  u64 stamps;
  u64 escrow;
  u64 fees_collected;
} Purchase;

/*
 * SendMail's optional trailing accounts (a direct send's SenderReputation and
 * the recipient's RecipientRule), worked out before anything moves.
 */
typedef struct {
  u8 relayed;
  Acc *rep;     /* the signer's SenderReputation, or NULL */
  Acc *rule;    /* the recipient's RecipientRule PDA (may be absent), or NULL */
  u8 rep_bump;
  u8 rep_present;
  u8 by_rule;       /* the rule replaces the stamp */
  u64 rule_postage; /* lamports the signer pays the recipient under the rule */
  u64 credited;     /* postage this send pays the recipient: the reputation's increment */
  u64 cumulative;   /* the reputation's new cumulative_spend_lamports */
} SendExtras;

/* Everything an invocation works with; it lives at the start of the heap. */
typedef struct {
  Acc acc[MAX_ACCOUNTS];
  u64 n;
  const u8 *program_id;
  Acc *system;
  Args a;
  SolClock clock;
  u8 have_clock;
  /* PDA seeds under construction; seeds[nseeds] is the bump when signing */
  SolSignerSeed seeds[8];
  u64 nseeds;
  u8 bump;
  u8 pda[32];
  u8 hash[32];
  u8 text[64];
  /* CPI */
  SolAccountMeta metas[4];
  SolAccountInfo infos[4];
  /* accounts whose lamports moved before the next CPI: passed along so its balance check sees both sides */
  Acc *moved[2];
  u64 nmoved;
  SolInstruction ix;
  SolSignerSeeds signer;
  u8 cpi_data[64];
  Purchase purchase;
  SendExtras sx;
  B3Work b3;
} Ctx;

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

/* ---- lamports --------------------------------------------------------------- */

/*
 * A signer about to pay `amount` (through System transfers) and then receive
 * `back`: it must be a System account without data (what System transfers
 * debit), hold the amount, and not be left below rent exemption unless empty.
 */
static u64 check_payer(const Acc *payer, u64 amount, u64 back) {
  if (amount == 0) return OK;
  if (!is_zero32(payer->owner) || *payer->len != 0) return E_INVALID_ACCOUNT;
  u64 have;
  TRY(add(*payer->lamports, back, &have));
  if (have < amount) return E_INSUFFICIENT_FUNDS;
  u64 left = have - amount;
  if (left != 0 && left < rent(*payer->len)) return E_INSUFFICIENT_FUNDS;
  return OK;
}

/* Crediting `to`: no overflow, and it ends rent-exempt (the runtime refuses a credited rent-paying account). */
static u64 check_credit(const Acc *to, u64 amount) {
  if (amount == 0) return OK;
  u64 after;
  TRY(add(*to->lamports, amount, &after));
  if (after < rent(*to->len)) return E_INSUFFICIENT_FUNDS;
  return OK;
}

/* Moves lamports out of an account the program owns (checked beforehand). */
static void move_lamports(Acc *from, Acc *to, u64 amount) {
  *from->lamports -= amount;
  *to->lamports += amount;
}

/*
 * Closes a program account: all lamports to `to`, data length 0, owner back
 * to the System program — so later instructions of the same transaction see
 * it absent, and the runtime removes it afterwards.
 */
static void close_account(Acc *a, Acc *to) {
  move_lamports(a, to, *a->lamports);
  *a->len = 0;
  memset(a->owner, 0, 32);
}

/* ---- System program CPIs ---------------------------------------------------- */

static void cpi_account(Ctx *c, u64 i, Acc *a, u8 signer) {
  c->metas[i].pubkey = a->key;
  c->metas[i].is_writable = 1;
  c->metas[i].is_signer = signer;
  SolAccountInfo *info = &c->infos[i];
  info->key = a->key;
  info->lamports = a->lamports;
  info->data_len = *a->len;
  info->data = a->data;
  info->owner = a->owner;
  info->rent_epoch = a->rent_epoch;
  info->is_signer = a->is_signer;
  info->is_writable = a->is_writable;
  info->executable = a->executable;
}

/*
 * Invokes the System program with metas/infos [0..n) and cpi_data[0..len);
 * signed with the PDA seeds when `sign`. Accounts in c->moved ride along as
 * extra (unused) writable accounts: the runtime syncs the caller's balances
 * of every account a CPI names and requires the caller's total unchanged.
 */
static u64 cpi_system(Ctx *c, u64 n, u64 len, int sign) {
  for (u64 i = 0; i < c->nmoved; i++) cpi_account(c, n + i, c->moved[i], 0);
  u64 accounts = n + c->nmoved;
  c->nmoved = 0;
  c->ix.program_id = c->system->key;
  c->ix.accounts = c->metas;
  c->ix.account_len = accounts;
  c->ix.data = c->cpi_data;
  c->ix.data_len = len;
  c->seeds[c->nseeds].addr = &c->bump;
  c->seeds[c->nseeds].len = 1;
  c->signer.addr = c->seeds;
  c->signer.len = c->nseeds + 1;
  return sol_invoke_signed_c(&c->ix, c->infos, accounts, &c->signer, sign ? 1 : 0);
}

static u64 cpi_transfer(Ctx *c, Acc *from, Acc *to, u64 amount) {
  if (amount == 0) return OK;
  cpi_account(c, 0, from, 1);
  cpi_account(c, 1, to, 0);
  wr32(c->cpi_data, 2);
  wr64(c->cpi_data + 4, amount);
  return cpi_system(c, 2, 12, 0);
}

/*
 * Creates the PDA `a` (current seeds, c->bump) owned by the program with
 * `space` bytes, funded rent + extra by `payer`. An address that already
 * holds lamports gets Transfer + Allocate + Assign instead of CreateAccount
 * (which refuses it); its earlier lamports stay in the account.
 */
static u64 create_pda(Ctx *c, Acc *payer, Acc *a, u64 space, u64 lamports) {
  if (*a->lamports == 0) {
    cpi_account(c, 0, payer, 1);
    cpi_account(c, 1, a, 1);
    wr32(c->cpi_data, 0);
    wr64(c->cpi_data + 4, lamports);
    wr64(c->cpi_data + 12, space);
    cp32(c->cpi_data + 20, c->program_id);
    return cpi_system(c, 2, 52, 1);
  }
  TRY(cpi_transfer(c, payer, a, lamports));
  cpi_account(c, 0, a, 1);
  wr32(c->cpi_data, 8);
  wr64(c->cpi_data + 4, space);
  TRY(cpi_system(c, 1, 12, 1));
  cpi_account(c, 0, a, 1);
  wr32(c->cpi_data, 1);
  cp32(c->cpi_data + 4, c->program_id);
  return cpi_system(c, 1, 36, 1);
}

/* ---- text rules ------------------------------------------------------------- */

/* Well-formed UTF-8 (as a fatal TextDecoder accepts). */
static int utf8_ok(const u8 *s, u64 n) {
  u64 i = 0;
  while (i < n) {
    u8 b = s[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    u64 more;
    if (b >= 0xC2 && b <= 0xDF)
      more = 1;
    else if (b >= 0xE0 && b <= 0xEF)
      more = 2;
    else if (b >= 0xF0 && b <= 0xF4)
      more = 3;
    else
      return 0;
    if (n - i - 1 < more) return 0;
    u8 b1 = s[i + 1];
    if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 > 0x9F) || (b == 0xF0 && b1 < 0x90) ||
        (b == 0xF4 && b1 > 0x8F))
      return 0;
    for (u64 k = 1; k <= more; k++)
      if ((s[i + k] & 0xC0) != 0x80) return 0;
    i += more + 1;
  }
  return 1;
}

static int is_lower_digit(u8 ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); }

/* Lowercase DNS name, 1..=253 bytes, labels of a-z 0-9 - (1..=63, no leading/trailing -). */
static int domain_ok(const u8 *s, u64 n) {
  if (n < 1 || n > DOMAIN_MAX) return 0;
  u64 start = 0;
  for (u64 i = 0; i <= n; i++) {
    if (i == n || s[i] == '.') {
      u64 l = i - start;
      if (l < 1 || l > 63 || s[start] == '-' || s[i - 1] == '-') return 0;
      start = i + 1;
    } else if (!is_lower_digit(s[i]) && s[i] != '-') {
      return 0;
    }
  }
  return 1;
}

/* Normalized alias: 1..=64 of a-z 0-9 . _ -, a dot-atom, and not a base58 key. */
static int alias_ok(const u8 *s, u64 n) {
  if (n < 1 || n > ALIAS_MAX) return 0;
  for (u64 i = 0; i < n; i++) {
    u8 ch = s[i];
    if (!is_lower_digit(ch) && ch != '.' && ch != '_' && ch != '-') return 0;
    if (ch == '.' && (i == 0 || i == n - 1 || s[i - 1] == '.')) return 0;
  }
  return !b58_is_key(s, n);
}

static int is_b3_prefix(const u8 *s, u64 n) { return n >= 3 && s[0] == 'b' && s[1] == '3' && s[2] == ':'; }

/* SendMail's cid: 1..=128 bytes; `b3:` + 64 lowercase hex exactly when the mailbox has no_ipfs. */
static u64 check_cid(const u8 *s, u64 n, u8 no_ipfs) {
  if (n < 1 || n > CID_MAX) return E_INVALID_ARGUMENT;
  if (no_ipfs) {
    if (n != 67 || !is_b3_prefix(s, n)) return E_NO_IPFS;
    for (u64 i = 3; i < n; i++)
      if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return E_NO_IPFS;
    return OK;
  }
  return is_b3_prefix(s, n) ? E_INVALID_ARGUMENT : OK;
}

/* blake3(base58(key)) into c->hash: a direct sender's from_hash. */
static void wallet_hash(Ctx *c, const u8 *key) {
  u64 len = b58_encode32(key, c->text);
  blake3(c->text, len, c->hash, &c->b3);
}

/* ---- instruction data ------------------------------------------------------- */

typedef struct {
  const u8 *p;
  u64 left;
  u8 bad;
} Reader;

static const u8 *take(Reader *r, u64 n) {
  if (r->bad || r->left < n) {
    r->bad = 1;
    return NULL;
  }
  const u8 *p = r->p;
  r->p += n;
  r->left -= n;
  return p;
}

static const u8 *rd_key(Reader *r) { return take(r, 32); }

static u64 rd_u64(Reader *r) {
  const u8 *p = take(r, 8);
  return p ? rd64(p) : 0;
}

/* A borsh bool or Option flag: exactly 0 or 1. */
static u8 rd_flag(Reader *r) {
  const u8 *p = take(r, 1);
  if (!p) return 0;
  if (*p > 1) r->bad = 1;
  return *p;
}

static void rd_string(Reader *r, Args *a) {
  const u8 *p = take(r, 4);
  if (!p) return;
  u64 n = rd32(p);
  const u8 *s = take(r, n);
  if (!s) return;
  if (!utf8_ok(s, n)) r->bad = 1;
  a->str = s;
  a->str_len = n;
}

static void market_decode(Args *a, Reader *r);

/* An Option<[u8; 32]>: *has = 0 for None. */
static const u8 *rd_opt_key(Reader *r, u8 *has) {
  *has = rd_flag(r);
  return *has ? rd_key(r) : NULL;
}

/* An Option<u64>: *has = 0 for None. */
static u64 rd_opt_u64(Reader *r, u8 *has) {
  *has = rd_flag(r);
  return *has ? rd_u64(r) : 0;
}

static u64 decode(Ctx *c, const u8 *data, u64 len) {
  if (len < 1 || data[0] >= IX_TAGS || IX_NAMES[data[0]][0] == 0) return E_INVALID_INSTRUCTION;
  Args *a = &c->a;
  Reader r = {data + 1, len - 1, 0};
  a->tag = data[0];
  switch (a->tag) {
  case IX_INIT_POSTOFFICE: /* k1 root_ksk, k2 delegate, k3 commitment, u1 fee, u2 surcharge */
    a->k1 = rd_key(&r);
    a->k2 = rd_key(&r);
    a->k3 = rd_key(&r);
    a->u1 = rd_u64(&r);
    a->u2 = rd_u64(&r);
    break;
  case IX_CREATE_MAILBOX: /* u1 default_postage, k1 domain */
    a->u1 = rd_u64(&r);
    a->k1 = rd_key(&r);
    break;
  case IX_SET_MAILBOX_FLAGS: /* Option<bool> no_ipfs, Option<u64> default_postage */
    a->has_bool = rd_flag(&r);
    if (a->has_bool) a->bool_val = rd_flag(&r);
    a->has_u64 = rd_flag(&r);
    if (a->has_u64) a->u64_val = rd_u64(&r);
    break;
  case IX_PUBLISH_KEY: /* k1 pub_key */
    a->k1 = rd_key(&r);
    break;
  case IX_CREATE_DOMAIN: /* str domain, k1 authority */
    rd_string(&r, a);
    a->k1 = rd_key(&r);
    break;
  case IX_SEND_MAIL: /* k1 from_hash, str cid, u1 bounty, u2 expires_at, k2 reply_to_hash */
    a->k1 = rd_key(&r);
    rd_string(&r, a);
    a->u1 = rd_u64(&r);
    a->u2 = rd_u64(&r);
    a->k2 = rd_key(&r);
    break;
  case IX_CREATE_ALIAS: /* str name */
    rd_string(&r, a);
    break;
  case IX_CREATE_FROMBOX:
  case IX_UPDATE_FROMBOX: /* k1 from_hash, u1 required_postage */
    a->k1 = rd_key(&r);
    a->u1 = rd_u64(&r);
    break;
  case IX_ADD_STAMPS: /* k1 from_hash, u1 stamps, Option<u64> max_price */
    a->k1 = rd_key(&r);
    a->u1 = rd_u64(&r);
    a->u64_val = rd_opt_u64(&r, &a->has_u64);
    break;
  case IX_BUY_STAMPS:
  case IX_TOP_UP_STAMPS: /* u1 stamps, Option<u64> max_price */
    a->u1 = rd_u64(&r);
    a->u64_val = rd_opt_u64(&r, &a->has_u64);
    break;
  case IX_CREATE_PIN_LEASE: /* k1 cid_hash, u1 expires_at, u2 fee_lamports */
    a->k1 = rd_key(&r);
    a->u1 = rd_u64(&r);
    a->u2 = rd_u64(&r);
    break;
  case IX_PUBLISH_BEACON: /* u1 tags, str detail_cid */
    a->u1 = rd_u64(&r);
    rd_string(&r, a);
    break;
  case IX_LIST_ALIAS:
  case IX_BID_ALIAS:
  case IX_OFFER_ALIAS:
  case IX_LIST_DOMAIN:
    market_decode(a, &r);
    break;
  case IX_ATTEST_SENDER:     /* k1 wallet */
  case IX_SET_MAILBOX_DOMAIN: /* k1 domain (zero key: none) */
  case IX_PROPOSE_ADMIN:     /* k1 new admin (zero key: withdraw the proposal) */
    a->k1 = rd_key(&r);
    break;
  case IX_SET_RECIPIENT_RULE: /* u1 min_reputation, u2 postage */
    a->u1 = rd_u64(&r);
    a->u2 = rd_u64(&r);
    break;
  case IX_UPDATE_POSTOFFICE: /* Option<u64> fee, Option<u64> surcharge, Option<key> delegate, Option<key> root_ksk */
    a->u64_val = rd_opt_u64(&r, &a->has_u64);
    a->u64b_val = rd_opt_u64(&r, &a->has_u64b);
    a->k1 = rd_opt_key(&r, &a->has_k1);
    a->k2 = rd_opt_key(&r, &a->has_k2);
    break;
  case IX_WITHDRAW_FEES: /* u1 amount */
    a->u1 = rd_u64(&r);
    break;
  default: /* RemoveKey, DeleteMail, ReclaimFromboxStamps, ClaimBounty, ClosePinLease, CloseBeacon;
              timelocks 20-27; RevokeAttestation, CloseRecipientRule; the market's BuyAlias, SettleAuction,
              CancelListing, AcceptAlias, ReclaimAlias, BuyDomain, CancelDomainListing; AcceptAdmin */
    break;
  }
  if (r.bad || r.left != 0) return E_INVALID_INSTRUCTION;
  return OK;
}

#define ACCOUNTS(c, count)                                                                             \
  do {                                                                                                 \
    if ((c)->n != (count)) return E_INVALID_INSTRUCTION;                                               \
  } while (0)

/* ---- the postoffice: InitPostoffice and its admin; CreateDomain ------------- */

/* BPFLoaderUpgradeab1e11111111111111111111111, which owns every upgradeable program's ProgramData. */
static const u8 UPGRADEABLE_LOADER[32] = {0x02, 0xa8, 0xf6, 0x91, 0x4e, 0x88, 0xa1, 0xb0, 0xe2, 0x10, 0x15,
                                          0x3e, 0xf7, 0x63, 0xae, 0x2b, 0x00, 0xc2, 0xb9, 0x3d, 0x16, 0xc1,
                                          0x24, 0xd2, 0xc0, 0x53, 0x7a, 0x10, 0x04, 0x80, 0x00, 0x00};

/* UpgradeableLoaderState::ProgramData: u32 tag 3, u64 slot, Option<Pubkey> upgrade authority, then the ELF. */
#define PROGRAM_DATA_TAG 3
#define PD_AUTHORITY_FLAG 12
#define PD_AUTHORITY 13

/*
 * `pd` is this program's ProgramData (the loader's PDA of the program id) and
 * `signer`, who signed, is its upgrade authority: the key that deployed the
 * program, the only one that may set it up. An immutable program (no
 * authority) has nobody who may.
 */
static u64 need_upgrade_authority(Ctx *c, const Acc *pd, const Acc *signer) {
  TRY(need_signer(signer, 0));
  c->seeds[0].addr = c->program_id;
  c->seeds[0].len = 32;
  c->nseeds = 1;
  TRY(pda_find_in(c, pd->key, UPGRADEABLE_LOADER));
  if (!eq32(pd->owner, UPGRADEABLE_LOADER) || *pd->len < PD_AUTHORITY + 32) return E_INVALID_ACCOUNT;
  if (rd32(pd->data) != PROGRAM_DATA_TAG) return E_INVALID_ACCOUNT;
  if (pd->data[PD_AUTHORITY_FLAG] != 1 || !eq32(pd->data + PD_AUTHORITY, signer->key))
    return E_NOT_UPGRADE_AUTHORITY;
  return OK;
}

/*
 * InitPostoffice: admin (s,w; pays the rent, becomes admin), postoffice (w),
 * System, the program's ProgramData, its upgrade authority (s; may be the
 * admin itself). Once; nobody but the deployer can be first.
 */
static u64 init_postoffice(Ctx *c) {
  ACCOUNTS(c, 5);
  Acc *admin = &c->acc[0], *po = &c->acc[1];
  TRY(need_signer(admin, 1));
  TRY(need_writable(po));
  TRY(need_system(c, &c->acc[2]));
  TRY(need_upgrade_authority(c, &c->acc[3], &c->acc[4]));
  seeds_postoffice(c);
  TRY(pda_find(c, po->key));
  if (!is_absent(po)) return E_ALREADY_EXISTS;
  u64 lamports = rent(POSTOFFICE_SIZE);
  TRY(check_payer(admin, lamports, 0));
  TRY(create_pda(c, admin, po, POSTOFFICE_SIZE, lamports));
  u8 *d = po->data;
  const Args *a = &c->a;
  d[0] = TAG_POSTOFFICE;
  cp32(d + PO_ADMIN, admin->key);
  cp32(d + PO_ROOT_KSK, a->k1);
  cp32(d + PO_DELEGATE, a->k2);
  cp32(d + PO_COMMITMENT, a->k3);
  wr64(d + PO_STAMP_FEE, a->u1);
  wr64(d + PO_SURCHARGE, a->u2);
  wr64(d + PO_FEES_COLLECTED, 0);
  memset(d + PO_PENDING_ADMIN, 0, 32);
  d[PO_BUMP] = c->bump;
  return OK;
}

/* The postoffice (writable) and its admin as signer (Unauthorized: anyone else). */
static u64 require_admin(Ctx *c, const Acc *admin, const Acc *po) {
  TRY(need_signer(admin, 0));
  TRY(need_writable(po));
  TRY(require_postoffice(c, po));
  return eq32(po->data + PO_ADMIN, admin->key) ? OK : E_UNAUTHORIZED;
}

/*
 * UpdatePostoffice: admin (s), postoffice (w). Each Some field replaces the
 * stamp fee, the settlement surcharge, the delegate (not the zero key) or
 * the root KSK digest. Stamps already bought keep what they were sold at:
 * their postage and surcharge are held in their frombox.
 */
static u64 update_postoffice(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *admin = &c->acc[0], *po = &c->acc[1];
  const Args *a = &c->a;
  TRY(require_admin(c, admin, po));
  if (a->has_k1 && is_zero32(a->k1)) return E_INVALID_ARGUMENT;
  u8 *d = po->data;
  if (a->has_u64) wr64(d + PO_STAMP_FEE, a->u64_val);
  if (a->has_u64b) wr64(d + PO_SURCHARGE, a->u64b_val);
  if (a->has_k1) cp32(d + PO_DELEGATE, a->k1);
  if (a->has_k2) cp32(d + PO_ROOT_KSK, a->k2);
  return OK;
}

/*
 * WithdrawFees: admin (s), postoffice (w), to (w). Moves `amount` (1 ..=
 * fees_collected) of the collected protocol fees to `to`; the postoffice
 * never goes below its rent-exempt minimum.
 */
static u64 withdraw_fees(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *admin = &c->acc[0], *po = &c->acc[1], *to = &c->acc[2];
  u64 amount = c->a.u1;
  TRY(require_admin(c, admin, po));
  TRY(need_writable(to));
  if (eq32(to->key, po->key)) return E_INVALID_ACCOUNT;
  if (amount == 0) return E_INVALID_ARGUMENT;
  u64 collected = rd64(po->data + PO_FEES_COLLECTED);
  if (amount > collected) return E_INSUFFICIENT_FUNDS;
  if (*po->lamports < amount || *po->lamports - amount < rent(POSTOFFICE_SIZE)) return E_INSUFFICIENT_FUNDS;
  TRY(check_credit(to, amount));
  move_lamports(po, to, amount);
  wr64(po->data + PO_FEES_COLLECTED, collected - amount);
  return OK;
}

/*
 * ProposeAdmin: admin (s), postoffice (w). Names the key that may take the
 * admin role with AcceptAdmin (the zero key withdraws a proposal); the role
 * moves only when that key signs, so a mistyped address never locks it.
 */
static u64 propose_admin(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *admin = &c->acc[0], *po = &c->acc[1];
  TRY(require_admin(c, admin, po));
  if (eq32(c->a.k1, admin->key)) return E_INVALID_ARGUMENT;
  cp32(po->data + PO_PENDING_ADMIN, c->a.k1);
  return OK;
}

/* AcceptAdmin: the proposed admin (s), postoffice (w): it becomes admin, the proposal is cleared. */
static u64 accept_admin(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *next = &c->acc[0], *po = &c->acc[1];
  TRY(need_signer(next, 0));
  TRY(need_writable(po));
  TRY(require_postoffice(c, po));
  const u8 *pending = po->data + PO_PENDING_ADMIN;
  if (is_zero32(pending) || !eq32(pending, next->key)) return E_UNAUTHORIZED;
  cp32(po->data + PO_ADMIN, next->key);
  memset(po->data + PO_PENDING_ADMIN, 0, 32);
  return OK;
}

static u64 create_domain(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *delegate = &c->acc[0], *po = &c->acc[1], *dom = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(delegate, 1));
  TRY(need_writable(dom));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_postoffice(c, po));
  if (!eq32(po->data + PO_DELEGATE, delegate->key)) return E_UNAUTHORIZED;
  if (!domain_ok(a->str, a->str_len)) return E_INVALID_ARGUMENT;
  blake3(a->str, a->str_len, c->hash, &c->b3);
  seeds_domain(c, c->hash);
  TRY(pda_find(c, dom->key));
  if (!is_absent(dom)) return E_ALREADY_EXISTS;
  u64 size = DOMAIN_FIXED + 4 + a->str_len;
  u64 lamports = rent(size);
  TRY(check_payer(delegate, lamports, 0));
  TRY(create_pda(c, delegate, dom, size, lamports));
  u8 *d = dom->data;
  d[0] = TAG_MAIL_DOMAIN;
  d[MD_IS_ACTIVE] = 1;
  cp32(d + MD_AUTHORITY, a->k1);
  cp32(d + MD_RENT_PAYER, delegate->key);
  cp32(d + MD_NAME_HASH, c->hash);
  d[MD_BUMP] = c->bump;
  wr32(d + MD_DOMAIN, (u32)a->str_len);
  memcpy(d + MD_DOMAIN + 4, a->str, a->str_len);
  return OK;
}

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

static u64 create_mailbox(Ctx *c) {
  const Args *a = &c->a;
  int with_domain = !is_zero32(a->k1);
  ACCOUNTS(c, with_domain ? 5 : 4);
  Acc *payer = &c->acc[0], *owner = &c->acc[1], *mb = &c->acc[2];
  TRY(need_signer(payer, 1));
  TRY(need_signer(owner, 0));
  TRY(need_writable(mb));
  TRY(need_system(c, &c->acc[3]));
  seeds_mailbox(c, owner->key);
  TRY(pda_find(c, mb->key));
  u8 bump = c->bump;
  if (!is_absent(mb)) return E_ALREADY_EXISTS;
  if (with_domain) TRY(check_joined_domain(c, &c->acc[4], a->k1));
  u64 lamports = rent(MAILBOX_SIZE);
  TRY(check_payer(payer, lamports, 0));
  seeds_mailbox(c, owner->key);
  c->bump = bump;
  TRY(create_pda(c, payer, mb, MAILBOX_SIZE, lamports));
  u8 *d = mb->data;
  d[0] = TAG_MAILBOX;
  cp32(d + MB_OWNER, owner->key);
  wr64(d + MB_MAIL_COUNT, 0);
  wr64(d + MB_DEFAULT_POSTAGE, a->u1);
  cp32(d + MB_DOMAIN, a->k1);
  d[MB_NO_IPFS] = 0;
  d[MB_BUMP] = bump;
  return OK;
}

static u64 set_mailbox_flags(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *owner = &c->acc[0], *mb = &c->acc[1];
  const Args *a = &c->a;
  TRY(need_signer(owner, 0));
  TRY(need_writable(mb));
  TRY(require_mailbox(c, mb));
  if (!eq32(mb->data + MB_OWNER, owner->key)) return E_UNAUTHORIZED;
  if (a->has_bool) mb->data[MB_NO_IPFS] = a->bool_val;
  if (a->has_u64) wr64(mb->data + MB_DEFAULT_POSTAGE, a->u64_val);
  return OK;
}

/*
 * SetMailboxDomain: owner (s), mailbox (w), [mail_domain — when `domain` is
 * set]. Moves the mailbox to another domain, or out of every domain (the zero
 * key): from then on only that domain's authority relays mail into it.
 */
static u64 set_mailbox_domain(Ctx *c) {
  const Args *a = &c->a;
  int with_domain = !is_zero32(a->k1);
  ACCOUNTS(c, with_domain ? 3 : 2);
  Acc *owner = &c->acc[0], *mb = &c->acc[1];
  TRY(need_signer(owner, 0));
  TRY(need_writable(mb));
  TRY(require_mailbox(c, mb));
  if (!eq32(mb->data + MB_OWNER, owner->key)) return E_UNAUTHORIZED;
  if (with_domain) TRY(check_joined_domain(c, &c->acc[2], a->k1));
  cp32(mb->data + MB_DOMAIN, a->k1);
  return OK;
}

static u64 publish_key(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *key = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(owner, 1));
  TRY(need_writable(key));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_own_mailbox(c, mb, owner->key));
  seeds_mailbox_key(c, owner->key);
  TRY(expect_pda(c, key, TAG_MAILBOX_KEY, MK_BUMP));
  if (is_zero32(a->k1)) return E_INVALID_ARGUMENT;
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
  cp32(d + MK_PUB_KEY, a->k1);
  d[MK_BUMP] = c->bump;
  return OK;
}

static u64 remove_key(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *owner = &c->acc[0], *key = &c->acc[1];
  TRY(need_signer(owner, 1));
  TRY(need_writable(key));
  seeds_mailbox_key(c, owner->key);
  TRY(expect_pda(c, key, TAG_MAILBOX_KEY, MK_BUMP));
  TRY(require_kind(c, key, TAG_MAILBOX_KEY));
  TRY(check_credit(owner, *key->lamports));
  close_account(key, owner);
  return OK;
}

static u64 create_alias(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *alias = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(owner, 1));
  TRY(need_writable(alias));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_own_mailbox(c, mb, owner->key));
  if (!alias_ok(a->str, a->str_len)) return E_INVALID_ARGUMENT;
  blake3(a->str, a->str_len, c->hash, &c->b3);
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
  const Args *a = &c->a;
  if (c->sx.relayed) {
    const Acc *dom = &c->acc[7];
    TRY(require_domain(c, dom));
    if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
    if (!eq32(dom->data + MD_AUTHORITY, sender->key)) return E_UNAUTHORIZED;
    if (!eq32(mb->data + MB_DOMAIN, dom->key)) return E_RELAY_NOT_ALLOWED;
    if (a->u1 > 0) return E_BOUNTY_NOT_ALLOWED;
    return OK;
  }
  wallet_hash(c, sender->key);
  return eq32(c->hash, a->k1) ? OK : E_FROM_HASH_MISMATCH;
}

/*
 * The frombox account of a send: a stored one must be this send's (its own
 * seeds); an absent one must sit at the PDA of (from_hash, recipient).
 */
static u64 check_send_frombox(Ctx *c, const Acc *fb, const u8 *recipient, int *present) {
  TRY(read_kind(c, fb, TAG_FROMBOX, present));
  if (*present) {
    if (!eq32(fb->data + FB_FROM_HASH, c->a.k1) || !eq32(fb->data + FB_RECIPIENT, recipient))
      return E_INVALID_PDA;
    seeds_frombox(c, fb->data + FB_FROM_HASH, recipient);
    return pda_with_bump(c, fb->data[FB_BUMP], fb->key) ? OK : E_INVALID_PDA;
  }
  seeds_frombox(c, c->a.k1, recipient);
  return pda_find(c, fb->key);
}

static u64 send_mail(Ctx *c) {
  if (c->n < 7 || c->n > 9) return E_INVALID_INSTRUCTION;
  Acc *sender = &c->acc[0], *mb = &c->acc[1], *em = &c->acc[2], *fb = &c->acc[3];
  Acc *wallet = &c->acc[4], *po = &c->acc[5];
  const Args *a = &c->a;
  TRY(need_signer(sender, 1));
  TRY(need_writable(mb));
  TRY(need_writable(em));
  TRY(need_writable(fb));
  TRY(need_writable(wallet));
  TRY(need_system(c, &c->acc[6]));
  TRY(require_mailbox(c, mb));
  const u8 *recipient = mb->data + MB_OWNER;
  if (!eq32(wallet->key, recipient)) return E_INVALID_ACCOUNT;
  TRY(require_postoffice(c, po));
  TRY(send_extras(c, sender, recipient));
  TRY(check_sender(c, sender, mb));
  TRY(check_cid(a->str, a->str_len, mb->data[MB_NO_IPFS]));
  i64 t = now(c);
  if (a->u1 > 0) {
    if ((i64)a->u2 <= t) return E_BOUNTY_EXPIRED;
  } else if (a->u2 != 0) {
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
  u64 size = EMAIL_FIXED + 4 + a->str_len;
  u64 lamports, next_count, total;
  TRY(add(rent(size), a->u1, &lamports));
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
  cp32(d + EM_FROM_HASH, a->k1);
  memcpy(d + EM_INDEX, mb->data + MB_MAIL_COUNT, 8);
  wr64(d + EM_EPOCH, (u64)t);
  wr64(d + EM_BOUNTY, a->u1);
  wr64(d + EM_EXPIRES_AT, a->u2);
  cp32(d + EM_REPLY_TO, a->k2);
  cp32(d + EM_RENT_PAYER, sender->key);
  d[EM_BUMP] = email_bump;
  wr32(d + EM_CID, (u32)a->str_len);
  memcpy(d + EM_CID + 4, a->str, a->str_len);
  wr64(mb->data + MB_MAIL_COUNT, next_count);
  return send_extras_pay(c, sender, wallet);
}

static u64 delete_mail(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *signer = &c->acc[0], *em = &c->acc[1], *payer = &c->acc[2];
  TRY(need_signer(signer, 0));
  TRY(need_writable(em));
  TRY(need_writable(payer));
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

static u64 claim_bounty(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *recipient = &c->acc[0], *em = &c->acc[1];
  TRY(need_signer(recipient, 1));
  TRY(need_writable(em));
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

/* ---- fromboxes and stamps --------------------------------------------------- */

static u64 create_frombox(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *fb = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(owner, 1));
  TRY(need_writable(fb));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_own_mailbox(c, mb, owner->key));
  seeds_frombox(c, a->k1, owner->key);
  TRY(pda_find(c, fb->key));
  if (!is_absent(fb)) return E_ALREADY_EXISTS;
  u64 lamports = rent(FROMBOX_SIZE);
  TRY(check_payer(owner, lamports, 0));
  TRY(create_pda(c, owner, fb, FROMBOX_SIZE, lamports));
  u8 *d = fb->data;
  d[0] = TAG_FROMBOX;
  cp32(d + FB_FROM_HASH, a->k1);
  cp32(d + FB_RECIPIENT, owner->key);
  wr64(d + FB_REQUIRED, a->u1);
  wr64(d + FB_STAMPS, 0);
  wr64(d + FB_ESCROW, 0);
  d[FB_WALLET] = 0;
  d[FB_BUMP] = c->bump;
  return OK;
}

static u64 update_frombox(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *fb = &c->acc[2];
  TRY(need_signer(owner, 0));
  TRY(need_writable(fb));
  TRY(require_own_mailbox(c, mb, owner->key));
  seeds_frombox(c, c->a.k1, owner->key);
  TRY(expect_pda(c, fb, TAG_FROMBOX, FB_BUMP));
  TRY(require_kind(c, fb, TAG_FROMBOX));
  wr64(fb->data + FB_REQUIRED, c->a.u1);
  return OK;
}


/*
 * The price rules of AddStamps / BuyStamps / TopUpStamps (docs/protocol.md
 * "Stamp prices"). The ceiling bounds what one stamp costs the buyer in all:
 * postage + surcharge + fee, each read live, so neither the recipient's
 * reprice nor the admin's fee change can land first and charge more.
 */
static u64 price(Ctx *c, const Acc *mb, const Acc *po, const Acc *fb, int present) {
  const Args *a = &c->a;
  Purchase *p = &c->purchase;
  const Acc *buyer = &c->acc[0];
  p->postage = present ? rd64(fb->data + FB_REQUIRED) : rd64(mb->data + MB_DEFAULT_POSTAGE);
  int own = eq32(mb->data + MB_OWNER, buyer->key);
  u64 fee = own ? 0 : rd64(po->data + PO_STAMP_FEE), surcharge = rd64(po->data + PO_SURCHARGE);
  u64 each;
  TRY(add(p->postage, surcharge, &each));
  TRY(add(each, fee, &each));
  if (a->has_u64 && each > a->u64_val) return E_PRICE_ABOVE_CEILING;
  u64 n = a->u1;
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
  ACCOUNTS(c, 5);
  Acc *buyer = &c->acc[0], *mb = &c->acc[1], *fb = &c->acc[2], *po = &c->acc[3];
  const Args *a = &c->a;
  TRY(need_signer(buyer, 1));
  TRY(need_writable(fb));
  TRY(need_writable(po));
  TRY(need_system(c, &c->acc[4]));
  TRY(require_mailbox(c, mb));
  TRY(require_postoffice(c, po));
  const u8 *recipient = mb->data + MB_OWNER;
  const u8 *from_hash = a->k1;
  /* Stamps the sender wallet buys for itself (BuyStamps, TopUpStamps, or AddStamps on its own hash). */
  wallet_hash(c, buyer->key);
  int own_stamps = a->tag != IX_ADD_STAMPS || eq32(c->hash, a->k1);
  if (a->tag != IX_ADD_STAMPS) from_hash = c->hash;
  seeds_frombox(c, from_hash, recipient);
  TRY(expect_pda(c, fb, TAG_FROMBOX, FB_BUMP));
  u8 bump = c->bump;
  int present;
  TRY(read_kind(c, fb, TAG_FROMBOX, &present));
  if (a->tag == IX_BUY_STAMPS && present) return E_ALREADY_EXISTS;
  if (a->tag != IX_BUY_STAMPS && !present) return E_NOT_FOUND;
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

static u64 reclaim_frombox_stamps(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *sender = &c->acc[0], *mb = &c->acc[1], *fb = &c->acc[2];
  TRY(need_signer(sender, 1));
  TRY(need_writable(fb));
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

/* ---- pin leases ------------------------------------------------------------- */

/*
 * CreatePinLease: the holder pays `fee_lamports` (>= 1) to the operator's
 * wallet in this instruction and the rent of the lease, which records
 * blake3(cid), holder, operator, the term and the fee. Paying oneself is not
 * paying (LeaseUnpaid); a term already over is LeaseExpired.
 */
static u64 create_pin_lease(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *holder = &c->acc[0], *op = &c->acc[1], *lease = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(holder, 1));
  TRY(need_writable(op));
  TRY(need_writable(lease));
  TRY(need_system(c, &c->acc[3]));
  if (is_zero32(a->k1)) return E_INVALID_ARGUMENT;
  /*
   * The fee must leave the holder for good: not to itself, and not to a
   * program-derived address (the lease's own, the holder's beacon...) whose
   * lamports a close could hand back. A wallet is an ed25519 point; no PDA is.
   */
  if (a->u2 == 0 || eq32(op->key, holder->key) || !on_curve(op->key)) return E_LEASE_UNPAID;
  if (!is_zero32(op->owner) || *op->len != 0) return E_INVALID_ACCOUNT;
  i64 t = now(c);
  if ((i64)a->u1 <= t) return E_LEASE_EXPIRED;
  seeds_pin_lease(c, a->k1, holder->key);
  TRY(pda_find(c, lease->key));
  if (!is_absent(lease)) return E_ALREADY_EXISTS;
  u64 lamports = rent(PIN_LEASE_SIZE), total;
  TRY(add(lamports, a->u2, &total));
  TRY(check_payer(holder, total, 0));
  TRY(check_credit(op, a->u2));
  u8 bump = c->bump;
  TRY(create_pda(c, holder, lease, PIN_LEASE_SIZE, lamports));
  TRY(cpi_transfer(c, holder, op, a->u2));
  u8 *d = lease->data;
  d[0] = TAG_PIN_LEASE;
  cp32(d + PL_CID_HASH, a->k1);
  cp32(d + PL_HOLDER, holder->key);
  cp32(d + PL_OPERATOR, op->key);
  wr64(d + PL_CREATED_AT, (u64)t);
  wr64(d + PL_EXPIRES_AT, a->u1);
  wr64(d + PL_FEE, a->u2);
  d[PL_BUMP] = bump;
  return OK;
}

/* ClosePinLease: the holder only; all the lease's lamports back to the holder. */
static u64 close_pin_lease(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *holder = &c->acc[0], *lease = &c->acc[1];
  TRY(need_signer(holder, 1));
  TRY(need_writable(lease));
  TRY(require_kind(c, lease, TAG_PIN_LEASE));
  if (!eq32(lease->data + PL_HOLDER, holder->key)) return E_UNAUTHORIZED;
  seeds_pin_lease(c, lease->data + PL_CID_HASH, holder->key);
  if (!pda_with_bump(c, lease->data[PL_BUMP], lease->key)) return E_INVALID_PDA;
  TRY(check_credit(holder, *lease->lamports));
  close_account(lease, holder);
  return OK;
}

/* ---- participant beacons ---------------------------------------------------- */

/* A beacon's detail CID: 1..=96 bytes of visible ASCII (no spaces or controls). */
static int beacon_cid_ok(const u8 *s, u64 n) {
  if (n < 1 || n > BEACON_CID_MAX) return 0;
  for (u64 i = 0; i < n; i++)
    if (s[i] < 0x21 || s[i] > 0x7e) return 0;
  return 1;
}

/* PublishBeacon: creates the owner's beacon or replaces its tags and CID. */
static u64 publish_beacon(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *owner = &c->acc[0], *bc = &c->acc[1];
  const Args *a = &c->a;
  TRY(need_signer(owner, 1));
  TRY(need_writable(bc));
  TRY(need_system(c, &c->acc[2]));
  if (!beacon_cid_ok(a->str, a->str_len)) return E_INVALID_ARGUMENT;
  seeds_beacon(c, owner->key);
  TRY(expect_pda(c, bc, TAG_BEACON, BC_BUMP));
  u8 bump = c->bump;
  int present;
  TRY(read_kind(c, bc, TAG_BEACON, &present));
  i64 t = now(c);
  u8 *d = bc->data;
  if (!present) {
    u64 lamports = rent(BEACON_SIZE);
    TRY(check_payer(owner, lamports, 0));
    TRY(create_pda(c, owner, bc, BEACON_SIZE, lamports));
    d[0] = TAG_BEACON;
    cp32(d + BC_OWNER, owner->key);
    wr64(d + BC_CREATED_AT, (u64)t);
  }
  d[BC_BUMP] = bump;
  wr64(d + BC_TAGS, a->u1);
  wr64(d + BC_UPDATED_AT, (u64)t);
  d[BC_CID_LEN] = (u8)a->str_len;
  memset(d + BC_CID, 0, BEACON_CID_MAX);
  memcpy(d + BC_CID, a->str, a->str_len);
  return OK;
}

/* CloseBeacon: the owner's own beacon; its rent back to the owner. */
static u64 close_beacon(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *owner = &c->acc[0], *bc = &c->acc[1];
  TRY(need_signer(owner, 1));
  TRY(need_writable(bc));
  seeds_beacon(c, owner->key);
  TRY(expect_pda(c, bc, TAG_BEACON, BC_BUMP));
  TRY(require_kind(c, bc, TAG_BEACON));
  TRY(check_credit(owner, *bc->lamports));
  close_account(bc, owner);
  return OK;
}

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

/* ListAlias: u8 mode (0/1) -> bool_val, u1 price/reserve, u2 expires_at, u64_val antisnipe secs.
 * BidAlias: u1 amount. OfferAlias: k1 recipient, u1 fee, u2 expires_at.
 * ListDomain: u1 price, u2 expires_at, k1 buyer (zero key = anyone). */
static void market_decode(Args *a, Reader *r) {
  switch (a->tag) {
  case IX_LIST_ALIAS:
    a->bool_val = rd_flag(r);
    a->u1 = rd_u64(r);
    a->u2 = rd_u64(r);
    a->u64_val = rd_u64(r);
    break;
  case IX_BID_ALIAS:
    a->u1 = rd_u64(r);
    break;
  case IX_LIST_DOMAIN:
    a->u1 = rd_u64(r);
    a->u2 = rd_u64(r);
    a->k1 = rd_key(r);
    break;
  default: /* IX_OFFER_ALIAS */
    a->k1 = rd_key(r);
    a->u1 = rd_u64(r);
    a->u2 = rd_u64(r);
    break;
  }
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

static u64 list_alias(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *holder = &c->acc[0], *al = &c->acc[1], *ls = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(holder, 1));
  TRY(need_writable(al));
  TRY(need_writable(ls));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_alias(c, al));
  TRY(check_alias_owner(c, al, holder->key));
  i64 t = now(c);
  i64 ends = (i64)a->u2, window = (i64)a->u64_val;
  if (a->u1 == 0) return E_INVALID_ARGUMENT;
  if (a->bool_val == 0) {
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
  wr64(d + LS_PRICE, a->u1);
  wr64(d + LS_CREATED_AT, (u64)t);
  wr64(d + LS_EXPIRES_AT, (u64)ends);
  d[LS_MODE] = a->bool_val;
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
static u64 bid_alias(Ctx *c) {
  if (c->n != 4 && c->n != 6) return E_INVALID_INSTRUCTION;
  Acc *bidder = &c->acc[0], *ls = &c->acc[1], *bid = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(bidder, 1));
  TRY(need_writable(ls));
  TRY(need_writable(bid));
  TRY(need_system(c, &c->acc[3]));
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
  if (a->u1 < min) return E_BID_TOO_LOW;
  seeds_bid(c, ls->key, bidder->key);
  TRY(expect_pda(c, bid, TAG_ALIAS_BID, BD_BUMP));
  u8 bump = c->bump;
  int present;
  TRY(read_kind(c, bid, TAG_ALIAS_BID, &present));
  /* Only the high bidder has a bid account (outbid ones are closed), so presence follows `raise`. */
  if (present != raise) return raise ? E_NOT_FOUND : E_ALREADY_EXISTS;
  u64 pay = a->u1 - high;
  if (!raise) TRY(add(rent(ALIAS_BID_SIZE), a->u1, &pay));
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
  wr64(bid->data + BD_AMOUNT, a->u1);
  wr64(bid->data + BD_BID_AT, (u64)t);
  if (refund) close_account(prev, prev_wallet);
  wr64(d + LS_HIGH_BID, a->u1);
  cp32(d + LS_HIGH_BIDDER, bidder->key);
  wr64(d + LS_EXPIRES_AT, (u64)ends);
  return OK;
}

/* BuyAlias: buyer (s,w), listing (w), alias (w), holder (w), System. Fixed price only. */
static u64 buy_alias(Ctx *c) {
  ACCOUNTS(c, 5);
  Acc *buyer = &c->acc[0], *ls = &c->acc[1], *al = &c->acc[2], *holder = &c->acc[3];
  TRY(need_signer(buyer, 1));
  TRY(need_writable(ls));
  TRY(need_writable(al));
  TRY(need_writable(holder));
  TRY(need_system(c, &c->acc[4]));
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
static u64 settle_auction(Ctx *c) {
  if (c->n != 3 && c->n != 5) return E_INVALID_INSTRUCTION;
  Acc *ls = &c->acc[0], *al = &c->acc[1], *holder = &c->acc[2];
  TRY(need_writable(ls));
  TRY(need_writable(al));
  TRY(need_writable(holder));
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
static u64 cancel_listing(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *holder = &c->acc[0], *ls = &c->acc[1], *al = &c->acc[2];
  TRY(need_signer(holder, 1));
  TRY(need_writable(ls));
  TRY(need_writable(al));
  TRY(require_alias_record(c, ls, TAG_ALIAS_LISTING));
  if (!eq32(ls->data + LS_HOLDER, holder->key)) return E_UNAUTHORIZED;
  TRY(check_custody(c, ls, al, holder, LS_HOLDER));
  if (rd64(ls->data + LS_HIGH_BID) != 0) return E_LISTING_HAS_BIDS;
  TRY(check_credit(holder, *ls->lamports));
  close_account(ls, holder);
  release_alias(al, holder->key, 0);
  return OK;
}

/* OfferAlias: holder (s,w), alias (w), escrow (w), System. */
static u64 offer_alias(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *holder = &c->acc[0], *al = &c->acc[1], *es = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(holder, 1));
  TRY(need_writable(al));
  TRY(need_writable(es));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_alias(c, al));
  TRY(check_alias_owner(c, al, holder->key));
  if (is_zero32(a->k1) || eq32(a->k1, holder->key)) return E_INVALID_ARGUMENT;
  i64 t = now(c);
  if ((i64)a->u2 <= t) return E_ESCROW_EXPIRED;
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
  cp32(d + ES_RECIPIENT, a->k1);
  wr64(d + ES_FEE, a->u1);
  wr64(d + ES_OFFERED_AT, (u64)t);
  wr64(d + ES_EXPIRES_AT, a->u2);
  d[ES_BUMP] = bump;
  cp32(al->data + AL_OWNER, es->key);
  return OK;
}

/* AcceptAlias: recipient (s,w), escrow (w), alias (w), holder (w), System; before expiry. */
static u64 accept_alias(Ctx *c) {
  ACCOUNTS(c, 5);
  Acc *recipient = &c->acc[0], *es = &c->acc[1], *al = &c->acc[2], *holder = &c->acc[3];
  TRY(need_signer(recipient, 1));
  TRY(need_writable(es));
  TRY(need_writable(al));
  TRY(need_writable(holder));
  TRY(need_system(c, &c->acc[4]));
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
static u64 reclaim_alias(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *signer = &c->acc[0], *es = &c->acc[1], *al = &c->acc[2], *holder = &c->acc[3];
  TRY(need_signer(signer, 0));
  TRY(need_writable(es));
  TRY(need_writable(al));
  TRY(need_writable(holder));
  TRY(require_alias_record(c, es, TAG_ALIAS_ESCROW));
  TRY(check_custody(c, es, al, holder, ES_HOLDER));
  if (!eq32(signer->key, holder->key) && now(c) < (i64)rd64(es->data + ES_EXPIRES_AT))
    return E_ESCROW_NOT_EXPIRED;
  TRY(check_credit(holder, *es->lamports));
  close_account(es, holder);
  release_alias(al, holder->key, 0);
  return OK;
}

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
static u64 list_domain(Ctx *c) {
  ACCOUNTS(c, 6);
  Acc *holder = &c->acc[0], *dom = &c->acc[1], *ls = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(holder, 1));
  TRY(need_writable(dom));
  TRY(need_writable(ls));
  TRY(need_system(c, &c->acc[5]));
  TRY(require_domain(c, dom));
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  if (!eq32(dom->data + MD_AUTHORITY, holder->key)) return domain_listed(c, dom) ? E_DOMAIN_LOCKED : E_UNAUTHORIZED;
  TRY(NO_PENDING(c, &c->acc[3], SEED_PENDING_DEACTIVATION, dom->key));
  TRY(NO_PENDING(c, &c->acc[4], SEED_PENDING_RECLAIM, dom->key));
  if (eq32(a->k1, holder->key)) return E_INVALID_ARGUMENT;
  if (a->u1 == 0 && is_zero32(a->k1)) return E_INVALID_ARGUMENT;
  i64 t = now(c), ends = (i64)a->u2;
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
  cp32(d + DL_BUYER, a->k1);
  wr64(d + DL_PRICE, a->u1);
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
static u64 buy_domain(Ctx *c) {
  ACCOUNTS(c, 6);
  Acc *buyer = &c->acc[0], *dom = &c->acc[1], *ls = &c->acc[2], *holder = &c->acc[3];
  TRY(need_signer(buyer, 1));
  TRY(need_writable(dom));
  TRY(need_writable(ls));
  TRY(need_writable(holder));
  TRY(need_system(c, &c->acc[5]));
  TRY(check_domain_custody(c, ls, dom, holder));
  if (eq32(buyer->key, holder->key)) return E_OWN_LISTING;
  const u8 *named = ls->data + DL_BUYER;
  if (!is_zero32(named) && !eq32(named, buyer->key)) return E_UNAUTHORIZED;
  if (now(c) >= (i64)rd64(ls->data + DL_EXPIRES_AT)) return E_LISTING_EXPIRED;
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  TRY(NO_PENDING(c, &c->acc[4], SEED_PENDING_RECLAIM, dom->key));
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
static u64 cancel_domain_listing(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *signer = &c->acc[0], *dom = &c->acc[1], *ls = &c->acc[2], *holder = &c->acc[3];
  TRY(need_signer(signer, 0));
  TRY(need_writable(dom));
  TRY(need_writable(ls));
  TRY(need_writable(holder));
  TRY(check_domain_custody(c, ls, dom, holder));
  if (!eq32(signer->key, holder->key) && now(c) < (i64)rd64(ls->data + DL_EXPIRES_AT))
    return E_LISTING_NOT_EXPIRED;
  TRY(check_credit(holder, *ls->lamports));
  close_account(ls, holder);
  cp32(dom->data + MD_AUTHORITY, holder->key);
  return OK;
}

static u64 market(Ctx *c) {
  switch (c->a.tag) {
  case IX_LIST_DOMAIN:
    return list_domain(c);
  case IX_BUY_DOMAIN:
    return buy_domain(c);
  case IX_CANCEL_DOMAIN_LISTING:
    return cancel_domain_listing(c);
  case IX_LIST_ALIAS:
    return list_alias(c);
  case IX_BID_ALIAS:
    return bid_alias(c);
  case IX_BUY_ALIAS:
    return buy_alias(c);
  case IX_SETTLE_AUCTION:
    return settle_auction(c);
  case IX_CANCEL_LISTING:
    return cancel_listing(c);
  case IX_OFFER_ALIAS:
    return offer_alias(c);
  case IX_ACCEPT_ALIAS:
    return accept_alias(c);
  case IX_RECLAIM_ALIAS:
    return reclaim_alias(c);
  default:
    return E_INVALID_INSTRUCTION;
  }
}

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
static u64 request_mailbox_close(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *pc = &c->acc[2];
  TRY(need_signer(owner, 1));
  TRY(need_writable(pc));
  TRY(need_system(c, &c->acc[3]));
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
static u64 cancel_mailbox_close(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *owner = &c->acc[0], *pc = &c->acc[1];
  TRY(need_signer(owner, 1));
  TRY(need_writable(pc));
  TRY(require_own_pending_close(c, pc, owner));
  TRY(check_credit(owner, *pc->lamports));
  close_account(pc, owner);
  return OK;
}

/* CloseMailbox: after the window, the Mailbox and the pending record close; both rents go to the owner. */
static u64 close_mailbox(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *pc = &c->acc[2];
  TRY(need_signer(owner, 1));
  TRY(need_writable(mb));
  TRY(need_writable(pc));
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
static u64 request_deactivation(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *auth = &c->acc[0], *dom = &c->acc[1], *pd = &c->acc[2];
  TRY(need_signer(auth, 1));
  TRY(need_writable(pd));
  TRY(need_system(c, &c->acc[3]));
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
static u64 cancel_deactivation(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *auth = &c->acc[0], *dom = &c->acc[1], *pd = &c->acc[2];
  TRY(need_signer(auth, 1));
  TRY(need_writable(pd));
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
static u64 request_reclaim(Ctx *c) {
  ACCOUNTS(c, 6);
  Acc *delegate = &c->acc[0], *next = &c->acc[1], *po = &c->acc[2], *dom = &c->acc[3], *pr = &c->acc[4];
  TRY(need_signer(delegate, 1));
  TRY(need_signer(next, 0));
  TRY(need_writable(pr));
  TRY(need_system(c, &c->acc[5]));
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
static u64 cancel_reclaim(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *signer = &c->acc[0], *dom = &c->acc[1], *pr = &c->acc[2], *payer = &c->acc[3];
  TRY(need_signer(signer, 0));
  TRY(need_writable(pr));
  TRY(need_writable(payer));
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
static u64 settle_domain_timelock(Ctx *c) {
  ACCOUNTS(c, 3);
  Acc *dom = &c->acc[0], *p = &c->acc[1], *to = &c->acc[2];
  TRY(need_writable(dom));
  TRY(need_writable(p));
  TRY(need_writable(to));
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
static u64 attest_sender(Ctx *c) {
  ACCOUNTS(c, 5);
  Acc *authority = &c->acc[0], *payer = &c->acc[1], *dom = &c->acc[2], *att = &c->acc[3];
  const Args *a = &c->a;
  TRY(need_signer(authority, 0));
  TRY(need_signer(payer, 1));
  TRY(need_writable(att));
  TRY(need_system(c, &c->acc[4]));
  TRY(require_domain(c, dom));
  if (!eq32(dom->data + MD_AUTHORITY, authority->key)) return E_NOT_DOMAIN_AUTHORITY;
  if (!dom->data[MD_IS_ACTIVE]) return E_DOMAIN_INACTIVE;
  if (is_zero32(a->k1)) return E_INVALID_ARGUMENT;
  seeds_attestation(c, dom->key, a->k1);
  TRY(pda_find(c, att->key));
  if (!is_absent(att)) return E_ALREADY_EXISTS;
  u64 lamports = rent(ATTESTATION_SIZE);
  TRY(check_payer(payer, lamports, 0));
  u8 bump = c->bump;
  TRY(create_pda(c, payer, att, ATTESTATION_SIZE, lamports));
  u8 *d = att->data;
  d[0] = TAG_ATTESTATION;
  cp32(d + SA_DOMAIN, dom->key);
  cp32(d + SA_WALLET, a->k1);
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
static u64 revoke_attestation(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *signer = &c->acc[0], *att = &c->acc[1], *payer = &c->acc[2], *dom = &c->acc[3];
  TRY(need_signer(signer, 0));
  TRY(need_writable(att));
  TRY(need_writable(payer));
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
static u64 set_recipient_rule(Ctx *c) {
  ACCOUNTS(c, 4);
  Acc *owner = &c->acc[0], *mb = &c->acc[1], *rule = &c->acc[2];
  const Args *a = &c->a;
  TRY(need_signer(owner, 1));
  TRY(need_writable(rule));
  TRY(need_system(c, &c->acc[3]));
  TRY(require_own_mailbox(c, mb, owner->key));
  if (a->u1 == 0) return E_INVALID_ARGUMENT;
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
  wr64(d + RR_MIN_REPUTATION, a->u1);
  wr64(d + RR_POSTAGE, a->u2);
  d[RR_BUMP] = bump;
  return OK;
}

/* CloseRecipientRule: the owner's own rule; its rent back to the owner. */
static u64 close_recipient_rule(Ctx *c) {
  ACCOUNTS(c, 2);
  Acc *owner = &c->acc[0], *rule = &c->acc[1];
  TRY(need_signer(owner, 1));
  TRY(need_writable(rule));
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

/* ---- entrypoint ------------------------------------------------------------- */

/* Walks the input buffer: accounts (duplicates alias their first occurrence), data, program id. */
static u64 parse(Ctx *c, u8 *input) {
  u64 n = *(u64 *)input;
  if (n > MAX_ACCOUNTS) return E_INVALID_INSTRUCTION;
  c->n = n;
  u8 *p = input + 8;
  for (u64 i = 0; i < n; i++) {
    Acc *a = &c->acc[i];
    u8 dup = p[0];
    if (dup != NON_DUP_MARKER) {
      if (dup >= i) return E_INVALID_INSTRUCTION;
      *a = c->acc[dup];
      p += 8;
      continue;
    }
    a->is_signer = p[1];
    a->is_writable = p[2];
    a->executable = p[3];
    a->key = p + 8;
    a->owner = p + 40;
    a->lamports = (u64 *)(p + 72);
    a->len = (u64 *)(p + 80);
    a->data = p + 88;
    p += 88 + *a->len + MAX_PERMITTED_DATA_INCREASE;
    p = (u8 *)(((u64)p + 7) & ~7ULL);
    a->rent_epoch = *(u64 *)p;
    p += 8;
  }
  u64 len = *(u64 *)p;
  const u8 *data = p + 8;
  c->program_id = data + len;
  return decode(c, data, len);
}

u64 entrypoint(u8 *input);

u64 entrypoint(u8 *input) {
  u64 heap = HEAP_START;
  /* Opaque to the optimizer: fields are then reached as base + offset, not one lddw each. */
  __asm__("" : "+r"(heap));
  Ctx *c = (Ctx *)heap;
  TRY(parse(c, input));
  const char *name = IX_NAMES[c->a.tag];
  u64 name_len = 0;
  while (name[name_len]) name_len++;
  sol_log_(name, name_len);
  switch (c->a.tag) {
  case IX_INIT_POSTOFFICE:
    return init_postoffice(c);
  case IX_CREATE_MAILBOX:
    return create_mailbox(c);
  case IX_SET_MAILBOX_FLAGS:
    return set_mailbox_flags(c);
  case IX_PUBLISH_KEY:
    return publish_key(c);
  case IX_REMOVE_KEY:
    return remove_key(c);
  case IX_CREATE_DOMAIN:
    return create_domain(c);
  case IX_SEND_MAIL:
    return send_mail(c);
  case IX_DELETE_MAIL:
    return delete_mail(c);
  case IX_CREATE_ALIAS:
    return create_alias(c);
  case IX_CREATE_FROMBOX:
    return create_frombox(c);
  case IX_UPDATE_FROMBOX:
    return update_frombox(c);
  case IX_ADD_STAMPS:
  case IX_BUY_STAMPS:
  case IX_TOP_UP_STAMPS:
    return purchase_stamps(c);
  case IX_RECLAIM_FROMBOX_STAMPS:
    return reclaim_frombox_stamps(c);
  case IX_CREATE_PIN_LEASE:
    return create_pin_lease(c);
  case IX_CLOSE_PIN_LEASE:
    return close_pin_lease(c);
  case IX_PUBLISH_BEACON:
    return publish_beacon(c);
  case IX_CLOSE_BEACON:
    return close_beacon(c);
  case IX_LIST_ALIAS:
  case IX_BID_ALIAS:
  case IX_BUY_ALIAS:
  case IX_SETTLE_AUCTION:
  case IX_CANCEL_LISTING:
  case IX_OFFER_ALIAS:
  case IX_ACCEPT_ALIAS:
  case IX_RECLAIM_ALIAS:
  case IX_LIST_DOMAIN:
  case IX_BUY_DOMAIN:
  case IX_CANCEL_DOMAIN_LISTING:
    return market(c);
  /* timelocks */
  case IX_REQUEST_MAILBOX_CLOSE:
    return request_mailbox_close(c);
  case IX_CANCEL_MAILBOX_CLOSE:
    return cancel_mailbox_close(c);
  case IX_CLOSE_MAILBOX:
    return close_mailbox(c);
  case IX_REQUEST_DEACTIVATION:
    return request_deactivation(c);
  case IX_CANCEL_DEACTIVATION:
    return cancel_deactivation(c);
  case IX_REQUEST_RECLAIM:
    return request_reclaim(c);
  case IX_CANCEL_RECLAIM:
    return cancel_reclaim(c);
  case IX_SETTLE_DOMAIN_TIMELOCK:
    return settle_domain_timelock(c);
  case IX_ATTEST_SENDER:
    return attest_sender(c);
  case IX_REVOKE_ATTESTATION:
    return revoke_attestation(c);
  case IX_SET_RECIPIENT_RULE:
    return set_recipient_rule(c);
  case IX_CLOSE_RECIPIENT_RULE:
    return close_recipient_rule(c);
  case IX_CLAIM_BOUNTY:
    return claim_bounty(c);
  case IX_SET_MAILBOX_DOMAIN:
    return set_mailbox_domain(c);
  case IX_UPDATE_POSTOFFICE:
    return update_postoffice(c);
  case IX_WITHDRAW_FEES:
    return withdraw_fees(c);
  case IX_PROPOSE_ADMIN:
    return propose_admin(c);
  case IX_ACCEPT_ADMIN:
    return accept_admin(c);
  default:
    return E_INVALID_INSTRUCTION;
  }
}
