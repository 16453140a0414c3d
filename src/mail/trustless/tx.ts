// Sending a transaction through any signer (the webmail's wallets, the
// CLI's key file) and polling its signature to `confirmed`. A poll budget
// bounds the wait: past it the caller learns the transaction is still
// pending rather than failed. Every transaction goes behind
// SetComputeUnitLimit and SetComputeUnitPrice (chain/client/compute-budget.ts): an
// auto price from getRecentPrioritizationFees, capped per transaction.
// Shared by the webmail and the CLI; runs in Node and the browser.
import {
  ComputeBudgetProgram,
  type Connection,
  type PublicKey,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  budgetedUnitLimit,
  computeBudgetInstructions,
  maxPriceFor,
  type PriorityFeePolicy,
  priceBudget,
} from '../../../chain/client/compute-budget.ts';
import { type MailProgramError, parseMailProgramError } from '../../../chain/client/errors.ts';
import { REBROADCAST_MS, resendSigned } from '../../../chain/client/rebroadcast.ts';

/**
 * A wallet's transactions (the webmail): the 75th percentile of recent
 * prioritization fees over the transaction's writable accounts, at most
 * 50,000 lamports (0.00005 SOL) of priority fee per transaction.
 */
export const WALLET_PRIORITY_FEE: PriorityFeePolicy = { mode: 'auto', percentile: 75, maxLamports: 50_000n };

/** A priced compute budget: what a confirmation shows, and what the send then pays. */
export interface FeeQuote {
  unitLimit: number;
  microLamportsPerCu: bigint;
  /** The priority fee: ceil(unitLimit × microLamportsPerCu / 1,000,000). */
  lamports: bigint;
  /** The cap the price was held under. */
  maxLamports: bigint;
}

/** The compute budget `ixs` will carry and the priority fee it costs, at the price the cluster asks now. */
export async function quotePriorityFee(
  conn: Connection,
  ixs: TransactionInstruction[],
  feePayer: PublicKey,
  policy: PriorityFeePolicy = WALLET_PRIORITY_FEE,
): Promise<FeeQuote> {
  const b = await priceBudget(conn, policy, ixs, feePayer);
  return {
    unitLimit: b.unitLimit,
    microLamportsPerCu: b.microLamportsPerCu,
    lamports: b.priorityLamports,
    maxLamports: policy.maxLamports,
  };
}

/** `ixs` behind the budget instructions at the quote's price (the limit sized for these `ixs`, the cap kept). */
export function withFeeQuote(ixs: TransactionInstruction[], quote: FeeQuote): TransactionInstruction[] {
  if (ixs.some((ix) => ix.programId.equals(ComputeBudgetProgram.programId))) return ixs;
  const unitLimit = budgetedUnitLimit(ixs, 1n);
  const cap = maxPriceFor(unitLimit, quote.maxLamports);
  const microLamportsPerCu = quote.microLamportsPerCu > cap ? cap : quote.microLamportsPerCu;
  return [...computeBudgetInstructions({ unitLimit, microLamportsPerCu }), ...ixs];
}

/**
 * A broadcast transaction: its signature (not yet confirmed) and, when the
 * signer holds them (an in-page key, not a browser wallet that broadcasts
 * itself), the signed bytes, which the status poll re-sends while unseen.
 */
export interface Submitted {
  signature: string;
  wire?: Uint8Array;
}

/** Whatever signs for a wallet and broadcasts. */
export interface TxSubmitter {
  publicKey: PublicKey;
  submit(conn: Connection, tx: Transaction): Promise<Submitted>;
}

export class TxFailedError extends Error {
  constructor(
    message: string,
    readonly mailError: MailProgramError | null,
    readonly signature: string | null,
  ) {
    super(message);
    this.name = 'TxFailedError';
  }
}

export type TxOutcome = { status: 'confirmed'; signature: string } | { status: 'pending'; signature: string };

export interface PollOptions {
  /** How long to poll before reporting 'pending'; default 30 s. */
  budgetMs?: number;
  intervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Called once the transaction is submitted, before polling starts. */
  onSubmitted?: (signature: string) => void;
  /**
   * The signed bytes, when the caller holds them (a key file, not a browser
   * wallet that broadcasts itself): re-sent about every 2 s while the
   * signature is unseen (chain/client/rebroadcast.ts).
   */
  wire?: Uint8Array;
}

export interface SendOptions extends PollOptions {
  /**
   * The compute budget: a quote shown to the holder (its price is kept), a
   * policy to price it now, or null for none; default WALLET_PRIORITY_FEE.
   */
  priorityFee?: FeeQuote | PriorityFeePolicy | null;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function pollSignature(
  conn: Connection,
  signature: string,
  opts: PollOptions = {},
): Promise<TxOutcome> {
  const budget = opts.budgetMs ?? 30_000;
  const interval = opts.intervalMs ?? 400;
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? defaultSleep;
  const deadline = now() + budget;
  let failures = 0;
  let sentAt = now();
  for (;;) {
    let st: Awaited<ReturnType<Connection['getSignatureStatuses']>>['value'][number];
    try {
      st = (await conn.getSignatureStatuses([signature])).value[0] ?? null;
      failures = 0;
    } catch (err) {
      // A failed poll backs off (doubling, up to 16 intervals) instead of ending the wait; five in a row end it.
      if (++failures >= 5 || now() >= deadline) throw err;
      await sleep(interval * 2 ** Math.min(failures, 4));
      continue;
    }
    if (st?.err) {
      const parsed = parseMailProgramError(st.err);
      throw new TxFailedError(
        parsed
          ? `the mail program refused: ${parsed.name}`
          : `the transaction failed: ${JSON.stringify(st.err)}`,
        parsed,
        signature,
      );
    }
    if (st && (st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized')) {
      return { status: 'confirmed', signature };
    }
    if (now() >= deadline) return { status: 'pending', signature };
    if (!st && opts.wire && now() - sentAt >= REBROADCAST_MS) {
      sentAt = now();
      // The same bytes again: one signature lands at most once.
      await resendSigned(conn, opts.wire);
    }
    await sleep(interval);
  }
}

/**
 * Signs (or has the external wallet sign) and submits the instructions
 * behind their compute budget, then polls to commitment.
 */
export async function sendInstructions(
  conn: Connection,
  wallet: TxSubmitter,
  ixs: TransactionInstruction[],
  opts: SendOptions = {},
): Promise<TxOutcome> {
  let submitted: Submitted;
  const fee = opts.priorityFee === undefined ? WALLET_PRIORITY_FEE : opts.priorityFee;
  let sent = ixs;
  if (fee !== null) {
    const quote = 'unitLimit' in fee ? fee : await quotePriorityFee(conn, ixs, wallet.publicKey, fee);
    sent = withFeeQuote(ixs, quote);
  }
  try {
    submitted = await wallet.submit(conn, new Transaction().add(...sent));
  } catch (err) {
    const parsed = parseMailProgramError(err);
    if (parsed) throw new TxFailedError(`the mail program refused: ${parsed.name}`, parsed, null);
    throw err;
  }
  opts.onSubmitted?.(submitted.signature);
  return pollSignature(conn, submitted.signature, { ...opts, wire: opts.wire ?? submitted.wire });
}
