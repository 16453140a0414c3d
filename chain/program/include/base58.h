// base58 (Bitcoin alphabet) for 32-byte keys: encoding a wallet address for
// from_hash = blake3(base58(wallet)), and recognizing a key-shaped alias.
#ifndef SEALPOST_BASE58_H
#define SEALPOST_BASE58_H

#include "sol.h"

static const char B58_ALPHABET[59] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/* 58^5: five base58 digits per division pass. */
#define B58_POW5 656356768ULL

/* Value of a base58 character, or -1. */
static int b58_digit(u8 ch) {
  if (ch >= '1' && ch <= '9') return ch - '1';
  if (ch >= 'A' && ch <= 'H') return 9 + (ch - 'A');
  if (ch >= 'J' && ch <= 'N') return 17 + (ch - 'J');
  if (ch >= 'P' && ch <= 'Z') return 22 + (ch - 'P');
  if (ch >= 'a' && ch <= 'k') return 33 + (ch - 'a');
  if (ch >= 'm' && ch <= 'z') return 44 + (ch - 'm');
  return -1;
}

/* base58 text of a 32-byte key into out (room for 44); returns its length. */
static u64 b58_encode32(const u8 *key, u8 *out) {
  u32 limbs[8];
  u8 digits[48];
  for (int i = 0; i < 8; i++)
    limbs[i] = ((u32)key[4 * i] << 24) | ((u32)key[4 * i + 1] << 16) | ((u32)key[4 * i + 2] << 8) |
               (u32)key[4 * i + 3];
  u64 nd = 0;
  int start = 0;
  while (start < 8 && limbs[start] == 0) start++;
  while (start < 8) {
    u64 rem = 0;
    for (int i = start; i < 8; i++) {
      u64 cur = (rem << 32) | limbs[i];
      limbs[i] = (u32)(cur / B58_POW5);
      rem = cur % B58_POW5;
    }
    for (int k = 0; k < 5; k++) {
      digits[nd++] = (u8)(rem % 58);
      rem /= 58;
    }
    while (start < 8 && limbs[start] == 0) start++;
  }
  while (nd > 0 && digits[nd - 1] == 0) nd--;
  u64 zeros = 0;
  while (zeros < 32 && key[zeros] == 0) zeros++;
  u64 len = 0;
  for (u64 i = 0; i < zeros; i++) out[len++] = '1';
  while (nd > 0) out[len++] = (u8)B58_ALPHABET[digits[--nd]];
  return len;
}

/* True when s is the base58 form of a 32-byte key (what bs58 would decode to 32 bytes). */
static int b58_is_key(const u8 *s, u64 n) {
  if (n < 32 || n > 44) return 0;
  u32 limbs[10];
  for (int j = 0; j < 10; j++) limbs[j] = 0;
  u64 zeros = 0;
  while (zeros < n && s[zeros] == '1') zeros++;
  for (u64 i = 0; i < n; i++) {
    int v = b58_digit(s[i]);
    if (v < 0) return 0;
    u64 carry = (u64)v;
    for (int j = 0; j < 10; j++) {
      u64 cur = (u64)limbs[j] * 58 + carry;
      limbs[j] = (u32)cur;
      carry = cur >> 32;
    }
  }
  int top = 9;
  while (top >= 0 && limbs[top] == 0) top--;
  u64 bytes = 0;
  if (top >= 0) {
    u32 t = limbs[top];
    u64 b = 0;
    while (t) {
      b++;
      t >>= 8;
    }
    bytes = (u64)top * 4 + b;
  }
  return zeros + bytes == 32;
}

#endif
