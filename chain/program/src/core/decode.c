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

/* A u8 that must not exceed `max` (an enumeration such as ListAlias's mode). */
static u8 rd_u8_max(Reader *r, u8 max) {
  const u8 *p = take(r, 1);
  if (!p) return 0;
  if (*p > max) r->bad = 1;
  return *p;
}

/* A borsh string (u32 length, then UTF-8 bytes): its bytes, *len their count. */
static const u8 *rd_str(Reader *r, u64 *len) {
  *len = 0;
  const u8 *p = take(r, 4);
  if (!p) return NULL;
  u64 n = rd32(p);
  const u8 *s = take(r, n);
  if (!s) return NULL;
  if (!utf8_ok(s, n)) r->bad = 1;
  *len = n;
  return s;
}

#include "../generated/decode.h"

/* The tag and the arguments, completely: InvalidInstruction on an unknown tag, short, bad or trailing data. */
static u64 decode(Ctx *c, const u8 *data, u64 len) {
  if (len < 1 || data[0] >= IX_TAGS || IX_NAMES[data[0]][0] == 0) return E_INVALID_INSTRUCTION;
  Reader r = {data + 1, len - 1, 0};
  c->tag = data[0];
  decode_args(c->tag, &r, &c->a);
  if (r.bad || r.left != 0) return E_INVALID_INSTRUCTION;
  return OK;
}

#define ACCOUNTS(c, count)                                                                             \
  do {                                                                                                 \
    if ((c)->n != (count)) return E_INVALID_INSTRUCTION;                                               \
  } while (0)
