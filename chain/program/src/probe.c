// Test probe for the mail program's own BLAKE3 and base58 (the headers
// mail.c uses), built and deployed only by test/program/program-cu.test.ts: it
// compares what the C code computes with an expected value sent in the data.
//   [0] expected_hash[32] input...        BLAKE3-256(input) == expected
//   [1] key[32] expected_text...          base58(key) == expected
//   [2] expected_bool[1] text...          b58_is_key(text) == expected
// Returns 0 when equal, Custom(1) when not, Custom(2) on malformed data.
#include "../include/base58.h"
#include "../include/blake3.h"
#include "../include/sol.h"

u64 entrypoint(u8 *input);

u64 entrypoint(u8 *input) {
  u64 heap = HEAP_START;
  __asm__("" : "+r"(heap));
  B3Work *w = (B3Work *)heap;
  u8 *out = (u8 *)heap + sizeof(B3Work);
  /* no accounts are passed: the data follows the account count */
  if (*(u64 *)input != 0) return 2;
  u64 len = *(u64 *)(input + 8);
  const u8 *d = input + 16;
  if (len < 1) return 2;
  switch (d[0]) {
  case 0:
    if (len < 33) return 2;
    blake3(d + 33, len - 33, out, w);
    return eq32(out, d + 1) ? 0 : 1;
  case 1: {
    if (len < 33) return 2;
    u64 n = b58_encode32(d + 1, out);
    if (n != len - 33) return 1;
    return memcmp(out, d + 33, n) == 0 ? 0 : 1;
  }
  case 2:
    if (len < 2) return 2;
    return (u64)b58_is_key(d + 2, len - 2) == d[1] ? 0 : 1;
  default:
    return 2;
  }
}
