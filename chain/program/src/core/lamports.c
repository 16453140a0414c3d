/* Part of mail.c (one translation unit). Lamport moves: payer and credit checks, direct moves out of program accounts, System program CPIs. */

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
