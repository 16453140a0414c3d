// BLAKE3-256, one-shot, for any input length (chunk tree with a CV stack).
// The runtime's sol_blake3 is not an active syscall, so the program hashes
// names and addresses itself. Portable reference algorithm, written for the
// BPF target: 32-bit words, no SIMD, working state passed by pointer (the
// stack is 512 bytes a frame) and kept in caller-provided scratch.
#ifndef SEALPOST_BLAKE3_H
#define SEALPOST_BLAKE3_H

#include "sol.h"

#define B3_CHUNK_START 1u
#define B3_CHUNK_END 2u
#define B3_PARENT 4u
#define B3_ROOT 8u
#define B3_CHUNK_LEN 1024u
#define B3_BLOCK_LEN 64u
#define B3_MAX_DEPTH 54

static const u32 B3_IV[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                             0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

/* The message word order of each of the 7 rounds (the permutation applied r times). */
static const u8 B3_SCHEDULE[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1},
    {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4},
    {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13},
};

/* One compression's inputs and output. */
typedef struct {
  u32 cv[8];
  u32 m[16];
  u32 v[16];
  u64 counter;
  u32 block_len;
  u32 flags;
} B3Node;

typedef struct {
  B3Node node;
  u32 stack[B3_MAX_DEPTH][8];
  u32 depth;
} B3Work;

/*
 * 32-bit words held in 64-bit registers: sums may carry garbage above bit 31
 * (the low 32 bits stay right); a rotation cleans its input, doubles it into
 * both halves with one multiply and shifts: the low 32 bits are then the
 * rotated word. Stores to the u32 state truncate.
 */
#define B3_LOW 0xffffffffULL
#define B3_TWICE 0x100000001ULL
#define B3_ROTR(x, n) ((((x) & B3_LOW) * B3_TWICE) >> (n))

#define B3_G(v, m, s, a, b, c, d, i)                                                                   \
  do {                                                                                                 \
    u64 va = v[a], vb = v[b], vc = v[c], vd = v[d];                                                    \
    va = va + vb + m[s[i]];                                                                            \
    vd = B3_ROTR(vd ^ va, 16);                                                                         \
    vc = vc + vd;                                                                                      \
    vb = B3_ROTR(vb ^ vc, 12);                                                                         \
    va = va + vb + m[s[i + 1]];                                                                        \
    vd = B3_ROTR(vd ^ va, 8);                                                                          \
    vc = vc + vd;                                                                                      \
    vb = B3_ROTR(vb ^ vc, 7);                                                                          \
    v[a] = (u32)va;                                                                                    \
    v[b] = (u32)vb;                                                                                    \
    v[c] = (u32)vc;                                                                                    \
    v[d] = (u32)vd;                                                                                    \
  } while (0)

__attribute__((noinline)) static void b3_round(u32 *v, const u32 *m, const u8 *s) {
  B3_G(v, m, s, 0, 4, 8, 12, 0);
  B3_G(v, m, s, 1, 5, 9, 13, 2);
  B3_G(v, m, s, 2, 6, 10, 14, 4);
  B3_G(v, m, s, 3, 7, 11, 15, 6);
  B3_G(v, m, s, 0, 5, 10, 15, 8);
  B3_G(v, m, s, 1, 6, 11, 12, 10);
  B3_G(v, m, s, 2, 7, 8, 13, 12);
  B3_G(v, m, s, 3, 4, 9, 14, 14);
}

/* Compresses n->m into n->v (all 16 output words; the first 8 are the CV). */
__attribute__((noinline)) static void b3_compress(B3Node *n) {
  u32 *v = n->v;
  for (int i = 0; i < 8; i++) v[i] = n->cv[i];
  for (int i = 0; i < 4; i++) v[8 + i] = B3_IV[i];
  v[12] = (u32)n->counter;
  v[13] = (u32)(n->counter >> 32);
  v[14] = n->block_len;
  v[15] = n->flags;
  for (int r = 0; r < 7; r++) b3_round(v, n->m, B3_SCHEDULE[r]);
  for (int i = 0; i < 8; i++) {
    v[i] ^= v[i + 8];
    v[i + 8] ^= n->cv[i];
  }
}

/* Loads up to 64 bytes as a zero-padded little-endian block. */
static void b3_load(u32 *m, const u8 *p, u32 len) {
  u32 full = len >> 2;
  u32 i = 0;
  for (; i < full; i++) m[i] = rd32(p + 4 * i);
  if (i < 16) {
    u32 w = 0;
    for (u32 k = 4 * i; k < len; k++) w |= (u32)p[k] << (8 * (k & 3));
    m[i++] = w;
  }
  for (; i < 16; i++) m[i] = 0;
}

/*
 * Leaves n set up for the last block of the chunk at `in` (len <= 1024):
 * cv is the chain value after every earlier block; the caller compresses
 * with or without ROOT.
 */
static void b3_chunk(B3Node *n, const u8 *in, u32 len, u64 counter) {
  for (int i = 0; i < 8; i++) n->cv[i] = B3_IV[i];
  n->counter = counter;
  u32 flags = B3_CHUNK_START;
  while (len > B3_BLOCK_LEN) {
    b3_load(n->m, in, B3_BLOCK_LEN);
    n->block_len = B3_BLOCK_LEN;
    n->flags = flags;
    b3_compress(n);
    for (int i = 0; i < 8; i++) n->cv[i] = n->v[i];
    flags = 0;
    in += B3_BLOCK_LEN;
    len -= B3_BLOCK_LEN;
  }
  b3_load(n->m, in, len);
  n->block_len = len;
  n->flags = flags | B3_CHUNK_END;
}

/* Sets n up as the parent of two child CVs. */
static void b3_parent(B3Node *n, const u32 *left, const u32 *right) {
  for (int i = 0; i < 8; i++) {
    n->cv[i] = B3_IV[i];
    n->m[i] = left[i];
    n->m[8 + i] = right[i];
  }
  n->counter = 0;
  n->block_len = B3_BLOCK_LEN;
  n->flags = B3_PARENT;
}

/* BLAKE3-256 of in[0..len) into out[32]; w is scratch. */
static void blake3(const u8 *in, u64 len, u8 *out, B3Work *w) {
  B3Node *n = &w->node;
  u32 cv[8];
  w->depth = 0;
  u64 chunk = 0;
  while (len > B3_CHUNK_LEN) {
    b3_chunk(n, in, B3_CHUNK_LEN, chunk);
    b3_compress(n);
    for (int i = 0; i < 8; i++) cv[i] = n->v[i];
    chunk++;
    for (u64 total = chunk; (total & 1) == 0; total >>= 1) {
      w->depth--;
      b3_parent(n, w->stack[w->depth], cv);
      b3_compress(n);
      for (int i = 0; i < 8; i++) cv[i] = n->v[i];
    }
    for (int i = 0; i < 8; i++) w->stack[w->depth][i] = cv[i];
    w->depth++;
    in += B3_CHUNK_LEN;
    len -= B3_CHUNK_LEN;
  }
  b3_chunk(n, in, (u32)len, chunk);
  while (w->depth > 0) {
    b3_compress(n);
    for (int i = 0; i < 8; i++) cv[i] = n->v[i];
    w->depth--;
    b3_parent(n, w->stack[w->depth], cv);
  }
  n->flags |= B3_ROOT;
  b3_compress(n);
  for (int i = 0; i < 8; i++) wr32(out + 4 * i, n->v[i]);
}

#endif
