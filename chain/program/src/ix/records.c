/* Part of mail.c (one translation unit). Pin leases and participant beacons. */

/* ---- pin leases ------------------------------------------------------------- */

/*
 * CreatePinLease: the holder pays `fee_lamports` (>= 1) to the operator's
 * wallet in this instruction and the rent of the lease, which records
 * blake3(cid), holder, operator, the term and the fee. Paying oneself is not
 * paying (LeaseUnpaid); a term already over is LeaseExpired.
 */
HANDLER create_pin_lease(Ctx *c, const CreatePinLeaseArgs *a, CreatePinLeaseAccounts *k) {
  Acc *holder = k->holder, *op = k->operator, *lease = k->pin_lease;
  if (is_zero32(a->cid_hash)) return E_INVALID_ARGUMENT;
  /*
   * The fee must leave the holder for good: not to itself, and not to a
   * program-derived address (the lease's own, the holder's beacon...) whose
   * lamports a close could hand back. A wallet is an ed25519 point; no PDA is.
   */
  if (a->fee_lamports == 0 || eq32(op->key, holder->key) || !on_curve(op->key)) return E_LEASE_UNPAID;
  if (!is_zero32(op->owner) || *op->len != 0) return E_INVALID_ACCOUNT;
  i64 t = now(c);
  if (a->expires_at <= t) return E_LEASE_EXPIRED;
  seeds_pin_lease(c, a->cid_hash, holder->key);
  TRY(pda_find(c, lease->key));
  if (!is_absent(lease)) return E_ALREADY_EXISTS;
  u64 lamports = rent(PIN_LEASE_SIZE), total;
  TRY(add(lamports, a->fee_lamports, &total));
  TRY(check_payer(holder, total, 0));
  TRY(check_credit(op, a->fee_lamports));
  u8 bump = c->bump;
  TRY(create_pda(c, holder, lease, PIN_LEASE_SIZE, lamports));
  TRY(cpi_transfer(c, holder, op, a->fee_lamports));
  u8 *d = lease->data;
  d[0] = TAG_PIN_LEASE;
  cp32(d + PL_CID_HASH, a->cid_hash);
  cp32(d + PL_HOLDER, holder->key);
  cp32(d + PL_OPERATOR, op->key);
  wr64(d + PL_CREATED_AT, (u64)t);
  wr64(d + PL_EXPIRES_AT, (u64)a->expires_at);
  wr64(d + PL_FEE, a->fee_lamports);
  d[PL_BUMP] = bump;
  return OK;
}

/* ClosePinLease: the holder only; all the lease's lamports back to the holder. */
HANDLER close_pin_lease(Ctx *c, ClosePinLeaseAccounts *k) {
  Acc *holder = k->holder, *lease = k->pin_lease;
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
HANDLER publish_beacon(Ctx *c, const PublishBeaconArgs *a, PublishBeaconAccounts *k) {
  Acc *owner = k->owner, *bc = k->beacon;
  if (!beacon_cid_ok(a->detail_cid, a->detail_cid_len)) return E_INVALID_ARGUMENT;
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
  wr64(d + BC_TAGS, a->tags);
  wr64(d + BC_UPDATED_AT, (u64)t);
  d[BC_CID_LEN] = (u8)a->detail_cid_len;
  memset(d + BC_CID, 0, BEACON_CID_MAX);
  memcpy(d + BC_CID, a->detail_cid, a->detail_cid_len);
  return OK;
}

/* CloseBeacon: the owner's own beacon; its rent back to the owner. */
HANDLER close_beacon(Ctx *c, CloseBeaconAccounts *k) {
  Acc *owner = k->owner, *bc = k->beacon;
  seeds_beacon(c, owner->key);
  TRY(expect_pda(c, bc, TAG_BEACON, BC_BUMP));
  TRY(require_kind(c, bc, TAG_BEACON));
  TRY(check_credit(owner, *bc->lamports));
  close_account(bc, owner);
  return OK;
}
