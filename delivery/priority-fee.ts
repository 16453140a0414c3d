// The pipeline's compute budget (chain/client/compute-budget.ts): every SendMail
// (single or batched) and DeleteMail it builds carries SetComputeUnitLimit,
// sized from the measured use of its instructions, and SetComputeUnitPrice,
// resolved per signing round (raised on each re-sign after an expiry) and
// capped per transaction by `[chain] max_priority_fee_lamports`.
import type { Connection, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { emailSize, rentExemptLamports } from '../chain/client/accounts/index.ts';
import {
  budgetedUnitLimit,
  computeBudgetInstructions,
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  type PricedBudget,
  type PriorityFeePolicy,
  priceBudget,
  priorityFeeLamports,
  resolvePriorityFee,
  writableKeysOf,
} from '../chain/client/compute-budget.ts';
import type { MetricsRegistry } from '../src/core/limits/metrics.ts';
import type { Logger } from '../src/core/log.ts';

/** Without `[chain]` settings: auto (the 75th percentile of recent fees), at most 100,000 lamports per transaction. */
export const DEFAULT_PRIORITY_FEE: PriorityFeePolicy = {
  mode: 'auto',
  maxLamports: DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
};

/** The budget of one transaction (chain/client/compute-budget.ts priceBudget). */
export type Budgeted = PricedBudget;

/** The budget instructions for a transaction of `ixs` paid by `payer`, on signing round `round` (0 = first). */
export function budgetFor(
  connection: Connection,
  policy: PriorityFeePolicy,
  ixs: TransactionInstruction[],
  payer: PublicKey,
  round: number,
): Promise<Budgeted> {
  return priceBudget(connection, policy, ixs, payer, round);
}

/**
 * Budgets for one process's transactions: an `auto` price is looked up
 * (getRecentPrioritizationFees) at most once per 5 s per signing round and
 * unit limit, instead of once per message.
 */
export class FeeBook {
  private readonly known = new Map<string, { at: number; price: Promise<bigint> }>();

  constructor(
    private readonly connection: Connection,
    readonly policy: PriorityFeePolicy = DEFAULT_PRIORITY_FEE,
    private readonly maxAgeMs = 5000,
  ) {}

  async budget(ixs: TransactionInstruction[], payer: PublicKey, round: number): Promise<Budgeted> {
    const unitLimit = budgetedUnitLimit(ixs, 1n);
    const key = `${round}:${unitLimit}`;
    let entry = this.known.get(key);
    if (!entry || Date.now() - entry.at > this.maxAgeMs) {
      const price = resolvePriorityFee(
        this.connection,
        this.policy,
        writableKeysOf(ixs, payer),
        round,
        unitLimit,
      );
      entry = { at: Date.now(), price };
      this.known.set(key, entry);
      if (this.known.size > 256) this.known.delete(this.known.keys().next().value as string);
    }
    const microLamportsPerCu = await entry.price;
    return {
      budget: computeBudgetInstructions({ unitLimit, microLamportsPerCu }),
      unitLimit,
      microLamportsPerCu,
      priorityLamports: priorityFeeLamports(unitLimit, microLamportsPerCu),
    };
  }
}

/** The fee books of connections without one given (one per connection and policy object). */
const books = new WeakMap<Connection, WeakMap<PriorityFeePolicy, FeeBook>>();

export function feeBookOf(connection: Connection, policy: PriorityFeePolicy = DEFAULT_PRIORITY_FEE): FeeBook {
  let byPolicy = books.get(connection);
  if (!byPolicy) {
    byPolicy = new WeakMap();
    books.set(connection, byPolicy);
  }
  let book = byPolicy.get(policy);
  if (!book) {
    book = new FeeBook(connection, policy);
    byPolicy.set(policy, book);
  }
  return book;
}

/** The signature fee of a transaction the authority alone signs (lamports). */
export const SIGNATURE_FEE_LAMPORTS = 5000n;
/** The longest CID the pipeline publishes: the `b3:` marker (3 + 64 hex); a CIDv1 is 59 characters. */
const LONGEST_PIPELINE_CID = 67;

/**
 * The most one relayed message costs the domain authority: the signature
 * fee, the rent of its Email account (held until DeleteMail) and the
 * priority fee at its per-transaction cap (a message sent alone pays it
 * all; a batch shares one). The balance floor keeps this much above
 * `[chain] min_authority_lamports` (src/core/limits/balance-guard.ts).
 */
export function messageCostLamports(policy: Pick<PriorityFeePolicy, 'maxLamports'>): bigint {
  return (
    SIGNATURE_FEE_LAMPORTS +
    rentExemptLamports(emailSize('x'.repeat(LONGEST_PIPELINE_CID))) +
    policy.maxLamports
  );
}

/**
 * `policy` with a report of prices cut to the cap: a counter
 * (`sealpost_priority_fee_capped_total`) and a warning at most once a
 * minute naming what the cluster asks and what the cap allows, so an
 * operator sees why sends keep expiring under congestion before the DSNs.
 */
export function reportingCaps(
  policy: PriorityFeePolicy,
  logger: Logger,
  registry?: MetricsRegistry,
): PriorityFeePolicy {
  const counter = registry?.counter(
    'sealpost_priority_fee_capped_total',
    'Transactions priced at the [chain] max_priority_fee_lamports cap because the price wanted was above it.',
  );
  let lastLog = Number.NEGATIVE_INFINITY;
  let since = 0;
  return {
    ...policy,
    onCapped: (wanted, cap, unitLimit) => {
      counter?.inc();
      since++;
      const now = Date.now();
      if (now - lastLog < 60_000) return;
      lastLog = now;
      logger.warn(
        {
          wanted_micro_lamports_per_cu: wanted.toString(),
          cap_micro_lamports_per_cu: cap.toString(),
          unit_limit: unitLimit,
          wanted_lamports: priorityFeeLamports(unitLimit, wanted).toString(),
          max_priority_fee_lamports: policy.maxLamports.toString(),
          capped_since_last_line: since,
        },
        'priority fee capped: the cluster asks more than [chain] max_priority_fee_lamports allows; sends may not land under congestion',
      );
      since = 0;
    },
  };
}
