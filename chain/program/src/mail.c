// The Sealpost mail program (docs/protocol.md): accounts, seeds, the
// instructions and their rules, for the SBPFv0 runtime. One translation unit,
// built by `npm run build:program`: this file includes what the schema
// (chain/protocol/schema.ts) generates under generated/ (layouts, tags, seeds
// and errors; each instruction's typed arguments and their decoder; its named
// accounts and their binder; the dispatch table), the shared state and
// helpers (core/), one file per instruction family (ix/), and ends with the
// entrypoint.
//
// Shape of every instruction: decode the data completely into its typed
// arguments (InvalidInstruction on anything short, unknown, non-canonical or
// trailing); bind its accounts by name, checking their count, signers,
// writability and the System program as the schema lists them; then every
// rule of docs/protocol.md "Rules", all before the first write; then the System-program CPIs (account creation
// and payments from signers), then direct lamport moves out of accounts the
// program owns and the data writes. A failure returns a custom error and the
// runtime discards the whole transaction.
//
// What the runtime asks for beyond the rules themselves:
// - PDAs are created by System CPIs signed with their seeds (CreateAccount,
//   or Transfer + Allocate + Assign when the address already holds lamports:
//   the payer pays rent (+ bounty / stamp money) in full, the early lamports
//   stay on top); payments from signers are System Transfers; lamports leave
//   program-owned accounts by direct arithmetic. SendMail pays a spent stamp
//   out before the Email's CreateAccount (as the reference does), naming the
//   frombox and the recipient wallet in that CPI: the runtime checks that a
//   CPI leaves the caller's balances summed as they were.
// - A payer must be a System account without data, and neither a payer nor a
//   credited wallet may end between 0 and its rent-exempt minimum: the
//   program answers InsufficientFunds / InvalidAccount itself instead of the
//   runtime failing the transaction.
// - PDAs are derived with sol_sha256 + sol_curve_validate_point (what
//   create_program_address computes, at a fifth of the cost); BLAKE3 and
//   base58 are the program's own (blake3.h, base58.h).
#include "../include/base58.h"
#include "../include/blake3.h"
#include "../include/sol.h"

/* Error codes, account layouts, limits, instruction tags, seed prefixes. */
#include "generated/interface.h"
#include "generated/args.h"

#define OK 0ULL

#define TRY(x)                                                                                         \
  do {                                                                                                 \
    u64 e_ = (x);                                                                                      \
    if (e_) return e_;                                                                                 \
  } while (0)

/* Rent-exempt minimum: (128 + size) x 3480 lamports/byte-year x 2 years. */
static u64 rent(u64 size) { return (128 + size) * 6960; }

/* The program, in the order the compiler sees it: shared state and helpers, then each instruction family. */
#include "core/state.h"
#include "core/accounts.c"
#include "core/pda.c"
#include "core/lamports.c"
#include "core/text.c"
#include "core/decode.c"
#include "generated/accounts.h"
#include "ix/postoffice.c"
#include "ix/mailbox.c"
#include "ix/send.c"
#include "ix/stamps.c"
#include "ix/records.c"
#include "ix/alias-market.c"
#include "ix/alias-escrow.c"
#include "ix/domain-market.c"
#include "ix/timelocks.c"
#include "ix/attest.c"

/* ---- entrypoint ------------------------------------------------------------- */

/* Walks the input buffer: accounts (duplicates alias their first occurrence), data, program id. */
static u64 parse(Ctx *c, u8 *input) {
  u64 n = *(u64 *)input;
  if (n > MAX_ACCOUNTS) return E_INVALID_INSTRUCTION;
  c->n = n;
  u8 *p = input + 8;
  for (u64 i = 0; i < n; i++) {
    Acc *a = &c->acc[i];
    u8 dup = p[0];
    if (dup != NON_DUP_MARKER) {
      if (dup >= i) return E_INVALID_INSTRUCTION;
      *a = c->acc[dup];
      p += 8;
      continue;
    }
    a->is_signer = p[1];
    a->is_writable = p[2];
    a->executable = p[3];
    a->key = p + 8;
    a->owner = p + 40;
    a->lamports = (u64 *)(p + 72);
    a->len = (u64 *)(p + 80);
    a->data = p + 88;
    p += 88 + *a->len + MAX_PERMITTED_DATA_INCREASE;
    p = (u8 *)(((u64)p + 7) & ~7ULL);
    a->rent_epoch = *(u64 *)p;
    p += 8;
  }
  u64 len = *(u64 *)p;
  const u8 *data = p + 8;
  c->program_id = data + len;
  return decode(c, data, len);
}

/* The tag → handler switch, generated from the schema. */
#include "generated/dispatch.h"

u64 entrypoint(u8 *input);

u64 entrypoint(u8 *input) {
  u64 heap = HEAP_START;
  /* Opaque to the optimizer: fields are then reached as base + offset, not one lddw each. */
  __asm__("" : "+r"(heap));
  Ctx *c = (Ctx *)heap;
  TRY(parse(c, input));
  const char *name = IX_NAMES[c->tag];
  u64 name_len = 0;
  while (name[name_len]) name_len++;
  sol_log_(name, name_len);
  return dispatch(c);
}
