/* Part of mail.c (one translation unit). The state of one invocation: parsed accounts, decoded arguments, the scratch space of PDAs and CPIs. */

/* ---- state ------------------------------------------------------------------ */

#define MAX_ACCOUNTS 9

/*
 * An instruction's handler (ix/): called once, from the generated dispatch
 * switch, as (ctx, its typed arguments, its bound accounts). Inlined there,
 * so the bound accounts stay in the one frame instead of being reached
 * through a pointer in every handler (about 10 KB of program otherwise).
 */
#define HANDLER static inline __attribute__((always_inline)) u64

/* One account of the input buffer; pointers are into the buffer (written in place). */
typedef struct {
  u8 *key;
  u8 *owner;
  u64 *lamports;
  u64 *len; /* serialized data length: the runtime reads it back */
  u8 *data;
  u64 rent_epoch;
  u8 is_signer;
  u8 is_writable;
  u8 executable;
} Acc;

/* Amounts of one purchase, worked out before anything moves. */
typedef struct {
  /* the order: stamps asked for and the buyer's price ceiling per stamp */
  u64 ordered;
  u8 has_ceiling;
  u64 ceiling;
  u64 postage;
  u64 held;
  u64 fees;
  u64 stamps;
  u64 escrow;
  u64 fees_collected;
} Purchase;

/*
 * SendMail's optional trailing accounts (a direct send's SenderReputation and
 * the recipient's RecipientRule), worked out before anything moves.
 */
typedef struct {
  u8 relayed;
  Acc *rep;     /* the signer's SenderReputation, or NULL */
  Acc *rule;    /* the recipient's RecipientRule PDA (may be absent), or NULL */
  u8 rep_bump;
  u8 rep_present;
  u8 by_rule;       /* the rule replaces the stamp */
  u64 rule_postage; /* lamports the signer pays the recipient under the rule */
  u64 credited;     /* postage this send pays the recipient: the reputation's increment */
  u64 cumulative;   /* the reputation's new cumulative_spend_lamports */
} SendExtras;

/* Everything an invocation works with; it lives at the start of the heap. */
typedef struct {
  Acc acc[MAX_ACCOUNTS];
  u64 n;
  const u8 *program_id;
  Acc *system;
  u8 tag;   /* the instruction */
  IxArgs a; /* its arguments (generated/args.h): the member named after it */
  SolClock clock;
  u8 have_clock;
  /* PDA seeds under construction; seeds[nseeds] is the bump when signing */
  SolSignerSeed seeds[8];
  u64 nseeds;
  u8 bump;
  u8 pda[32];
  u8 hash[32];
  u8 text[64];
  /* CPI */
  SolAccountMeta metas[4];
  SolAccountInfo infos[4];
  /* accounts whose lamports moved before the next CPI: passed along so its balance check sees both sides */
  Acc *moved[2];
  u64 nmoved;
  SolInstruction ix;
  SolSignerSeeds signer;
  u8 cpi_data[64];
  Purchase purchase;
  SendExtras sx;
  B3Work b3;
} Ctx;
