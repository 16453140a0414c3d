/* Part of mail.c (one translation unit). InitPostoffice, the admin's UpdatePostoffice, WithdrawFees, ProposeAdmin, AcceptAdmin; CreateDomain. */

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
HANDLER init_postoffice(Ctx *c, const InitPostofficeArgs *a, InitPostofficeAccounts *k) {
  Acc *admin = k->admin, *po = k->postoffice;
  TRY(need_upgrade_authority(c, k->program_data, k->upgrade_authority));
  seeds_postoffice(c);
  TRY(pda_find(c, po->key));
  if (!is_absent(po)) return E_ALREADY_EXISTS;
  u64 lamports = rent(POSTOFFICE_SIZE);
  TRY(check_payer(admin, lamports, 0));
  TRY(create_pda(c, admin, po, POSTOFFICE_SIZE, lamports));
  u8 *d = po->data;
  d[0] = TAG_POSTOFFICE;
  cp32(d + PO_ADMIN, admin->key);
  cp32(d + PO_ROOT_KSK, a->root_ksk);
  cp32(d + PO_DELEGATE, a->delegate_address);
  cp32(d + PO_COMMITMENT, a->commitment_root);
  wr64(d + PO_STAMP_FEE, a->stamp_fee_lamports);
  wr64(d + PO_SURCHARGE, a->settlement_surcharge_lamports);
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
HANDLER update_postoffice(Ctx *c, const UpdatePostofficeArgs *a, UpdatePostofficeAccounts *k) {
  Acc *admin = k->admin, *po = k->postoffice;
  TRY(require_admin(c, admin, po));
  if (a->has_delegate_address && is_zero32(a->delegate_address)) return E_INVALID_ARGUMENT;
  u8 *d = po->data;
  if (a->has_stamp_fee_lamports) wr64(d + PO_STAMP_FEE, a->stamp_fee_lamports);
  if (a->has_settlement_surcharge_lamports) wr64(d + PO_SURCHARGE, a->settlement_surcharge_lamports);
  if (a->has_delegate_address) cp32(d + PO_DELEGATE, a->delegate_address);
  if (a->has_root_ksk) cp32(d + PO_ROOT_KSK, a->root_ksk);
  return OK;
}

/*
 * WithdrawFees: admin (s), postoffice (w), to (w). Moves `amount` (1 ..=
 * fees_collected) of the collected protocol fees to `to`; the postoffice
 * never goes below its rent-exempt minimum.
 */
HANDLER withdraw_fees(Ctx *c, const WithdrawFeesArgs *a, WithdrawFeesAccounts *k) {
  Acc *admin = k->admin, *po = k->postoffice, *to = k->to;
  u64 amount = a->amount_lamports;
  TRY(require_admin(c, admin, po));
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
HANDLER propose_admin(Ctx *c, const ProposeAdminArgs *a, ProposeAdminAccounts *k) {
  Acc *admin = k->admin, *po = k->postoffice;
  TRY(require_admin(c, admin, po));
  if (eq32(a->new_admin, admin->key)) return E_INVALID_ARGUMENT;
  cp32(po->data + PO_PENDING_ADMIN, a->new_admin);
  return OK;
}

/* AcceptAdmin: the proposed admin (s), postoffice (w): it becomes admin, the proposal is cleared. */
HANDLER accept_admin(Ctx *c, AcceptAdminAccounts *k) {
  Acc *next = k->new_admin, *po = k->postoffice;
  TRY(require_postoffice(c, po));
  const u8 *pending = po->data + PO_PENDING_ADMIN;
  if (is_zero32(pending) || !eq32(pending, next->key)) return E_UNAUTHORIZED;
  cp32(po->data + PO_ADMIN, next->key);
  memset(po->data + PO_PENDING_ADMIN, 0, 32);
  return OK;
}

HANDLER create_domain(Ctx *c, const CreateDomainArgs *a, CreateDomainAccounts *k) {
  Acc *delegate = k->delegate, *po = k->postoffice, *dom = k->mail_domain;
  TRY(require_postoffice(c, po));
  if (!eq32(po->data + PO_DELEGATE, delegate->key)) return E_UNAUTHORIZED;
  if (!domain_ok(a->domain, a->domain_len)) return E_INVALID_ARGUMENT;
  blake3(a->domain, a->domain_len, c->hash, &c->b3);
  seeds_domain(c, c->hash);
  TRY(pda_find(c, dom->key));
  if (!is_absent(dom)) return E_ALREADY_EXISTS;
  u64 size = DOMAIN_FIXED + 4 + a->domain_len;
  u64 lamports = rent(size);
  TRY(check_payer(delegate, lamports, 0));
  TRY(create_pda(c, delegate, dom, size, lamports));
  u8 *d = dom->data;
  d[0] = TAG_MAIL_DOMAIN;
  d[MD_IS_ACTIVE] = 1;
  cp32(d + MD_AUTHORITY, a->authority);
  cp32(d + MD_RENT_PAYER, delegate->key);
  cp32(d + MD_NAME_HASH, c->hash);
  d[MD_BUMP] = c->bump;
  wr32(d + MD_DOMAIN, (u32)a->domain_len);
  memcpy(d + MD_DOMAIN + 4, a->domain, a->domain_len);
  return OK;
}
