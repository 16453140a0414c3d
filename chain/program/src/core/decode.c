/* Part of mail.c (one translation unit). Instruction data: the reader and the decoder of every instruction's arguments. */

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
