// The few pieces of Solana's C ABI the mail program uses: integer types, the
// syscalls (resolved by name at load time), the CPI structs, memory helpers
// (no libc here; clang may emit calls to memcpy/memset, so they exist) and
// the scratch heap every invocation gets.
#ifndef SEALPOST_SOL_H
#define SEALPOST_SOL_H

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed long long i64;

#define NULL ((void *)0)

/* 32 KiB of zeroed heap at a fixed address, fresh for each invocation. */
#define HEAP_START 0x300000000ULL
#define HEAP_SIZE (32 * 1024)

/* Input-buffer layout (aligned serialization, BPF Upgradeable Loader). */
#define MAX_PERMITTED_DATA_INCREASE 10240
#define NON_DUP_MARKER 0xff

typedef struct {
  const u8 *addr;
  u64 len;
} SolSignerSeed;

typedef struct {
  const SolSignerSeed *addr;
  u64 len;
} SolSignerSeeds;

typedef struct {
  const u8 *pubkey;
  u8 is_writable;
  u8 is_signer;
} SolAccountMeta;

typedef struct {
  const u8 *program_id;
  const SolAccountMeta *accounts;
  u64 account_len;
  const u8 *data;
  u64 data_len;
} SolInstruction;

typedef struct {
  u8 *key;
  u64 *lamports;
  u64 data_len;
  u8 *data;
  u8 *owner;
  u64 rent_epoch;
  u8 is_signer;
  u8 is_writable;
  u8 executable;
} SolAccountInfo;

typedef struct {
  u64 slot;
  i64 epoch_start_timestamp;
  u64 epoch;
  u64 leader_schedule_epoch;
  i64 unix_timestamp;
} SolClock;

/* Syscalls: each is a `call -1` relocated by name. */
extern void sol_log_(const char *msg, u64 len);
extern u64 sol_invoke_signed_c(const SolInstruction *ix, const SolAccountInfo *infos, u64 n_infos,
                               const SolSignerSeeds *signers, u64 n_signers);
extern u64 sol_get_clock_sysvar(void *clock);
/* SHA-256 over a list of byte slices ({addr, len}, the SolSignerSeed shape). */
extern u64 sol_sha256(const SolSignerSeed *slices, u64 n, u8 *out);
/* 0 when the 32 bytes are a valid compressed Edwards point (curve id 0 = ed25519). */
extern u64 sol_curve_validate_point(u64 curve_id, const u8 *point, u8 *unused);

void *memcpy(void *dst, const void *src, unsigned long n);
void *memset(void *dst, int c, unsigned long n);
int memcmp(const void *a, const void *b, unsigned long n);

__attribute__((noinline)) void *memcpy(void *dst, const void *src, unsigned long n) {
  u8 *d = (u8 *)dst;
  const u8 *s = (const u8 *)src;
  for (unsigned long i = 0; i < n; i++) d[i] = s[i];
  return dst;
}

__attribute__((noinline)) void *memset(void *dst, int c, unsigned long n) {
  u8 *d = (u8 *)dst;
  for (unsigned long i = 0; i < n; i++) d[i] = (u8)c;
  return dst;
}

int memcmp(const void *a, const void *b, unsigned long n) {
  const u8 *x = (const u8 *)a;
  const u8 *y = (const u8 *)b;
  for (unsigned long i = 0; i < n; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/*
 * Word access at any address: the SBF VM loads and stores 8/4 bytes at
 * unaligned addresses (account fields sit at odd offsets), so these compile
 * to single ldxdw/stxdw instructions.
 */
typedef u64 u64_any __attribute__((may_alias));
typedef u32 u32_any __attribute__((may_alias));

static inline u64 rd64(const u8 *p) { return *(const u64_any *)p; }
static inline u32 rd32(const u8 *p) { return *(const u32_any *)p; }
static inline void wr64(u8 *p, u64 v) { *(u64_any *)p = v; }
static inline void wr32(u8 *p, u32 v) { *(u32_any *)p = v; }

static inline int eq32(const u8 *a, const u8 *b) {
  return rd64(a) == rd64(b) && rd64(a + 8) == rd64(b + 8) && rd64(a + 16) == rd64(b + 16) &&
         rd64(a + 24) == rd64(b + 24);
}

static inline int is_zero32(const u8 *a) { return (rd64(a) | rd64(a + 8) | rd64(a + 16) | rd64(a + 24)) == 0; }

static inline void cp32(u8 *dst, const u8 *src) {
  wr64(dst, rd64(src));
  wr64(dst + 8, rd64(src + 8));
  wr64(dst + 16, rd64(src + 16));
  wr64(dst + 24, rd64(src + 24));
}

#endif
