// Sends transactions and waits until each is confirmed, at most `window` in
// flight: signed with a recent blockhash, polled together with
// getSignatureStatuses, rebroadcast while pending (chain/client/rebroadcast.ts, the
// code path the delivery pipeline uses: sent with maxRetries 0, the same bytes
// again every `rebroadcastMs`), and signed again with a new blockhash once the
// old one has expired without the transaction landing (checked against the
// full status history first, so nothing lands twice).
import {
  ComputeBudgetProgram,
  type Connection,
  type Keypair,
  SendTransactionError,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import {
  budgetedUnitLimit,
  computeBudgetInstructions,
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  maxPriceFor,
  type PriorityFeePolicy,
  resolvePriorityFee,
  writableKeysOf,
} from '../../client/compute-budget.ts';
import { Rebroadcaster, sendSigned } from '../../client/rebroadcast.ts';
import { DeployError } from './onchain.ts';

export interface TxSpec {
  /** What the transaction does, for errors ("Write at offset 4048"). */
  label: string;
  ixs: TransactionInstruction[];
  /** Signers besides the fee payer. */
  signers: Keypair[];
}

export interface SendOptions {
  connection: Connection;
  payer: Keypair;
  /** Transactions in flight at once; default 1. */
  window?: number;
  /** Status poll interval; default 400 ms. */
  pollMs?: number;
  /** Resend a pending transaction after this long; default 2 s. */
  rebroadcastMs?: number;
  /** Called once per transaction when it is confirmed, with its index in `specs` and signature. */
  onConfirmed?: (index: number, signature: string) => void;
  /** The compute-unit price; default auto, capped at DEFAULT_MAX_PRIORITY_FEE_LAMPORTS per transaction. */
  priorityFee?: PriorityFeePolicy;
}

export const DEFAULT_DEPLOY_PRIORITY_FEE: PriorityFeePolicy = {
  mode: 'auto',
  maxLamports: DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
};

/**
 * `ixs` behind SetComputeUnitLimit and SetComputeUnitPrice at `price`
 * (capped for this transaction's limit); unchanged when they carry a budget already.
 */
export function withBudget(
  ixs: TransactionInstruction[],
  price: bigint,
  policy: PriorityFeePolicy,
): TransactionInstruction[] {
  if (ixs.some((ix) => ix.programId.equals(ComputeBudgetProgram.programId))) return ixs;
  const unitLimit = budgetedUnitLimit(ixs, 1n);
  const cap = maxPriceFor(unitLimit, policy.maxLamports);
  const microLamportsPerCu = price > cap ? cap : price;
  return [...computeBudgetInstructions({ unitLimit, microLamportsPerCu }), ...ixs];
}

interface Pending {
  index: number;
  signature: string;
  wire: Buffer;
  lastValid: number;
  sentAt: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MAX_RESIGNS = 10;

/** A read that may fail on a flaky RPC: three more tries, 1, 2 and 4 s apart. */
async function retried<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (attempt >= 3) throw err;
      await sleep(1000 * 2 ** attempt);
    }
  }
}

function describeSendError(spec: TxSpec, err: unknown): string {
  if (err instanceof SendTransactionError) {
    const logs = err.logs?.length ? `\n  ${err.logs.slice(-8).join('\n  ')}` : '';
    return `${spec.label} was refused: ${err.transactionError.message}${logs}`;
  }
  return `${spec.label} could not be sent: ${(err as Error).message}`;
}

/** Sends every spec and resolves to their signatures once all are confirmed; throws DeployError on the first failure. */
export async function sendAll(specs: readonly TxSpec[], o: SendOptions): Promise<string[]> {
  const conn = o.connection;
  const window = Math.max(1, o.window ?? 1);
  const pollMs = o.pollMs ?? 400;
  const rebroadcast = new Rebroadcaster(conn, o.rebroadcastMs ?? 2000);
  const done: string[] = new Array(specs.length);
  const resigns = new Array<number>(specs.length).fill(0);
  let blockhash: { blockhash: string; lastValidBlockHeight: number; at: number } | null = null;

  // One price per rebroadcast round (a re-sign after expiry raises it), looked up again after 10 s.
  const policy = o.priorityFee ?? DEFAULT_DEPLOY_PRIORITY_FEE;
  const prices = new Map<number, { price: bigint; at: number }>();
  const priceFor = async (ixs: TransactionInstruction[], round: number) => {
    let known = prices.get(round);
    if (!known || Date.now() - known.at > 10_000) {
      const limit = budgetedUnitLimit(ixs, 1n);
      const keys = writableKeysOf(ixs, o.payer.publicKey);
      known = { price: await resolvePriorityFee(conn, policy, keys, round, limit), at: Date.now() };
      prices.set(round, known);
    }
    return known.price;
  };

  const recent = async (fresh: boolean) => {
    if (fresh || !blockhash || Date.now() - blockhash.at > 5000) {
      blockhash = { ...(await retried(() => conn.getLatestBlockhash('confirmed'))), at: Date.now() };
    }
    return blockhash;
  };

  const submit = async (index: number, freshBlockhash = false): Promise<Pending> => {
    const spec = specs[index] as TxSpec;
    for (let attempt = 0; ; attempt++) {
      const { blockhash: hash, lastValidBlockHeight } = await recent(freshBlockhash || attempt > 0);
      const tx = new Transaction({ feePayer: o.payer.publicKey, blockhash: hash, lastValidBlockHeight });
      const round = resigns[index] ?? 0;
      tx.add(...withBudget(spec.ixs, await priceFor(spec.ixs, round), policy));
      const signers = [o.payer, ...spec.signers].filter(
        (s, i, all) => all.findIndex((t) => t.publicKey.equals(s.publicKey)) === i,
      );
      tx.sign(...signers);
      const wire = tx.serialize();
      const signature = bs58.encode(tx.signature as Buffer);
      try {
        await sendSigned(conn, wire, { preflightCommitment: 'confirmed' });
      } catch (err) {
        const text = err instanceof SendTransactionError ? err.transactionError.message : String(err);
        if (/already been processed/i.test(text)) {
          return { index, signature, wire, lastValid: lastValidBlockHeight, sentAt: Date.now() };
        }
        if (/blockhash not found/i.test(text) && attempt < MAX_RESIGNS) {
          await sleep(pollMs);
          continue;
        }
        throw new DeployError(describeSendError(spec, err));
      }
      return { index, signature, wire, lastValid: lastValidBlockHeight, sentAt: Date.now() };
    }
  };

  const failure = async (p: Pending, err: unknown): Promise<DeployError> => {
    const spec = specs[p.index] as TxSpec;
    const landed = await conn
      .getTransaction(p.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })
      .catch(() => null);
    const logs = landed?.meta?.logMessages?.slice(-8) ?? [];
    return new DeployError(
      `${spec.label} failed (${p.signature}): ${JSON.stringify(err)}${logs.length ? `\n  ${logs.join('\n  ')}` : ''}`,
    );
  };

  let next = 0;
  const pending = new Map<string, Pending>();
  while (next < specs.length || pending.size > 0) {
    while (pending.size < window && next < specs.length) {
      const p = await submit(next++);
      pending.set(p.signature, p);
      rebroadcast.track(p.signature, p.wire, p.lastValid, p.sentAt);
    }
    await sleep(pollMs);
    const sigs = [...pending.keys()];
    const { value: statuses } = await retried(() => conn.getSignatureStatuses(sigs));
    let height: number | null = null;
    for (const [i, sig] of sigs.entries()) {
      const p = pending.get(sig) as Pending;
      const status = statuses[i];
      if (status?.err) throw await failure(p, status.err);
      if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') {
        pending.delete(sig);
        rebroadcast.untrack(sig);
        done[p.index] = sig;
        o.onConfirmed?.(p.index, sig);
        continue;
      }
      if (status) continue; // processed: wait for confirmation
      height ??= await retried(() => conn.getBlockHeight('confirmed'));
      if (height > p.lastValid) {
        // Expired unless it landed after all (look in the whole history).
        const late = (await retried(() => conn.getSignatureStatus(sig, { searchTransactionHistory: true })))
          .value;
        if (late) continue;
        pending.delete(sig);
        rebroadcast.untrack(sig);
        if (++(resigns[p.index] as number) > MAX_RESIGNS) {
          throw new DeployError(
            `${(specs[p.index] as TxSpec).label} expired ${MAX_RESIGNS} times; the cluster is not landing it`,
          );
        }
        const again = await submit(p.index, true);
        pending.set(again.signature, again);
        rebroadcast.track(again.signature, again.wire, again.lastValid, again.sentAt);
      }
    }
    // The same bytes again for whatever is still pending and due.
    await rebroadcast.tick(height ?? undefined);
  }
  return done;
}
