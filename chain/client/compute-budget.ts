// Compute-unit limits and priority fees for every transaction Sealpost
// builds (issue 30 part 2). A transaction that asks for the default 200,000
// CU per instruction while it uses ~12,000 is among the first a congested
// leader drops; one that pays no priority fee may never land. So each
// transaction carries SetComputeUnitLimit (sized from the measured use of
// its instructions, with a margin) and SetComputeUnitPrice (a fixed price,
// or `auto` from getRecentPrioritizationFees over its writable accounts,
// capped per transaction and raised on each re-sign: raiseForRound, per
// signing round of the same message, never for a rebroadcast of the same bytes).
// Browser-safe: web3.js and plain TypeScript only.
import {
  ComputeBudgetProgram,
  type Connection,
  type PublicKey,
  SystemProgram,
  type TransactionInstruction,
} from '@solana/web3.js';
import { decodeInstruction, type InstructionKind } from './instruction-data.ts';

/** Solana's hard ceiling on one transaction's compute units. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** What the runtime grants an instruction when no limit is set (and our figure for an unknown program). */
export const DEFAULT_INSTRUCTION_CU = 200_000;

/**
 * Wire bytes the two budget instructions add to a legacy transaction: the
 * ComputeBudget program's key (32), SetComputeUnitLimit (program index,
 * account count, data length, 5 data bytes = 8) and SetComputeUnitPrice
 * (1 + 1 + 1 + 9 = 12). Batches and chunks are sized with this reserved.
 */
export const COMPUTE_BUDGET_TX_BYTES = 32 + 8 + 12;

/**
 * Maximum compute units of every mail-program instruction and variant, as
 * measured by chain/program/host/compute-units.ts `measureComputeUnits` on the
 * committed binary (`npm run bench:program` prints the same rows): the
 * larger of the runs: 3 and runs: 12 maxima. Keys are the measurement's row
 * names. test/chain/compute-budget.test.ts re-measures and fails when a row is
 * missing here or measures above its figure, so this cannot go stale silently:
 * after a program change, re-run the bench and update the figures.
 */
export const MEASURED_COMPUTE_UNITS: Readonly<Record<string, number>> = {
  InitPostoffice: 3_124,
  'CreateDomain (9 bytes)': 7_999,
  'CreateDomain (253 bytes)': 25_139,
  'CreateMailbox (no domain)': 2_852,
  'CreateMailbox (in a domain)': 3_986,
  'CreateMailbox (address already funded)': 6_225,
  SetMailboxFlags: 845,
  'PublishKey (create)': 2_970,
  'PublishKey (replace)': 1_412,
  RemoveKey: 1_034,
  'CreateAlias (3 bytes)': 8_409,
  'CreateAlias (64 bytes)': 8_287,
  CreateFrombox: 2_983,
  UpdateFrombox: 1_381,
  'BuyStamps (creates the frombox)': 10_816,
  TopUpStamps: 9_406,
  AddStamps: 9_398,
  'AddStamps (with a ceiling)': 9_405,
  "AddStamps (on the payer's own hash)": 9_413,
  'SetMailboxDomain (into a domain)': 1_295,
  'SetMailboxDomain (out of every domain)': 835,
  'UpdatePostoffice (every field)': 980,
  WithdrawFees: 904,
  'SendMail (direct, open mailbox)': 12_561,
  'SendMail (direct, allowlisted sender)': 11_883,
  'SendMail (direct, stamp spent)': 11_004,
  'SendMail (relayed, open mailbox)': 7_855,
  'SendMail (relayed, stamp spent)': 6_987,
  'SendMail (direct, with bounty)': 11_534,
  'SendMail (direct, bounty and reply)': 11_534,
  'SendMail (direct, 128-byte cid)': 12_985,
  ClaimBounty: 985,
  DeleteMail: 1_049,
  'DeleteMail (with an unclaimed bounty)': 1_049,
  ReclaimFromboxStamps: 6_250,
  CreatePinLease: 4_836,
  ClosePinLease: 1_045,
  'PublishBeacon (create)': 5_689,
  'PublishBeacon (update, 96-byte cid)': 4_026,
  CloseBeacon: 1_049,
  'ListAlias (fixed price)': 4_953,
  BuyAlias: 2_848,
  'ListAlias (auction)': 3_598,
  'BidAlias (first bid)': 5_340,
  'BidAlias (outbid, refund)': 4_713,
  'BidAlias (raise own bid)': 2_854,
  CancelListing: 1_523,
  OfferAlias: 4_110,
  AcceptAlias: 3_020,
  ReclaimAlias: 1_538,
  SettleAuction: 2_499,
  'ListDomain (anyone)': 6_329,
  BuyDomain: 4_087,
  'CancelDomainListing (by the holder)': 1_552,
  'ListDomain (named buyer)': 5_990,
  'CancelDomainListing (expired, by anyone)': 1_704,
  RequestMailboxClose: 4_797,
  CancelMailboxClose: 1_073,
  RequestDeactivation: 4_765,
  CancelDeactivation: 1_511,
  RequestReclaim: 4_584,
  CancelReclaim: 1_534,
  CloseMailbox: 1_903,
  'SettleDomainTimelock (reclaim)': 4_827,
  'SettleDomainTimelock (deactivation)': 1_725,
  AttestSender: 4_567,
  RevokeAttestation: 1_573,
  'SetRecipientRule (create)': 2_662,
  'SetRecipientRule (replace)': 1_443,
  'SendMail (direct, stamp, new reputation)': 13_772,
  'SendMail (direct, stamp, reputation)': 11_825,
  'SendMail (direct, recipient rule)': 13_076,
  CloseRecipientRule: 1_084,
  'DeleteMail (by the sender, bounty expired)': 1_200,
  ProposeAdmin: 850,
  AcceptAdmin: 1_002,
};

/**
 * The margin on a measured figure: ×1.2, then +2,500. The runs' maxima differ
 * by address through the PDA bump searches (up to ~2,100 CU between runs: 3
 * and 12; each further bump tried costs about 340 CU), so an unlucky address
 * gets about seven bumps beyond the worst one measured.
 */
export function withMargin(measured: number): number {
  return Math.ceil(measured * 1.2) + 2_500;
}

/**
 * InitPostoffice searches the canonical bumps of two addresses that depend on
 * the program id (its ProgramData and its Postoffice): the figure measured for
 * the default id says nothing about another deployer's. It runs once per
 * deployment, so it gets room for some forty bumps instead.
 */
const INIT_POSTOFFICE_CU = 16_000;

// Fixed figures for the other programs a Sealpost transaction names. The
// builtins consume a fixed amount (Agave's DEFAULT_COMPUTE_UNITS: 150 for
// System and ComputeBudget, 2,370 for the upgradeable loader) plus, for the
// loader's deploy and upgrade, the System CPIs and account work they do.
const SYSTEM_CU = 150;
const COMPUTE_BUDGET_CU = 150;
/** SPL Memo (v1 and v2): UTF-8 validation and a log line; generous for any memo that fits a packet. */
const MEMO_CU = 30_000;
const LOADER_WRITE_CU = 2_370;
/**
 * DeployWithMaxDataLen / Upgrade / ExtendProgram: measured 2,370-2,670 CU in
 * litesvm for the mail program (the loader and its System CPI);
 * test/chain/compute-budget.test.ts checks Write, deploy and upgrade against these.
 */
const LOADER_DEPLOY_CU = 10_000;
const LOADER_OTHER_CU = 10_000;

const COMPUTE_BUDGET_ID = ComputeBudgetProgram.programId.toBase58();
const SYSTEM_ID = SystemProgram.programId.toBase58();
const LOADER_V3_ID = 'BPFLoaderUpgradeab1e11111111111111111111111';
const MEMO_IDS = new Set([
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
]);

/** Row names are `Kind` or `Kind (variant)`. */
const kindOf = (row: string): string => row.replace(/ \(.*\)$/, '');

function maxOf(pred: (row: string) => boolean): number {
  let max = 0;
  for (const [row, cu] of Object.entries(MEASURED_COMPUTE_UNITS)) if (pred(row) && cu > max) max = cu;
  return max;
}

/** Per kind: the largest measured figure of any of its variants. */
const KIND_MAX = new Map<string, number>();
for (const [row, cu] of Object.entries(MEASURED_COMPUTE_UNITS)) {
  const kind = kindOf(row);
  KIND_MAX.set(kind, Math.max(KIND_MAX.get(kind) ?? 0, cu));
}
const SEND_RELAYED = maxOf((r) => r.startsWith('SendMail (relayed'));
const SEND_REPUTATION = maxOf((r) => /^SendMail \(direct, (stamp, .*reputation|recipient rule)\)$/.test(r));
const SEND_DIRECT = maxOf(
  (r) => r.startsWith('SendMail (direct') && !r.includes('reputation') && !r.includes('rule'),
);
const DOMAIN_SHORT = MEASURED_COMPUTE_UNITS['CreateDomain (9 bytes)'] ?? DEFAULT_INSTRUCTION_CU;
const DOMAIN_LONG = MEASURED_COMPUTE_UNITS['CreateDomain (253 bytes)'] ?? DEFAULT_INSTRUCTION_CU;

/**
 * The measured figure (before the margin) for one mail-program instruction:
 * per kind the largest variant, except SendMail (relayed / direct / with a
 * reputation account) and CreateDomain (linear in the name's length between
 * the 9- and 253-byte measurements). Undefined for data that does not decode.
 */
export function measuredUnitsOf(ix: TransactionInstruction): number | undefined {
  let decoded: ReturnType<typeof decodeInstruction>;
  try {
    decoded = decodeInstruction(ix.data);
  } catch {
    return undefined;
  }
  const kind: InstructionKind = decoded.kind;
  if (decoded.kind === 'InitPostoffice')
    return Math.max(INIT_POSTOFFICE_CU, MEASURED_COMPUTE_UNITS.InitPostoffice ?? 0);
  if (decoded.kind === 'SendMail') {
    // Direct sends have 7 accounts; an 8th read-only one is the relaying
    // domain, a writable one the sender's reputation (then maybe a rule).
    const eighth = ix.keys[7];
    if (eighth === undefined) return SEND_DIRECT;
    return eighth.isWritable ? SEND_REPUTATION : SEND_RELAYED;
  }
  if (decoded.kind === 'CreateDomain') {
    const len = new TextEncoder().encode(decoded.domain).length;
    if (len <= 9) return DOMAIN_SHORT;
    return Math.ceil(DOMAIN_SHORT + ((DOMAIN_LONG - DOMAIN_SHORT) * (len - 9)) / (253 - 9));
  }
  return KIND_MAX.get(kind);
}

function unitsOf(ix: TransactionInstruction): number {
  const program = ix.programId.toBase58();
  if (program === COMPUTE_BUDGET_ID) return COMPUTE_BUDGET_CU;
  if (program === SYSTEM_ID) return SYSTEM_CU;
  if (MEMO_IDS.has(program)) return MEMO_CU;
  if (program === LOADER_V3_ID) {
    const tag = ix.data[0] ?? 0;
    // Loader v3 tags are u32 LE: 1 Write, 2 DeployWithMaxDataLen, 3 Upgrade, 6 ExtendProgram.
    if (tag === 1) return withMargin(LOADER_WRITE_CU);
    if (tag === 2 || tag === 3 || tag === 6) return LOADER_DEPLOY_CU;
    return LOADER_OTHER_CU;
  }
  const measured = measuredUnitsOf(ix);
  return measured === undefined ? DEFAULT_INSTRUCTION_CU : withMargin(measured);
}

/**
 * The compute-unit limit for a transaction of `ixs`: the sum of each mail
 * instruction's measured figure with the margin, fixed figures for System,
 * Memo, ComputeBudget and the loader, 200,000 for anything else; capped at
 * 1,400,000. Does not count budget instructions not in `ixs`.
 */
export function computeUnitLimit(ixs: TransactionInstruction[]): number {
  let sum = 0;
  for (const ix of ixs) sum += unitsOf(ix);
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.max(1, sum));
}

/** SetComputeUnitLimit and, when the price is above 0, SetComputeUnitPrice (µlamports per CU). */
export function computeBudgetInstructions(p: {
  unitLimit: number;
  microLamportsPerCu: bigint;
}): TransactionInstruction[] {
  const units = Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.max(0, Math.ceil(p.unitLimit)));
  const out = [ComputeBudgetProgram.setComputeUnitLimit({ units })];
  if (p.microLamportsPerCu > 0n) {
    out.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: p.microLamportsPerCu }));
  }
  return out;
}

/** `ixs` preceded by their budget instructions (the limit sized from `ixs` plus the budget instructions). */
export function withComputeBudget(
  ixs: TransactionInstruction[],
  microLamportsPerCu: bigint,
): TransactionInstruction[] {
  const unitLimit = budgetedUnitLimit(ixs, microLamportsPerCu);
  return [...computeBudgetInstructions({ unitLimit, microLamportsPerCu }), ...ixs];
}

/** The limit for `ixs` plus the budget instructions themselves. */
export function budgetedUnitLimit(ixs: TransactionInstruction[], microLamportsPerCu: bigint): number {
  const budgetIxs = microLamportsPerCu > 0n ? 2 : 1;
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, computeUnitLimit(ixs) + budgetIxs * COMPUTE_BUDGET_CU);
}

/** The priority fee one transaction pays: ceil(limit × price / 1,000,000) lamports. */
export function priorityFeeLamports(unitLimit: number, microLamportsPerCu: bigint): bigint {
  if (unitLimit <= 0 || microLamportsPerCu <= 0n) return 0n;
  return (BigInt(Math.ceil(unitLimit)) * microLamportsPerCu + 999_999n) / 1_000_000n;
}

/** The highest price (µlamports/CU) whose fee at `unitLimit` stays ≤ `maxLamports`. */
export function maxPriceFor(unitLimit: number, maxLamports: bigint): bigint {
  if (maxLamports <= 0n) return 0n;
  if (unitLimit <= 0) return BigInt(Number.MAX_SAFE_INTEGER);
  return (maxLamports * 1_000_000n) / BigInt(Math.ceil(unitLimit));
}

export interface PriorityFeePolicy {
  /** `fixed`: always `microLamports`; `auto`: a percentile of recent fees, at least `microLamports` (default 1). */
  mode: 'fixed' | 'auto';
  /** µlamports per CU: the price (fixed) or the floor (auto). */
  microLamports?: bigint;
  /** auto: the percentile of recent prioritization fees, 1..100 (default 75). */
  percentile?: number;
  /** The cap on one transaction's priority fee, in lamports. */
  maxLamports: bigint;
  /** Told when the price wanted (after the round's raise) was cut to the cap: the market is above what the cap pays. */
  onCapped?: (wanted: bigint, cap: bigint, unitLimit: number) => void;
}

export const DEFAULT_PRIORITY_FEE_PERCENTILE = 75;
/** Default per-transaction cap: 100,000 lamports (0.0001 SOL). */
export const DEFAULT_MAX_PRIORITY_FEE_LAMPORTS = 100_000n;
/** getRecentPrioritizationFees takes at most 128 accounts. */
export const MAX_PRIORITIZATION_FEE_KEYS = 128;
/** Each signing round (a re-sign after a proven expiry) multiplies the price by 3/2. */
const ROUND_NUM = 3n;
const ROUND_DEN = 2n;
/** A getRecentPrioritizationFees that takes longer than this falls back. */
const FEE_LOOKUP_TIMEOUT_MS = 5_000;

/** The last auto price each connection saw (the fallback when a lookup fails). */
const lastKnown = new WeakMap<Connection, bigint>();

/** Nearest-rank percentile of `values` (1..100); 0n for none. */
export function percentileOf(values: bigint[], percentile: number): bigint {
  if (values.length === 0) return 0n;
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const p = Math.min(100, Math.max(1, percentile));
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? 0n;
}

/** `price` raised for signing round `round` (0 = the first signing): ×1.5 per re-sign, rounded up. */
export function raiseForRound(price: bigint, round: number): bigint {
  const r = Math.max(0, Math.floor(round));
  if (r === 0 || price <= 0n) return price;
  const num = ROUND_NUM ** BigInt(r);
  const den = ROUND_DEN ** BigInt(r);
  return (price * num + den - 1n) / den;
}

function dedupe(keys: PublicKey[]): PublicKey[] {
  const seen = new Set<string>();
  const out: PublicKey[] = [];
  for (const k of keys) {
    const s = k.toBase58();
    if (seen.has(s)) continue;
    seen.add(s);
    out.push(k);
    if (out.length === MAX_PRIORITIZATION_FEE_KEYS) break;
  }
  return out;
}

async function recentFees(conn: Connection, keys: PublicKey[]): Promise<bigint[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error('getRecentPrioritizationFees timed out')),
      FEE_LOOKUP_TIMEOUT_MS,
    );
  });
  try {
    const rows = await Promise.race([
      conn.getRecentPrioritizationFees({ lockedWritableAccounts: keys }),
      timeout,
    ]);
    if (!Array.isArray(rows)) throw new Error('getRecentPrioritizationFees: not an array');
    return rows.map((r) => {
      const fee = (r as { prioritizationFee?: unknown }).prioritizationFee;
      if (typeof fee !== 'number' || !Number.isFinite(fee) || fee < 0)
        throw new Error('bad prioritizationFee');
      return BigInt(Math.floor(fee));
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The price (µlamports per CU) for a transaction of `unitLimit` CU writing
 * `writableKeys`, on signing round `round` (0 = the first signing): fixed →
 * the configured price; auto → the percentile of getRecentPrioritizationFees
 * over the writable keys (at most 128), at least the floor (`microLamports`,
 * default 1). Raised ×1.5 per round, then capped so the transaction's
 * priority fee stays ≤ `maxLamports`. A failing lookup falls back to the
 * last price this connection saw, or the floor; never throws.
 */
export async function resolvePriorityFee(
  conn: Connection,
  policy: PriorityFeePolicy,
  writableKeys: PublicKey[],
  round: number,
  unitLimit: number,
): Promise<bigint> {
  let price: bigint;
  if (policy.mode === 'fixed') {
    price = policy.microLamports ?? 0n;
  } else {
    const floor = policy.microLamports !== undefined && policy.microLamports > 0n ? policy.microLamports : 1n;
    let observed: bigint;
    try {
      observed = percentileOf(
        await recentFees(conn, dedupe(writableKeys)),
        policy.percentile ?? DEFAULT_PRIORITY_FEE_PERCENTILE,
      );
      lastKnown.set(conn, observed);
    } catch {
      observed = lastKnown.get(conn) ?? floor;
    }
    price = observed > floor ? observed : floor;
  }
  price = raiseForRound(price, round);
  const cap = maxPriceFor(unitLimit, policy.maxLamports);
  if (price <= cap) return price;
  policy.onCapped?.(price, cap, unitLimit);
  return cap;
}

/** The largest fixed price accepted: 10^12 µlamports/CU (1,000 lamports per CU). */
export const MAX_FIXED_PRIORITY_FEE = 1_000_000_000_000n;

/**
 * Parses a priority-fee setting: `auto`, or a non-negative integer of
 * µlamports per CU (at most 10^12). Undefined when it is neither.
 */
export function parsePriorityFee(
  text: string,
): { mode: 'auto' } | { mode: 'fixed'; microLamports: bigint } | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'auto') return { mode: 'auto' };
  if (!/^\d{1,13}$/.test(t)) return undefined;
  const v = BigInt(t);
  if (v > MAX_FIXED_PRIORITY_FEE) return undefined;
  return { mode: 'fixed', microLamports: v };
}

/** The writable accounts of `ixs` (the keys getRecentPrioritizationFees is asked about), fee payer first. */
export function writableKeysOf(ixs: TransactionInstruction[], feePayer?: PublicKey): PublicKey[] {
  const keys: PublicKey[] = feePayer ? [feePayer] : [];
  for (const ix of ixs) for (const k of ix.keys) if (k.isWritable) keys.push(k.pubkey);
  return dedupe(keys);
}

/** A transaction's compute budget, priced: what it asks for, at what price, and what that costs. */
export interface PricedBudget {
  unitLimit: number;
  microLamportsPerCu: bigint;
  /** SetComputeUnitLimit (and SetComputeUnitPrice when the price is above 0), to go first. */
  budget: TransactionInstruction[];
  /** The priority fee: ceil(unitLimit × microLamportsPerCu / 1,000,000). */
  priorityLamports: bigint;
}

/**
 * The budget for a transaction of `ixs` paid by `feePayer`: the limit sized
 * for them, the price `policy` resolves now for signing round `round`
 * (0 = first), and the instructions that carry both. Every sender (the
 * pipeline, the CLI, the webmail, deploy) prices through this.
 */
export async function priceBudget(
  conn: Connection,
  policy: PriorityFeePolicy,
  ixs: TransactionInstruction[],
  feePayer: PublicKey,
  round = 0,
): Promise<PricedBudget> {
  const unitLimit = budgetedUnitLimit(ixs, 1n);
  const microLamportsPerCu = await resolvePriorityFee(
    conn,
    policy,
    writableKeysOf(ixs, feePayer),
    round,
    unitLimit,
  );
  return {
    unitLimit,
    microLamportsPerCu,
    budget: computeBudgetInstructions({ unitLimit, microLamportsPerCu }),
    priorityLamports: priorityFeeLamports(unitLimit, microLamportsPerCu),
  };
}

/** The policy `[chain] priority_fee`, `priority_fee_percentile` and `max_priority_fee_lamports` describe. */
export function priorityFeePolicyOf(chain: {
  priority_fee: 'auto' | number;
  priority_fee_percentile?: number;
  max_priority_fee_lamports: number;
}): PriorityFeePolicy {
  const maxLamports = BigInt(chain.max_priority_fee_lamports);
  if (chain.priority_fee === 'auto') {
    return {
      mode: 'auto',
      percentile: chain.priority_fee_percentile ?? DEFAULT_PRIORITY_FEE_PERCENTILE,
      maxLamports,
    };
  }
  return { mode: 'fixed', microLamports: BigInt(chain.priority_fee), maxLamports };
}
