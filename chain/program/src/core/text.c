/* Part of mail.c (one translation unit). Text rules: UTF-8, domain names, aliases, body CIDs and the wallet hash. */

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
