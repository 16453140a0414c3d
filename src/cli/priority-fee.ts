// The CLI's compute budget: every transaction a command sends carries
// SetComputeUnitLimit (sized from the instructions' measured use) and
// SetComputeUnitPrice (chain/client/compute-budget.ts). The price comes from
// `--priority-fee <auto|µlamports>` and `--max-priority-fee <lamports>`,
// else from [chain] priority_fee / priority_fee_percentile /
// max_priority_fee_lamports of the config, else those keys' defaults.
// A command registers its policy on the connection it opened, so the shared
// senders (mailbox-tx.ts runTx, chain-cli.ts signAndConfirm) find it.
import type { Connection, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import {
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  DEFAULT_PRIORITY_FEE_PERCENTILE,
  type PriorityFeePolicy,
  parsePriorityFee,
  priceBudget,
  priorityFeePolicyOf,
} from '../../chain/client/compute-budget.ts';

export interface PriorityFeeOptions {
  /** `auto` or µlamports per CU (validated by the option parser). */
  priorityFee?: string;
  /** Lamports per transaction at most. */
  maxPriorityFee?: bigint;
}

interface ChainFeeKeys {
  priority_fee: 'auto' | number;
  priority_fee_percentile?: number;
  max_priority_fee_lamports: number;
}

function priorityFeeOption(value: string): string {
  if (!parsePriorityFee(value))
    throw new InvalidArgumentError('expected "auto" or an integer of µlamports per compute unit');
  return value.trim().toLowerCase();
}

function lamportsOption(value: string): bigint {
  if (!/^\d{1,19}$/.test(value.trim())) throw new InvalidArgumentError('expected an integer of lamports');
  return BigInt(value.trim());
}

/** --priority-fee and --max-priority-fee, for a command that sends transactions. */
export function addPriorityFeeOptions(cmd: Command): Command {
  return cmd
    .option(
      '--priority-fee <auto|µlamports>',
      'compute-unit price: "auto" (a percentile of recent fees) or µlamports per CU (default: [chain] priority_fee, else auto)',
      priorityFeeOption,
    )
    .option(
      '--max-priority-fee <lamports>',
      `the most one transaction pays in priority fee (default: [chain] max_priority_fee_lamports, else ${DEFAULT_MAX_PRIORITY_FEE_LAMPORTS})`,
      lamportsOption,
    );
}

/** The policy the options give, over the config's [chain] keys, over the defaults. */
export function priorityPolicyOf(opts: PriorityFeeOptions, chain?: ChainFeeKeys): PriorityFeePolicy {
  const base = priorityFeePolicyOf(
    chain ?? {
      priority_fee: 'auto',
      priority_fee_percentile: DEFAULT_PRIORITY_FEE_PERCENTILE,
      max_priority_fee_lamports: Number(DEFAULT_MAX_PRIORITY_FEE_LAMPORTS),
    },
  );
  const parsed = opts.priorityFee ? parsePriorityFee(opts.priorityFee) : undefined;
  const maxLamports = opts.maxPriorityFee ?? base.maxLamports;
  if (!parsed) return { ...base, maxLamports };
  if (parsed.mode === 'fixed') return { mode: 'fixed', microLamports: parsed.microLamports, maxLamports };
  return { mode: 'auto', percentile: base.percentile ?? DEFAULT_PRIORITY_FEE_PERCENTILE, maxLamports };
}

const policies = new WeakMap<Connection, PriorityFeePolicy>();

/** Sends on `conn` use `policy`. */
export function usePriorityFee(conn: Connection, policy: PriorityFeePolicy): Connection {
  policies.set(conn, policy);
  return conn;
}

/** The policy registered on `conn`, else the defaults. */
export function policyFor(conn: Connection): PriorityFeePolicy {
  return policies.get(conn) ?? priorityPolicyOf({});
}

export interface Budget {
  /** The budget instructions, then the transaction's own. */
  instructions: TransactionInstruction[];
  unitLimit: number;
  microLamportsPerCu: bigint;
  priorityLamports: bigint;
}

/** Sizes the limit for `ixs`, resolves the price and puts the budget instructions in front. */
export async function budgetInstructions(
  conn: Connection,
  ixs: TransactionInstruction[],
  feePayer: PublicKey,
  policy: PriorityFeePolicy = policyFor(conn),
  round = 0,
): Promise<Budget> {
  const b = await priceBudget(conn, policy, ixs, feePayer, round);
  return {
    instructions: [...b.budget, ...ixs],
    unitLimit: b.unitLimit,
    microLamportsPerCu: b.microLamportsPerCu,
    priorityLamports: b.priorityLamports,
  };
}
