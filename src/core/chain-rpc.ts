// A web3.js Connection for server processes and the CLI: every RPC call has
// a timeout, so a hung node turns into a retryable error instead of a stuck
// job, and a node that goes away mid-answer fails the call instead of
// leaving it pending (web3.js's own fetch was seen to never settle then). Its
// RPC client only POSTs a JSON text and reads the answer's status and text,
// so it is given src/core/net/http-fetch.ts instead of the platform fetch,
// wrapped in src/core/net/rpc-discipline.ts: the per-process rate limit
// (`[chain] max_rps`), HTTP 429 and Retry-After, backoff on 5xx and
// non-JSON answers, and Agave's 50 kB request limit, the same for every
// server path and the CLI.
//
// Confirmations poll (confirmSignature below): web3.js's confirmTransaction
// learns of a landed transaction only over the WebSocket (it reads the
// status once, after the subscription is set up), so a WebSocket a provider
// does not serve made every confirmation "expire". Given the signed bytes,
// the poll re-sends them about every 2 s until the signature is seen
// (chain/client/rebroadcast.ts: the first send asks the node for no retries of its
// own), so a dropped send lands within its blockhash's lifetime.
import {
  type Commitment,
  ComputeBudgetProgram,
  Connection,
  type SignatureStatus,
  type Signer,
  Transaction,
  TransactionExpiredBlockheightExceededError,
} from '@solana/web3.js';
import { type PriorityFeePolicy, priceBudget } from '../../chain/client/compute-budget.ts';
import { REBROADCAST_MS, resendSigned, sendSigned } from '../../chain/client/rebroadcast.ts';
import { SLOT_POLL_MS } from '../../chain/client/rpc.ts';
import { httpFetch } from './net/http-fetch.ts';
import { type RpcLog, rpcDisciplinedFetch } from './net/rpc-discipline.ts';

export function createConnection(
  rpcUrl: string,
  opts: {
    commitment?: Commitment;
    wsUrl?: string;
    timeoutMs?: number;
    /** JSON-RPC calls per second from this process to this endpoint (`[chain] max_rps`); 0 = no limit; default: none on this host, else 10. */
    maxRps?: number;
    /** How long one call waits out 429s and errors before failing retryable (`[chain] rpc_max_wait_secs`). */
    maxWaitMs?: number;
    /** Where once-a-minute RPC trouble lines go (servers); none for the CLI. */
    log?: RpcLog;
  } = {},
): Connection {
  const inner = httpFetch({ timeoutMs: opts.timeoutMs ?? 15_000 });
  return new Connection(rpcUrl, {
    commitment: opts.commitment ?? 'confirmed',
    wsEndpoint: opts.wsUrl,
    // 429 is waited out below, by Retry-After; web3.js's own retry ignores it and prints to stderr.
    disableRetryOnRateLimit: true,
    fetch: rpcDisciplinedFetch(inner, {
      ...(opts.maxRps !== undefined ? { maxRps: opts.maxRps } : {}),
      ...(opts.maxWaitMs !== undefined ? { maxWaitMs: opts.maxWaitMs } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    }),
  });
}

/** The status poll interval: about one slot. */

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function reached(status: SignatureStatus, commitment: Commitment): boolean {
  const s = status.confirmationStatus;
  if (commitment === 'processed' || commitment === 'recent') return true;
  if (commitment === 'finalized' || commitment === 'max' || commitment === 'root') return s === 'finalized';
  return s === 'confirmed' || s === 'finalized';
}

export interface ConfirmOptions {
  /** Status poll interval (default one slot, 400 ms). */
  pollMs?: number;
  /** Consecutive failed polls before the last error is thrown (default 8; backoff 0.4 s doubling to 6.4 s between them). */
  maxFailures?: number;
}

/**
 * Waits for `signature` to reach `commitment` by polling getSignatureStatuses
 * at slot cadence (backing off on errors). With `lastValidBlockHeight`, a
 * transaction still unseen once the block height is past it (checked against
 * the whole status history) throws web3.js's
 * TransactionExpiredBlockheightExceededError; with only `blockhash`,
 * isBlockhashValid decides. Resolves to the status (its `err` set when the
 * transaction failed), like confirmTransaction's value.
 */
export async function confirmSignature(
  connection: Connection,
  target: {
    signature: string;
    blockhash?: string;
    lastValidBlockHeight?: number;
    /** The signed transaction: re-sent (skipPreflight) every REBROADCAST_MS while its status is unseen. */
    wire?: Uint8Array;
  },
  commitment: Commitment = connection.commitment ?? 'confirmed',
  opts: ConfirmOptions = {},
): Promise<SignatureStatus> {
  const pollMs = opts.pollMs ?? SLOT_POLL_MS;
  const maxFailures = opts.maxFailures ?? 8;
  const { signature } = target;
  let failures = 0;
  let sentAt = Date.now();
  // Nothing to judge expiry by: give up after about two blockhash lifetimes.
  const deadline =
    target.lastValidBlockHeight === undefined && target.blockhash === undefined ? Date.now() + 180_000 : null;
  for (let poll = 0; ; poll++) {
    try {
      // Expiry first, then the status: a transaction unseen after its blockhash expired can no longer land.
      const checkExpiry = poll % 5 === 4;
      let expired = false;
      if (checkExpiry && target.lastValidBlockHeight !== undefined) {
        expired = (await connection.getBlockHeight(commitment)) > target.lastValidBlockHeight;
      } else if (checkExpiry && target.blockhash !== undefined) {
        expired = !(await connection.isBlockhashValid(target.blockhash, { commitment })).value;
      }
      const { value } = await connection.getSignatureStatuses([signature], {
        searchTransactionHistory: expired,
      });
      failures = 0;
      const status = value[0];
      if (status && (status.err || reached(status, commitment))) return status;
      if (expired && !status) throw new TransactionExpiredBlockheightExceededError(signature);
      if (deadline !== null && Date.now() > deadline)
        throw new TransactionExpiredBlockheightExceededError(signature);
      if (!status && target.wire && Date.now() - sentAt >= REBROADCAST_MS) {
        sentAt = Date.now();
        // The same bytes: harmless if the first send landed; a failure here is the next poll's to see.
        await resendSigned(connection, target.wire);
      }
      await sleep(pollMs);
    } catch (err) {
      if (err instanceof TransactionExpiredBlockheightExceededError) throw err;
      if (++failures >= maxFailures) throw err;
      const step = pollMs * 2 ** Math.min(failures - 1, 4);
      await sleep(step / 2 + Math.random() * (step / 2));
    }
  }
}

function failed(signature: string, status: SignatureStatus): Error {
  // The words of web3.js's sendAndConfirmTransaction (chain/client/errors.ts reads the status out of them).
  return new Error(`Transaction ${signature} failed (${JSON.stringify(status)})`);
}

/**
 * sendAndConfirmTransaction without the WebSocket: signs with a fresh
 * blockhash, sends, and confirms by polling (confirmSignature).
 */
export async function sendAndConfirmPolled(
  connection: Connection,
  transaction: Transaction,
  signers: Signer[],
  opts: {
    commitment?: Commitment;
    preflightCommitment?: Commitment;
    /** Prepends SetComputeUnitLimit and SetComputeUnitPrice priced by this policy (chain/client/compute-budget.ts). */
    priorityFee?: PriorityFeePolicy;
  } = {},
): Promise<string> {
  const commitment = opts.commitment ?? connection.commitment ?? 'confirmed';
  transaction.feePayer ??= signers[0]?.publicKey;
  const payer = transaction.feePayer;
  const budgeted = transaction.instructions.some((ix) => ix.programId.equals(ComputeBudgetProgram.programId));
  if (opts.priorityFee && payer && !budgeted) {
    const { budget } = await priceBudget(connection, opts.priorityFee, transaction.instructions, payer);
    transaction.instructions = [...budget, ...transaction.instructions];
  }
  const latest = await connection.getLatestBlockhash(commitment);
  transaction.recentBlockhash = latest.blockhash;
  transaction.lastValidBlockHeight = latest.lastValidBlockHeight;
  transaction.sign(...signers);
  const wire = transaction.serialize();
  const signature = await sendSigned(connection, wire, {
    preflightCommitment: opts.preflightCommitment ?? commitment,
  });
  const status = await confirmSignature(connection, { signature, ...latest, wire }, commitment);
  if (status.err) throw failed(signature, status);
  return signature;
}

/**
 * sendAndConfirmRawTransaction without the WebSocket: expiry is judged by
 * the transaction's own blockhash (isBlockhashValid).
 */
export async function sendRawAndConfirmPolled(
  connection: Connection,
  wire: Buffer | Uint8Array,
  opts: { commitment?: Commitment; preflightCommitment?: Commitment } = {},
): Promise<string> {
  const commitment = opts.commitment ?? connection.commitment ?? 'confirmed';
  const blockhash = Transaction.from(wire).recentBlockhash ?? undefined;
  const signature = await sendSigned(connection, wire, {
    preflightCommitment: opts.preflightCommitment ?? commitment,
  });
  const status = await confirmSignature(
    connection,
    blockhash ? { signature, blockhash, wire } : { signature, wire },
    commitment,
  );
  if (status.err) throw failed(signature, status);
  return signature;
}
