// The mail program's interface, written once: every account (tag, seeds,
// fields in wire order with their C names), every instruction (tag, borsh
// arguments, the ordered account list with signer/writable flags), the seed
// families, the custom error codes and the limits the program enforces.
// `npm run gen:protocol` renders it into the program's C header
// (chain/program/src/generated/interface.h), the tables of docs/protocol.md
// and an IDL in Codama's format (chain/protocol/idl.json); the TypeScript
// codecs (chain/client/accounts, chain/client/instruction-data.ts), the seed prefixes and
// the error table read it directly. A deployed layout never moves: a field is
// only ever appended, and test/program/protocol-generated.test.ts fails when a
// generated file is stale.
//
// This module is a leaf: it imports nothing, so the program's build, the
// docs generator and any client can load it alone.

/** A borsh field type: scalars, fixed byte arrays, and options of scalars. */
export type ScalarType = 'u8' | 'u64' | 'i64' | 'bool' | 'key' | 'hash' | 'string' | { bytes: number };
export type FieldType = ScalarType | { option: 'u64' | 'bool' | 'key' | 'hash' };

/** Bytes a field takes, or null when its size varies (string, option). */
export function fixedSizeOf(t: FieldType): number | null {
  if (typeof t === 'object') return 'bytes' in t ? t.bytes : null;
  switch (t) {
    case 'u8':
    case 'bool':
      return 1;
    case 'u64':
    case 'i64':
      return 8;
    case 'key':
    case 'hash':
      return 32;
    case 'string':
      return null;
  }
}

/** One field of an account: its type, the suffix of its C offset macro (`<prefix>_<c>`), and a note. */
export interface FieldSpec {
  readonly type: FieldType;
  readonly c: string;
  readonly doc?: string;
}

/** One argument of an instruction. */
export interface ArgSpec {
  readonly type: FieldType;
  readonly doc?: string;
  /** A u8 above this does not decode (InvalidInstruction). */
  readonly max?: number;
}

/** One entry of an instruction's account list, in order. */
export interface AccountMetaSpec {
  /** camelCase name (the builders' parameter and the IDL's account name). */
  readonly name: string;
  readonly signer: boolean;
  readonly writable: boolean;
  readonly doc?: string;
  /** Present only in some calls: the condition (trailing accounts only). */
  readonly when?: string;
}

/** One variable seed: its name, its type, and how docs/protocol.md writes it when not by name. */
export interface SeedPartSpec {
  readonly name: string;
  readonly type: 'key' | 'hash' | 'u64';
  readonly doc?: string;
}

export interface SeedSpec {
  /** The constant first seed (UTF-8). */
  readonly prefix: string;
  /** The C array holding the prefix. */
  readonly c: string;
  /** The variable seeds that follow, in order (a u64 is 8 bytes little-endian). */
  readonly parts: readonly SeedPartSpec[];
}

export interface AccountSpec {
  readonly tag: number;
  /** Key of SEEDS this account's address derives from. */
  readonly seed: keyof typeof SEEDS;
  /** C names: the kind tag macro, the size macro (`*_FIXED` when the last field is variable), the offset prefix. */
  readonly c: { readonly tag: string; readonly size: string; readonly prefix: string };
  readonly fields: Readonly<Record<string, FieldSpec>>;
}

export interface InstructionSpec {
  readonly tag: number;
  /** The C handler in chain/program/src/ix/ when several instructions share one (default: the snake-case name). */
  readonly handler?: string;
  readonly args: Readonly<Record<string, ArgSpec>>;
  readonly accounts: readonly AccountMetaSpec[];
}

export interface ErrorSpec {
  readonly code: number;
  /** The C macro (its value is the code, except Custom(0), see docs/protocol.md "Error codes"). */
  readonly c: string;
  readonly doc?: string;
}

export interface ConstantSpec {
  readonly value: number;
  /** The C macro; written with a `ULL` suffix when `wide`. */
  readonly c: string;
  readonly wide?: boolean;
  readonly doc: string;
}

/** Capacity of ParticipantBeacon's `detail_cid` (bytes). */
const BEACON_CID_MAX = 96;

const f = <const T extends FieldType>(type: T, c: string, doc?: string) => ({
  type,
  c,
  ...(doc ? { doc } : {}),
});
const x = <const T extends FieldType>(type: T, doc?: string) => ({ type, ...(doc ? { doc } : {}) });
type Flags = '' | 's' | 'w' | 'sw';
/** An account of an instruction's list; with `opt`, a conditional trailing one. */
function a<const N extends string>(
  name: N,
  flags: Flags,
  doc?: string,
): AccountMetaSpec & { readonly name: N };
function a<const N extends string>(
  name: N,
  flags: Flags,
  doc: string | undefined,
  opt: { when: string },
): AccountMetaSpec & { readonly name: N; readonly when: string };
function a(name: string, flags: Flags, doc?: string, opt?: { when: string }): AccountMetaSpec {
  return {
    name,
    signer: flags.includes('s'),
    writable: flags.includes('w'),
    ...(doc ? { doc } : {}),
    ...(opt ?? {}),
  };
}
const v = (name: string, type: SeedPartSpec['type'], doc?: string): SeedPartSpec => ({
  name,
  type,
  ...(doc ? { doc } : {}),
});
const e = (code: number, c: string, doc?: string): ErrorSpec => ({ code, c, ...(doc ? { doc } : {}) });

export const PROGRAM = {
  name: 'sealpostMail',
  /** The documented id, base58 of sha256("sealpost:mail-program:v1"); the binary is id-agnostic, a deployer uses its own. */
  address: 'FAiWAmxJdi1NV9geyDCRr6RegVEMLpS2ercAe1CQy8Mp',
  version: '1.0.0',
} as const;

/** Seed families, in the order the program declares their prefixes. */
export const SEEDS = {
  mailbox: { prefix: 'mailbox', c: 'SEED_MAILBOX', parts: [v('owner', 'key')] },
  mailboxKey: { prefix: 'mailbox_key', c: 'SEED_MAILBOX_KEY', parts: [v('owner', 'key')] },
  email: {
    prefix: 'email',
    c: 'SEED_EMAIL',
    parts: [v('recipient', 'key'), v('index', 'u64', 'index u64 LE')],
  },
  frombox: { prefix: 'frombox', c: 'SEED_FROMBOX', parts: [v('fromHash', 'hash'), v('recipient', 'key')] },
  alias: { prefix: 'alias', c: 'SEED_ALIAS', parts: [v('nameHash', 'hash', 'blake3(normalized alias)')] },
  domain: {
    prefix: 'domain',
    c: 'SEED_DOMAIN',
    parts: [v('nameHash', 'hash', 'blake3(lowercased domain name)')],
  },
  postoffice: { prefix: 'postoffice', c: 'SEED_POSTOFFICE', parts: [] },
  beacon: { prefix: 'beacon', c: 'SEED_BEACON', parts: [v('owner', 'key')] },
  pinLease: { prefix: 'pin_lease', c: 'SEED_PIN_LEASE', parts: [v('cidHash', 'hash'), v('holder', 'key')] },
  pendingClose: { prefix: 'pending_close', c: 'SEED_PENDING_CLOSE', parts: [v('wallet', 'key')] },
  pendingDeactivation: {
    prefix: 'pending_deactivation',
    c: 'SEED_PENDING_DEACTIVATION',
    parts: [v('domain', 'key', 'domain account')],
  },
  pendingReclaim: {
    prefix: 'pending_reclaim',
    c: 'SEED_PENDING_RECLAIM',
    parts: [v('domain', 'key', 'domain account')],
  },
  aliasListing: {
    prefix: 'alias_listing',
    c: 'SEED_ALIAS_LISTING',
    parts: [v('alias', 'key', 'alias account')],
  },
  aliasEscrow: {
    prefix: 'alias_escrow',
    c: 'SEED_ALIAS_ESCROW',
    parts: [v('alias', 'key', 'alias account')],
  },
  aliasBid: {
    prefix: 'alias_bid',
    c: 'SEED_ALIAS_BID',
    parts: [v('listing', 'key', 'alias listing account'), v('bidder', 'key')],
  },
  domainListing: {
    prefix: 'domain_listing',
    c: 'SEED_DOMAIN_LISTING',
    parts: [v('domain', 'key', 'domain account')],
  },
  attestation: {
    prefix: 'attestation',
    c: 'SEED_ATTESTATION',
    parts: [v('domain', 'key', 'domain account'), v('wallet', 'key')],
  },
  reputation: { prefix: 'reputation', c: 'SEED_REPUTATION', parts: [v('wallet', 'key')] },
  recipientRule: { prefix: 'recipient_rule', c: 'SEED_RECIPIENT_RULE', parts: [v('owner', 'key')] },
} as const satisfies Record<string, SeedSpec>;

/** Account kinds by tag (the first data byte). */
export const ACCOUNTS = {
  Mailbox: {
    tag: 1,
    seed: 'mailbox',
    c: { tag: 'TAG_MAILBOX', size: 'MAILBOX_SIZE', prefix: 'MB' },
    fields: {
      owner: f('key', 'OWNER', 'the wallet'),
      mailCount: f(
        'u64',
        'MAIL_COUNT',
        "number of Email accounts ever created for this wallet; the next message's index",
      ),
      defaultPostage: f(
        'u64',
        'DEFAULT_POSTAGE',
        'lamports per stamp a first-contact sender pays; 0 = open mailbox',
      ),
      domain: f(
        'key',
        'DOMAIN',
        'MailDomain account the mailbox belongs to: the only domain whose authority may relay mail into it; zero key = none, and then no relayed mail (see "Trust model"); set by CreateMailbox and SetMailboxDomain',
      ),
      noIpfs: f(
        'bool',
        'NO_IPFS',
        'bodies stay in the operator\'s store; `cid` is then a `b3:` marker (see "The `b3:` marker")',
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  MailboxKey: {
    tag: 2,
    seed: 'mailboxKey',
    c: { tag: 'TAG_MAILBOX_KEY', size: 'MAILBOX_KEY_SIZE', prefix: 'MK' },
    fields: {
      owner: f('key', 'OWNER'),
      pubKey: f('key', 'PUB_KEY', 'delegated X25519 encryption key (shown base58)'),
      bump: f('u8', 'BUMP'),
    },
  },
  Email: {
    tag: 3,
    seed: 'email',
    c: { tag: 'TAG_EMAIL', size: 'EMAIL_FIXED', prefix: 'EM' },
    fields: {
      recipient: f('key', 'RECIPIENT', 'wallet the PDA seeds on'),
      sender: f(
        'key',
        'SENDER',
        "wallet that signed SendMail: a domain authority (relayed) or the sender's own wallet (direct)",
      ),
      fromHash: f(
        'hash',
        'FROM_HASH',
        'blake3 of the sender: the canonicalized envelope from address (relayed) or the signer\'s base58 address (direct); see "from_hash" below',
      ),
      index: f('u64', 'INDEX', "position in the recipient's inbox"),
      epoch: f('i64', 'EPOCH', 'chain time of the send'),
      bountyLamports: f('u64', 'BOUNTY', 'escrowed in this account; 0 = none'),
      expiresAt: f('i64', 'EXPIRES_AT', "end of the bounty's claim window; 0 when no bounty"),
      replyToHash: f(
        'hash',
        'REPLY_TO',
        "blake3 of the parent Email account's base58 address; zero key = not a reply",
      ),
      rentPayer: f('key', 'RENT_PAYER', 'receives the rent (and an unclaimed bounty) back on DeleteMail'),
      bump: f('u8', 'BUMP'),
      cid: f(
        'string',
        'CID',
        'CIDv1 text of the sealed body (see "Body CIDs"), or the `b3:` marker when the mailbox has no_ipfs; 1..=128 bytes',
      ),
    },
  },
  Frombox: {
    tag: 4,
    seed: 'frombox',
    c: { tag: 'TAG_FROMBOX', size: 'FROMBOX_SIZE', prefix: 'FB' },
    fields: {
      fromHash: f('hash', 'FROM_HASH'),
      recipient: f('key', 'RECIPIENT'),
      requiredPostage: f(
        'u64',
        'REQUIRED',
        'lamports a stamp must carry toward this recipient; 0 = this sender is allowed free',
      ),
      stamps: f('u64', 'STAMPS', 'unspent stamps'),
      postageEscrow: f('u64', 'ESCROW', 'postage lamports held for the unspent stamps (paid in at purchase)'),
      walletStamps: f(
        'bool',
        'WALLET',
        '1 once the wallet whose address hashes to `from_hash` paid stamps in itself (BuyStamps, TopUpStamps, or AddStamps signed by that wallet): then no relayed SendMail spends a stamp of this frombox (`StampsNotRelayable`). CreateFrombox writes 0; nothing clears it',
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  Alias: {
    tag: 5,
    seed: 'alias',
    c: { tag: 'TAG_ALIAS', size: 'ALIAS_SIZE', prefix: 'AL' },
    fields: {
      nameHash: f('hash', 'NAME_HASH', 'blake3(normalized alias)'),
      address: f('key', 'ADDRESS', 'target wallet'),
      owner: f('key', 'OWNER', 'wallet that controls the alias (the creator)'),
      bump: f('u8', 'BUMP'),
    },
  },
  MailDomain: {
    tag: 6,
    seed: 'domain',
    c: { tag: 'TAG_MAIL_DOMAIN', size: 'DOMAIN_FIXED', prefix: 'MD' },
    fields: {
      isActive: f('bool', 'IS_ACTIVE'),
      authority: f(
        'key',
        'AUTHORITY',
        'ed25519 key published at `_solana.authority.<domain>`; signs relayed SendMail',
      ),
      rentPayer: f('key', 'RENT_PAYER'),
      nameHash: f('hash', 'NAME_HASH', 'blake3(lowercased domain)'),
      bump: f('u8', 'BUMP'),
      domain: f('string', 'DOMAIN', 'lowercased DNS name, 1..=253 bytes'),
    },
  },
  Postoffice: {
    tag: 7,
    seed: 'postoffice',
    c: { tag: 'TAG_POSTOFFICE', size: 'POSTOFFICE_SIZE', prefix: 'PO' },
    fields: {
      admin: f(
        'key',
        'ADMIN',
        'signer of InitPostoffice, later the key AcceptAdmin installed; signs UpdatePostoffice, WithdrawFees and ProposeAdmin (see "The postoffice\'s admin")',
      ),
      rootKsk: f(
        'hash',
        'ROOT_KSK',
        "SHA-256 DS digest of the root zone's KSK: the reclaim proofs' trust anchor (see Timelocks); UpdatePostoffice may replace it",
      ),
      delegateAddress: f(
        'key',
        'DELEGATE',
        "the domain authorization service's key; signs CreateDomain and RequestReclaim; UpdatePostoffice may replace it (never by the zero key)",
      ),
      commitmentRoot: f(
        'hash',
        'COMMITMENT',
        'opaque Merkle root committing to the postmaster key; written once by InitPostoffice',
      ),
      stampFeeLamports: f(
        'u64',
        'STAMP_FEE',
        "protocol fee per stamp (waived when buying toward one's own mailbox); charged at purchase",
      ),
      settlementSurchargeLamports: f(
        'u64',
        'SURCHARGE',
        'per-stamp surcharge charged at purchase and held in the frombox; paid to the SendMail signer when that stamp is spent (covers its fee). A change applies to later purchases only',
      ),
      feesCollected: f(
        'u64',
        'FEES_COLLECTED',
        'protocol fees held in this account, not yet withdrawn (WithdrawFees)',
      ),
      pendingAdmin: f(
        'key',
        'PENDING_ADMIN',
        'the key ProposeAdmin named to take the admin role with AcceptAdmin; zero key = no proposal',
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  AliasListing: {
    tag: 8,
    seed: 'aliasListing',
    c: { tag: 'TAG_ALIAS_LISTING', size: 'ALIAS_LISTING_SIZE', prefix: 'LS' },
    fields: {
      alias: f('key', 'ALIAS', "the Alias account, the PDA's seed"),
      holder: f(
        'key',
        'HOLDER',
        "the wallet that listed it: receives the price or the winning bid and the listing's rent",
      ),
      priceLamports: f(
        'u64',
        'PRICE',
        "fixed price (mode 0) or the auction's reserve, the lowest first bid (mode 1); \u2265 1",
      ),
      createdAt: f('i64', 'CREATED_AT', 'chain time of ListAlias'),
      expiresAt: f(
        'i64',
        'EXPIRES_AT',
        'auction: its end, moved later by anti-snipe; fixed price: 0 (no end)',
      ),
      mode: f('u8', 'MODE', '0 fixed price, 1 auction'),
      antisnipeWindowSecs: f('i64', 'ANTISNIPE', 'auction: 0..=86 400; fixed price: 0'),
      highBidLamports: f('u64', 'HIGH_BID', '0 until the first bid'),
      highBidder: f('key', 'HIGH_BIDDER', 'zero key until the first bid'),
      bump: f('u8', 'BUMP'),
    },
  },
  DomainListing: {
    tag: 9,
    seed: 'domainListing',
    c: { tag: 'TAG_DOMAIN_LISTING', size: 'DOMAIN_LISTING_SIZE', prefix: 'DL' },
    fields: {
      domain: f(
        'key',
        'DOMAIN',
        "the MailDomain account, the PDA's seed; its `authority` is this listing while it exists",
      ),
      holder: f(
        'key',
        'HOLDER',
        'the authority that listed it: receives the price and the rent, gets the domain back on cancel',
      ),
      buyer: f('key', 'BUYER', 'the only wallet that may buy (an escrowed hand-off); zero key = anyone'),
      priceLamports: f(
        'u64',
        'PRICE',
        'what the buyer pays the holder; \u2265 1, or 0 with a named buyer (a gift)',
      ),
      createdAt: f('i64', 'CREATED_AT', 'chain time of ListDomain'),
      expiresAt: f(
        'i64',
        'EXPIRES_AT',
        'buying is allowed before it; from it on anyone may return the domain; at most 7 days after `created_at`',
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  AliasEscrow: {
    tag: 10,
    seed: 'aliasEscrow',
    c: { tag: 'TAG_ALIAS_ESCROW', size: 'ALIAS_ESCROW_SIZE', prefix: 'ES' },
    fields: {
      alias: f('key', 'ALIAS', "the Alias account, the PDA's seed"),
      holder: f('key', 'HOLDER', 'the offering owner: receives the fee and the rent'),
      recipient: f('key', 'RECIPIENT', 'the only wallet that may accept'),
      feeLamports: f('u64', 'FEE', 'paid by the recipient to the holder on acceptance; 0 = a gift'),
      offeredAt: f('i64', 'OFFERED_AT', 'chain time of OfferAlias'),
      expiresAt: f(
        'i64',
        'EXPIRES_AT',
        'acceptance must come before it; afterwards anyone may return the alias',
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  AliasBid: {
    tag: 11,
    seed: 'aliasBid',
    c: { tag: 'TAG_ALIAS_BID', size: 'ALIAS_BID_SIZE', prefix: 'BD' },
    fields: {
      listing: f('key', 'LISTING', 'the AliasListing, a seed'),
      bidder: f('key', 'BIDDER', 'the bidding wallet, a seed'),
      amountLamports: f(
        'u64',
        'AMOUNT',
        'the bid; the account holds its rent plus exactly this (plus any lamports sent to the address before it existed)',
      ),
      bidAt: f('i64', 'BID_AT', 'chain time of the last BidAlias by this bidder'),
      bump: f('u8', 'BUMP'),
    },
  },
  ParticipantBeacon: {
    tag: 12,
    seed: 'beacon',
    c: { tag: 'TAG_BEACON', size: 'BEACON_SIZE', prefix: 'BC' },
    fields: {
      owner: f('key', 'OWNER', "the participant wallet, the PDA's seed"),
      tags: f(
        'u64',
        'TAGS',
        "bitmap: bit n set = tag n (0..63); what a tag number means is the clients' convention",
      ),
      createdAt: f('i64', 'CREATED_AT', 'chain time of the first PublishBeacon'),
      updatedAt: f('i64', 'UPDATED_AT', 'chain time of the last PublishBeacon'),
      bump: f('u8', 'BUMP'),
      detailCidLen: f('u8', 'CID_LEN', '1..=96'),
      detailCid: f(
        { bytes: BEACON_CID_MAX },
        'CID',
        'the CID text of the encrypted profile blob in its first `detail_cid_len` bytes, zeros after',
      ),
    },
  },
  SenderAttestation: {
    tag: 13,
    seed: 'attestation',
    c: { tag: 'TAG_ATTESTATION', size: 'ATTESTATION_SIZE', prefix: 'SA' },
    fields: {
      domain: f('key', 'DOMAIN', 'the MailDomain account, a seed of the PDA'),
      wallet: f('key', 'WALLET', 'the attested sender wallet, a seed of the PDA'),
      authority: f(
        'key',
        'AUTHORITY',
        'the domain authority that signed AttestSender; the record counts while it is current',
      ),
      rentPayer: f('key', 'RENT_PAYER', 'paid the rent; RevokeAttestation returns it here'),
      attestedAt: f('i64', 'ATTESTED_AT', 'chain time of AttestSender'),
      bump: f('u8', 'BUMP'),
    },
  },
  SenderReputation: {
    tag: 14,
    seed: 'reputation',
    c: { tag: 'TAG_REPUTATION', size: 'REPUTATION_SIZE', prefix: 'SR' },
    fields: {
      wallet: f('key', 'WALLET', "the direct sender, the PDA's seed"),
      cumulativeSpendLamports: f(
        'u64',
        'SPEND',
        'first-contact postage this wallet paid recipients on recorded sends (see below)',
      ),
      updatedAt: f('i64', 'UPDATED_AT', 'chain time of the last send that added to it'),
      bump: f('u8', 'BUMP'),
    },
  },
  PinLease: {
    tag: 15,
    seed: 'pinLease',
    c: { tag: 'TAG_PIN_LEASE', size: 'PIN_LEASE_SIZE', prefix: 'PL' },
    fields: {
      cidHash: f(
        'hash',
        'CID_HASH',
        '`blake3` of the leased CID\'s text (see "Pin leases"); the CID itself is never on chain',
      ),
      holder: f(
        'key',
        'HOLDER',
        'the wallet that paid; a seed of the PDA with `cid_hash`; the only one that may close it',
      ),
      operator: f('key', 'OPERATOR', "the pin operator's fee wallet the fee was paid to"),
      createdAt: f('i64', 'CREATED_AT', 'chain time of CreatePinLease'),
      expiresAt: f('i64', 'EXPIRES_AT', 'the lease is live while chain time < `expires_at`'),
      feeLamports: f('u64', 'FEE', 'lamports CreatePinLease moved from the holder to `operator`'),
      bump: f('u8', 'BUMP'),
    },
  },
  PendingMailboxClose: {
    tag: 16,
    seed: 'pendingClose',
    c: { tag: 'TAG_PENDING_CLOSE', size: 'PENDING_CLOSE_SIZE', prefix: 'PC' },
    fields: {
      wallet: f('key', 'WALLET', "the mailbox owner; the PDA's seed"),
      requestedAt: f(
        'i64',
        'REQUESTED_AT',
        "chain time of the request; the window ends at `requested_at` + the kind's window",
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  PendingDeactivation: {
    tag: 17,
    seed: 'pendingDeactivation',
    c: { tag: 'TAG_PENDING_DEACTIVATION', size: 'PENDING_DEACTIVATION_SIZE', prefix: 'PD' },
    fields: {
      domain: f('key', 'DOMAIN', "the MailDomain account; the PDA's seed"),
      requestedAt: f(
        'i64',
        'REQUESTED_AT',
        "chain time of the request; the window ends at `requested_at` + the kind's window",
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  PendingReclaim: {
    tag: 18,
    seed: 'pendingReclaim',
    c: { tag: 'TAG_PENDING_RECLAIM', size: 'PENDING_RECLAIM_SIZE', prefix: 'PR' },
    fields: {
      domain: f('key', 'DOMAIN', "the MailDomain account; the PDA's seed"),
      requestedAt: f('i64', 'REQUESTED_AT', 'chain time of RequestReclaim'),
      authority: f(
        'key',
        'AUTHORITY',
        'the new authority, written into the MailDomain when the reclaim settles',
      ),
      payer: f(
        'key',
        'PAYER',
        "the postoffice's delegate that requested it and paid the rent; gets the rent back",
      ),
      bump: f('u8', 'BUMP'),
    },
  },
  RecipientRule: {
    tag: 19,
    seed: 'recipientRule',
    c: { tag: 'TAG_RECIPIENT_RULE', size: 'RECIPIENT_RULE_SIZE', prefix: 'RR' },
    fields: {
      owner: f('key', 'OWNER', "the recipient wallet (its Mailbox's owner), the PDA's seed"),
      minReputationLamports: f(
        'u64',
        'MIN_REPUTATION',
        'a direct sender whose `cumulative_spend_lamports` reaches this is "reputable"; \u2265 1',
      ),
      postageLamports: f(
        'u64',
        'POSTAGE',
        'what a reputable sender pays the recipient per message instead of a stamp; 0 = waived',
      ),
      bump: f('u8', 'BUMP'),
    },
  },
} as const satisfies Record<string, AccountSpec>;

/** Instructions by tag (the first data byte); arguments are borsh, accounts in order. */
export const INSTRUCTIONS = {
  InitPostoffice: {
    tag: 0,
    args: {
      rootKsk: x('hash'),
      delegateAddress: x('key'),
      commitmentRoot: x('hash'),
      stampFeeLamports: x('u64'),
      settlementSurchargeLamports: x('u64'),
    },
    accounts: [
      a('admin', 'sw', 'pays rent, becomes admin'),
      a('postoffice', 'w'),
      a('systemProgram', ''),
      a('programData', '', "the program's ProgramData account"),
      a('upgradeAuthority', 's', "may be the admin's key"),
    ],
  },
  CreateMailbox: {
    tag: 1,
    args: {
      defaultPostage: x('u64'),
      domain: x('key'),
    },
    accounts: [
      a('payer', 'sw'),
      a('owner', 's'),
      a('mailbox', 'w'),
      a('systemProgram', ''),
      a('mailDomain', '', '', { when: 'when domain is set' }),
    ],
  },
  SetMailboxFlags: {
    tag: 2,
    args: {
      noIpfs: x({ option: 'bool' }),
      defaultPostage: x({ option: 'u64' }),
    },
    accounts: [a('owner', 's'), a('mailbox', 'w')],
  },
  PublishKey: {
    tag: 3,
    args: {
      pubKey: x('key'),
    },
    accounts: [a('owner', 'sw', 'pays rent'), a('mailbox', ''), a('mailboxKey', 'w'), a('systemProgram', '')],
  },
  RemoveKey: {
    tag: 4,
    args: {},
    accounts: [a('owner', 'sw', 'receives rent'), a('mailboxKey', 'w')],
  },
  CreateDomain: {
    tag: 5,
    args: {
      domain: x('string'),
      authority: x('key'),
    },
    accounts: [
      a('delegate', 'sw', 'pays rent'),
      a('postoffice', ''),
      a('mailDomain', 'w'),
      a('systemProgram', ''),
    ],
  },
  SendMail: {
    tag: 6,
    args: {
      fromHash: x('hash'),
      cid: x('string'),
      bountyLamports: x('u64'),
      expiresAt: x('i64'),
      replyToHash: x('hash'),
    },
    accounts: [
      a('sender', 'sw', 'pays rent and bounty'),
      a('mailbox', 'w', "the recipient's"),
      a('email', 'w'),
      a('frombox', 'w', 'its PDA even when none exists'),
      a('recipientWallet', 'w', "the recipient mailbox's owner"),
      a('postoffice', ''),
      a('systemProgram', ''),
      a('mailDomain', '', '', { when: 'relayed sends only' }),
      a('senderReputation', 'w', '', { when: 'direct sends only, optional' }),
      a('recipientRule', '', '', { when: 'after sender_reputation, optional' }),
    ],
  },
  DeleteMail: {
    tag: 7,
    args: {},
    accounts: [a('signer', 's'), a('email', 'w'), a('rentPayer', 'w')],
  },
  CreateAlias: {
    tag: 8,
    args: {
      name: x('string'),
    },
    accounts: [
      a('owner', 'sw', 'pays rent'),
      a('mailbox', '', "the owner's"),
      a('alias', 'w'),
      a('systemProgram', ''),
    ],
  },
  CreateFrombox: {
    tag: 9,
    args: {
      fromHash: x('hash'),
      requiredPostage: x('u64'),
    },
    accounts: [
      a('owner', 'sw', 'pays rent'),
      a('mailbox', '', "the owner's"),
      a('frombox', 'w'),
      a('systemProgram', ''),
    ],
  },
  UpdateFrombox: {
    tag: 10,
    args: {
      fromHash: x('hash'),
      requiredPostage: x('u64'),
    },
    accounts: [a('owner', 's'), a('mailbox', '', "the owner's"), a('frombox', 'w')],
  },
  AddStamps: {
    tag: 11,
    handler: 'purchase_stamps',
    args: {
      fromHash: x('hash'),
      stamps: x('u64'),
      maxPriceLamports: x({ option: 'u64' }),
    },
    accounts: [
      a('payer', 'sw'),
      a('mailbox', '', "the recipient's"),
      a('frombox', 'w'),
      a('postoffice', 'w'),
      a('systemProgram', ''),
    ],
  },
  BuyStamps: {
    tag: 12,
    handler: 'purchase_stamps',
    args: {
      stamps: x('u64'),
      maxPriceLamports: x({ option: 'u64' }),
    },
    accounts: [
      a('buyer', 'sw'),
      a('mailbox', '', "the recipient's"),
      a('frombox', 'w'),
      a('postoffice', 'w'),
      a('systemProgram', ''),
    ],
  },
  TopUpStamps: {
    tag: 13,
    handler: 'purchase_stamps',
    args: {
      stamps: x('u64'),
      maxPriceLamports: x({ option: 'u64' }),
    },
    accounts: [
      a('buyer', 'sw'),
      a('mailbox', '', "the recipient's"),
      a('frombox', 'w'),
      a('postoffice', 'w'),
      a('systemProgram', ''),
    ],
  },
  ReclaimFromboxStamps: {
    tag: 14,
    args: {},
    accounts: [
      a('sender', 'sw', 'the sender wallet'),
      a('mailbox', '', "the recipient's"),
      a('frombox', 'w'),
    ],
  },
  ClaimBounty: {
    tag: 15,
    args: {},
    accounts: [a('recipient', 'sw'), a('email', 'w')],
  },
  CreatePinLease: {
    tag: 16,
    args: {
      cidHash: x('hash'),
      expiresAt: x('i64'),
      feeLamports: x('u64'),
    },
    accounts: [
      a('holder', 'sw', 'pays rent and fee'),
      a('operator', 'w', 'receives the fee'),
      a('pinLease', 'w'),
      a('systemProgram', ''),
    ],
  },
  ClosePinLease: {
    tag: 17,
    args: {},
    accounts: [a('holder', 'sw', 'receives rent'), a('pinLease', 'w')],
  },
  PublishBeacon: {
    tag: 18,
    args: {
      tags: x('u64'),
      detailCid: x('string'),
    },
    accounts: [a('owner', 'sw', 'pays rent'), a('beacon', 'w'), a('systemProgram', '')],
  },
  CloseBeacon: {
    tag: 19,
    args: {},
    accounts: [a('owner', 'sw', 'receives rent'), a('beacon', 'w')],
  },
  RequestMailboxClose: {
    tag: 20,
    args: {},
    accounts: [
      a('owner', 'sw', 'pays rent'),
      a('mailbox', '', "the owner's"),
      a('pendingClose', 'w'),
      a('systemProgram', ''),
    ],
  },
  CancelMailboxClose: {
    tag: 21,
    args: {},
    accounts: [a('owner', 'sw', 'receives rent'), a('pendingClose', 'w')],
  },
  CloseMailbox: {
    tag: 22,
    args: {},
    accounts: [
      a('owner', 'sw', 'receives both rents'),
      a('mailbox', 'w', "the owner's"),
      a('pendingClose', 'w'),
    ],
  },
  RequestDeactivation: {
    tag: 23,
    args: {},
    accounts: [
      a('authority', 'sw', 'pays rent'),
      a('mailDomain', ''),
      a('pendingDeactivation', 'w'),
      a('systemProgram', ''),
    ],
  },
  CancelDeactivation: {
    tag: 24,
    args: {},
    accounts: [a('authority', 'sw', 'receives rent'), a('mailDomain', ''), a('pendingDeactivation', 'w')],
  },
  RequestReclaim: {
    tag: 25,
    args: {},
    accounts: [
      a('delegate', 'sw', 'pays rent'),
      a('newAuthority', 's'),
      a('postoffice', ''),
      a('mailDomain', ''),
      a('pendingReclaim', 'w'),
      a('systemProgram', ''),
    ],
  },
  CancelReclaim: {
    tag: 26,
    args: {},
    accounts: [
      a('signer', 's', "the domain's authority or the reclaim's payer"),
      a('mailDomain', ''),
      a('pendingReclaim', 'w'),
      a('payer', 'w', 'receives rent'),
    ],
  },
  SettleDomainTimelock: {
    tag: 27,
    args: {},
    accounts: [
      a('mailDomain', 'w'),
      a('pending', 'w', 'the PendingDeactivation or PendingReclaim'),
      a('rentTo', 'w', 'no signer but the fee payer'),
    ],
  },
  AttestSender: {
    tag: 28,
    args: {
      wallet: x('key'),
    },
    accounts: [
      a('authority', 's'),
      a('payer', 'sw', 'pays rent'),
      a('mailDomain', ''),
      a('attestation', 'w'),
      a('systemProgram', ''),
    ],
  },
  RevokeAttestation: {
    tag: 29,
    args: {},
    accounts: [
      a('signer', 's', "the domain's authority or the attested wallet"),
      a('attestation', 'w'),
      a('rentPayer', 'w'),
      a('mailDomain', ''),
    ],
  },
  SetRecipientRule: {
    tag: 30,
    args: {
      minReputationLamports: x('u64'),
      postageLamports: x('u64'),
    },
    accounts: [
      a('owner', 'sw', 'pays rent'),
      a('mailbox', '', "the owner's"),
      a('recipientRule', 'w'),
      a('systemProgram', ''),
    ],
  },
  CloseRecipientRule: {
    tag: 31,
    args: {},
    accounts: [a('owner', 'sw', 'receives rent'), a('recipientRule', 'w')],
  },
  SetMailboxDomain: {
    tag: 32,
    args: {
      domain: x('key', 'zero key = no domain'),
    },
    accounts: [a('owner', 's'), a('mailbox', 'w'), a('mailDomain', '', '', { when: 'when domain is set' })],
  },
  ListAlias: {
    tag: 34,
    args: {
      mode: { type: 'u8', doc: '0/1', max: 1 },
      priceLamports: x('u64'),
      expiresAt: x('i64'),
      antisnipeWindowSecs: x('i64'),
    },
    accounts: [
      a('holder', 'sw', 'pays rent'),
      a('alias', 'w'),
      a('aliasListing', 'w'),
      a('systemProgram', ''),
    ],
  },
  BidAlias: {
    tag: 35,
    args: {
      amountLamports: x('u64'),
    },
    accounts: [
      a('bidder', 'sw', 'pays bid and rent'),
      a('aliasListing', 'w'),
      a('aliasBid', 'w'),
      a('systemProgram', ''),
      a('previousBid', 'w', 'the AliasBid of the wallet holding the high bid', {
        when: 'when another wallet holds the high bid',
      }),
      a('previousBidder', 'w', 'receives its bid and rent back', {
        when: 'when another wallet holds the high bid',
      }),
    ],
  },
  BuyAlias: {
    tag: 36,
    args: {},
    accounts: [
      a('buyer', 'sw', 'pays the price'),
      a('aliasListing', 'w'),
      a('alias', 'w'),
      a('holder', 'w'),
      a('systemProgram', ''),
    ],
  },
  SettleAuction: {
    tag: 37,
    args: {},
    accounts: [
      a('aliasListing', 'w'),
      a('alias', 'w'),
      a('holder', 'w'),
      a('aliasBid', 'w', 'the winning bid', { when: 'when someone bid' }),
      a('bidder', 'w', "receives the bid account's rent", { when: 'when someone bid' }),
    ],
  },
  CancelListing: {
    tag: 38,
    args: {},
    accounts: [a('holder', 'sw', 'receives rent'), a('aliasListing', 'w'), a('alias', 'w')],
  },
  OfferAlias: {
    tag: 39,
    args: {
      recipient: x('key'),
      feeLamports: x('u64'),
      expiresAt: x('i64'),
    },
    accounts: [
      a('holder', 'sw', 'pays rent'),
      a('alias', 'w'),
      a('aliasEscrow', 'w'),
      a('systemProgram', ''),
    ],
  },
  AcceptAlias: {
    tag: 40,
    args: {},
    accounts: [
      a('recipient', 'sw', 'pays the fee'),
      a('aliasEscrow', 'w'),
      a('alias', 'w'),
      a('holder', 'w'),
      a('systemProgram', ''),
    ],
  },
  ReclaimAlias: {
    tag: 41,
    args: {},
    accounts: [
      a('signer', 's', 'the holder, or anyone after expiry'),
      a('aliasEscrow', 'w'),
      a('alias', 'w'),
      a('holder', 'w'),
    ],
  },
  ListDomain: {
    tag: 42,
    args: {
      priceLamports: x('u64'),
      expiresAt: x('i64'),
      buyer: x('key'),
    },
    accounts: [
      a('holder', 'sw', "the domain's authority; pays rent"),
      a('mailDomain', 'w'),
      a('domainListing', 'w'),
      a('pendingDeactivation', ''),
      a('pendingReclaim', ''),
      a('systemProgram', ''),
    ],
  },
  BuyDomain: {
    tag: 43,
    args: {},
    accounts: [
      a('buyer', 'sw', 'pays the price'),
      a('mailDomain', 'w'),
      a('domainListing', 'w'),
      a('holder', 'w'),
      a('pendingReclaim', ''),
      a('systemProgram', ''),
    ],
  },
  CancelDomainListing: {
    tag: 44,
    args: {},
    accounts: [
      a('signer', 's', 'the holder, or anyone after expiry'),
      a('mailDomain', 'w'),
      a('domainListing', 'w'),
      a('holder', 'w'),
    ],
  },
  UpdatePostoffice: {
    tag: 50,
    args: {
      stampFeeLamports: x({ option: 'u64' }),
      settlementSurchargeLamports: x({ option: 'u64' }),
      delegateAddress: x({ option: 'key' }),
      rootKsk: x({ option: 'hash' }),
    },
    accounts: [a('admin', 's'), a('postoffice', 'w')],
  },
  WithdrawFees: {
    tag: 51,
    args: {
      amountLamports: x('u64'),
    },
    accounts: [a('admin', 's'), a('postoffice', 'w'), a('to', 'w', 'receives the lamports')],
  },
  ProposeAdmin: {
    tag: 52,
    args: {
      newAdmin: x('key', 'zero key withdraws the proposal'),
    },
    accounts: [a('admin', 's'), a('postoffice', 'w')],
  },
  AcceptAdmin: {
    tag: 53,
    args: {},
    accounts: [a('newAdmin', 's', 'the proposed key'), a('postoffice', 'w')],
  },
} as const satisfies Record<string, InstructionSpec>;

/** Custom program error codes. */
export const ERRORS = {
  InvalidInstruction: e(
    0,
    'E_INVALID_INSTRUCTION',
    'unknown tag, undecodable or trailing data, wrong account count',
  ),
  MissingSigner: e(1, 'E_MISSING_SIGNER'),
  InvalidPda: e(2, 'E_INVALID_PDA'),
  InvalidAccount: e(3, 'E_INVALID_ACCOUNT', 'wrong owner, wrong kind tag, wrong size'),
  AlreadyExists: e(4, 'E_ALREADY_EXISTS'),
  NotFound: e(5, 'E_NOT_FOUND'),
  Unauthorized: e(6, 'E_UNAUTHORIZED'),
  InvalidArgument: e(7, 'E_INVALID_ARGUMENT'),
  PostageRequired: e(8, 'E_POSTAGE_REQUIRED'),
  BountyExpired: e(9, 'E_BOUNTY_EXPIRED'),
  BountyNotAllowed: e(10, 'E_BOUNTY_NOT_ALLOWED'),
  FromHashMismatch: e(11, 'E_FROM_HASH_MISMATCH'),
  PriceAboveCeiling: e(12, 'E_PRICE_ABOVE_CEILING'),
  NothingToClaim: e(13, 'E_NOTHING_TO_CLAIM'),
  NoIpfs: e(14, 'E_NO_IPFS'),
  InsufficientFunds: e(15, 'E_INSUFFICIENT_FUNDS'),
  NotWritable: e(16, 'E_NOT_WRITABLE'),
  DomainInactive: e(17, 'E_DOMAIN_INACTIVE'),
  LeaseUnpaid: e(18, 'E_LEASE_UNPAID', 'a lease with no fee, or paid by the holder to themselves'),
  LeaseExpired: e(19, 'E_LEASE_EXPIRED', 'a lease whose `expires_at` is not after the chain time'),
  TimelockNotElapsed: e(20, 'E_TIMELOCK_NOT_ELAPSED', 'completing a pending record before its window ends'),
  NotDomainAuthority: e(
    30,
    'E_NOT_DOMAIN_AUTHORITY',
    "AttestSender signed by anyone but the domain's authority: a forged attestation",
  ),
  AliasLocked: e(40, 'E_ALIAS_LOCKED', "the alias is in a listing's or escrow's custody"),
  BidTooLow: e(41, 'E_BID_TOO_LOW', 'below the reserve, or below the high bid plus the minimum raise'),
  AuctionEnded: e(42, 'E_AUCTION_ENDED', "a bid at or after the auction's end"),
  AuctionNotEnded: e(43, 'E_AUCTION_NOT_ENDED', 'settling before the end'),
  OwnListing: e(44, 'E_OWN_LISTING', 'the holder buying or bidding on its own listing'),
  ListingHasBids: e(45, 'E_LISTING_HAS_BIDS', 'cancelling a listing someone bid on'),
  WrongListingMode: e(46, 'E_WRONG_LISTING_MODE', 'buying an auction; bidding on or settling a fixed price'),
  EscrowExpired: e(
    47,
    'E_ESCROW_EXPIRED',
    'accepting an offer at or after its expiry; an offer born expired',
  ),
  EscrowNotExpired: e(48, 'E_ESCROW_NOT_EXPIRED', 'someone other than the holder reclaiming before expiry'),
  DomainLocked: e(
    49,
    'E_DOMAIN_LOCKED',
    "the domain is in its listing's custody: listing it again, settling a reclaim",
  ),
  ListingExpired: e(
    50,
    'E_LISTING_EXPIRED',
    'buying a domain listing at or after its expiry; a listing born expired',
  ),
  ListingNotExpired: e(
    51,
    'E_LISTING_NOT_EXPIRED',
    'someone other than the holder cancelling a domain listing before expiry',
  ),
  DomainPending: e(
    52,
    'E_DOMAIN_PENDING',
    'listing a domain with a pending deactivation or reclaim; buying one with a pending reclaim',
  ),
  NotUpgradeAuthority: e(
    60,
    'E_NOT_UPGRADE_AUTHORITY',
    "InitPostoffice not co-signed by the upgrade authority in the program's ProgramData, or the program is immutable",
  ),
  RelayNotAllowed: e(
    61,
    'E_RELAY_NOT_ALLOWED',
    'a relayed SendMail into a mailbox whose `domain` is not the signing MailDomain: another domain, or none',
  ),
  StampsNotRelayable: e(
    62,
    'E_STAMPS_NOT_RELAYABLE',
    'a relayed SendMail that would spend a stamp from a frombox whose `wallet_stamps` is 1',
  ),
  BountyLocked: e(
    63,
    'E_BOUNTY_LOCKED',
    "DeleteMail by the email's sender while its bounty is still claimable: `bounty_lamports` > 0 and chain time < `expires_at`",
  ),
} as const satisfies Record<string, ErrorSpec>;

/** Limits and windows the program enforces (seconds, bytes, lamports). */
export const CONSTANTS = {
  cidMax: { value: 128, c: 'CID_MAX', doc: 'Longest Email `cid` in bytes' },
  domainMax: { value: 253, c: 'DOMAIN_MAX', doc: 'Longest MailDomain name in bytes' },
  aliasMax: { value: 64, c: 'ALIAS_MAX', doc: 'Longest alias in bytes' },
  beaconCidMax: {
    value: BEACON_CID_MAX,
    c: 'BEACON_CID_MAX',
    doc: "Capacity of ParticipantBeacon's `detail_cid`",
  },
  mailboxCloseWindow: {
    value: 604800,
    c: 'MAILBOX_CLOSE_WINDOW',
    wide: true,
    doc: 'RequestMailboxClose to CloseMailbox (7 days)',
  },
  deactivationWindow: {
    value: 2592000,
    c: 'DEACTIVATION_WINDOW',
    wide: true,
    doc: 'RequestDeactivation to its settlement (30 days)',
  },
  reclaimWindow: {
    value: 1209600,
    c: 'RECLAIM_WINDOW',
    wide: true,
    doc: 'RequestReclaim to its settlement (14 days)',
  },
  domainListingMax: {
    value: 604800,
    c: 'DOMAIN_LISTING_MAX',
    wide: true,
    doc: "Longest a domain may stay in a listing's custody (7 days; its relayed mail is refused meanwhile)",
  },
  minBidIncrement: {
    value: 1000000,
    c: 'MIN_BID_INCREMENT',
    wide: true,
    doc: 'A raised bid beats the high bid by at least max(high / 20, this many lamports)',
  },
  bidIncrementDivisor: { value: 20, c: 'BID_INCREMENT_DIVISOR', doc: 'See minBidIncrement' },
  antisnipeMax: { value: 86400, c: 'ANTISNIPE_MAX', doc: 'Longest anti-snipe window of an auction (1 day)' },
  auctionMax: {
    value: 2592000,
    c: 'AUCTION_MAX',
    doc: 'An auction ends at most this long after it is listed (30 days); anti-snipe moves it at most one window further',
  },
} as const satisfies Record<string, ConstantSpec>;

/**
 * Instruction tag blocks (docs/protocol.md "Instructions"): a tag outside
 * every named instruction is InvalidInstruction.
 */
export const TAG_BLOCKS = [
  { from: 0, to: 19, what: 'the mailbox, mail and stamp core' },
  { from: 20, to: 27, what: 'the timelocks' },
  { from: 28, to: 31, what: 'attestations and recipient rules' },
  { from: 32, to: 32, what: 'SetMailboxDomain' },
  { from: 34, to: 49, what: 'the marketplace (aliases 34–41, domains 42–44; 45–49 reserved for it)' },
  { from: 50, to: 53, what: "the postoffice's admin" },
] as const;

/** Error code blocks (docs/protocol.md "Error codes"). */
export const ERROR_BLOCKS = [
  { from: 0, to: 19, what: "the core's" },
  { from: 20, to: 29, what: 'the timelocks' },
  { from: 30, to: 39, what: 'sender attestations and reputation' },
  { from: 40, to: 59, what: 'the marketplace (aliases 40–48, domains 49–52)' },
  {
    from: 60,
    to: 69,
    what: "who may move whose money: the postoffice's set-up and the rules on relayed sends, wallet stamps and bounties",
  },
] as const;

export type AccountKind = keyof typeof ACCOUNTS;
export type InstructionKind = keyof typeof INSTRUCTIONS;
export type ErrorName = keyof typeof ERRORS;
