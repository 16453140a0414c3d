// Lean JSON-RPC for the delivery pipeline's hot calls. web3.js checks every
// answer against a superstruct schema and builds PublicKeys and Buffers for
// every account, which cost more CPU than the call itself against a local
// node; these go through the same Connection (its endpoint, transport and
// timeouts) but take the standard JSON-RPC answer as it is. Only for reads
// whose shape is fixed by the Solana RPC: account data (base64), signature
// statuses and the block height.
import type { Commitment, Connection, PublicKey, SignatureStatus } from '@solana/web3.js';

/** getMultipleAccounts' per-call cap on public RPC nodes. */
const ACCOUNTS_PER_CALL = 100;

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

type RpcRequest = (method: string, params: unknown[]) => Promise<RpcAnswer>;
type RpcBatchRequest = (calls: { methodName: string; args: unknown[] }[]) => Promise<RpcAnswer[]>;

/** A JSON-RPC error answer (the node's code and message). */
export class RpcCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message}`);
    this.name = 'RpcCallError';
  }
}

// The Connection's own request functions (web3.js 1.x): the endpoint, the fetch and the timeouts it was made with.
function requestOf(connection: Connection): { one: RpcRequest; batch: RpcBatchRequest } {
  const c = connection as unknown as { _rpcRequest?: RpcRequest; _rpcBatchRequest?: RpcBatchRequest };
  if (typeof c._rpcRequest !== 'function' || typeof c._rpcBatchRequest !== 'function')
    throw new Error('this web3.js Connection has no JSON-RPC request functions');
  return { one: c._rpcRequest, batch: c._rpcBatchRequest };
}

function resultOf<T>(method: string, answer: RpcAnswer | undefined): T {
  if (!answer) throw new RpcCallError(method, -32603, 'no answer in the batch');
  if (answer.error)
    throw new RpcCallError(method, answer.error.code, answer.error.message, answer.error.data);
  return answer.result as T;
}

/** One JSON-RPC call; its result as the node sent it. */
export async function rpcCall<T>(connection: Connection, method: string, params: unknown[]): Promise<T> {
  return resultOf<T>(method, await requestOf(connection).one(method, params));
}

/** Several calls in one JSON-RPC batch (one HTTP request), answered in order. */
export async function rpcBatch(
  connection: Connection,
  calls: { method: string; params: unknown[] }[],
): Promise<unknown[]> {
  const answers = await requestOf(connection).batch(
    calls.map((c) => ({ methodName: c.method, args: c.params })),
  );
  return calls.map((c, i) => resultOf(c.method, answers[i]));
}

export interface RawAccount {
  /** base58 */
  owner: string;
  lamports: number;
  data: Uint8Array;
}

interface WireAccount {
  owner: string;
  lamports: number;
  data: [string, string];
}

function rawAccount(wire: WireAccount | null): RawAccount | null {
  if (!wire) return null;
  const b = Buffer.from(wire.data[0], 'base64');
  return {
    owner: wire.owner,
    lamports: wire.lamports,
    data: new Uint8Array(b.buffer, b.byteOffset, b.length),
  };
}

interface Waiting {
  addresses: string[];
  resolve(accounts: (RawAccount | null)[]): void;
  reject(err: unknown): void;
}

// Reads asked for in the same turn of the event loop, per connection and commitment, go out together.
const waiting = new WeakMap<Connection, Map<Commitment, Waiting[]>>();

async function flushReads(connection: Connection, commitment: Commitment, list: Waiting[]): Promise<void> {
  const unique = [...new Set(list.flatMap((w) => w.addresses))];
  try {
    const found = new Map<string, RawAccount | null>();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < unique.length; i += ACCOUNTS_PER_CALL) {
      const slice = unique.slice(i, i + ACCOUNTS_PER_CALL);
      calls.push(
        rpcCall<{ value: (WireAccount | null)[] }>(connection, 'getMultipleAccounts', [
          slice,
          { commitment, encoding: 'base64' },
        ]).then(({ value }) => {
          slice.forEach((a, j) => {
            found.set(a, rawAccount(value[j] ?? null));
          });
        }),
      );
    }
    await Promise.all(calls);
    for (const w of list) w.resolve(w.addresses.map((a) => found.get(a) ?? null));
  } catch (err) {
    for (const w of list) w.reject(err);
  }
}

/**
 * The accounts at `addresses` (null where none), read at `commitment` (the
 * connection's by default). Concurrent reads are merged into
 * getMultipleAccounts calls of up to 100 addresses, each read fresh.
 */
export function readAccounts(
  connection: Connection,
  addresses: (PublicKey | string)[],
  commitment: Commitment = connection.commitment ?? 'finalized',
): Promise<(RawAccount | null)[]> {
  return new Promise((resolve, reject) => {
    let byCommitment = waiting.get(connection);
    if (!byCommitment) {
      byCommitment = new Map();
      waiting.set(connection, byCommitment);
    }
    let list = byCommitment.get(commitment);
    if (!list) {
      const fresh: Waiting[] = [];
      list = fresh;
      byCommitment.set(commitment, fresh);
      const map = byCommitment;
      setImmediate(() => {
        map.delete(commitment);
        void flushReads(connection, commitment, fresh);
      });
    }
    list.push({
      addresses: addresses.map((a) => (typeof a === 'string' ? a : a.toBase58())),
      resolve,
      reject,
    });
  });
}

/** What one status read saw: the block height and the statuses, each with the slot it was answered at. */
export interface HeightAndStatuses {
  /** The block height at `confirmed`. */
  height: number;
  /** The slot that height belongs to (getEpochInfo's absoluteSlot). */
  heightSlot: number;
  statuses: (SignatureStatus | null)[];
  /** The context slot of the statuses' answer (the bank the node looked into). */
  statusSlot: number;
}

/**
 * The block height (at `confirmed`, with its slot) and the statuses of
 * `signatures` (history searched), in one JSON-RPC batch, the height asked
 * first. A missing status proves nothing by itself: only when the statuses
 * were answered from a bank that had seen the height pass
 * lastValidBlockHeight (their context slot against the height's slot, as
 * stateOf in stages/signature-watch.ts checks) does "missing" mean the node
 * had seen every block the transaction could have landed in.
 */
export async function heightAndStatuses(
  connection: Connection,
  signatures: string[],
): Promise<HeightAndStatuses> {
  const [epoch, statuses] = await rpcBatch(connection, [
    { method: 'getEpochInfo', params: [{ commitment: 'confirmed' }] },
    { method: 'getSignatureStatuses', params: [signatures, { searchTransactionHistory: true }] },
  ]);
  const e = epoch as { blockHeight: number; absoluteSlot: number };
  const s = statuses as { context: { slot: number }; value: (SignatureStatus | null)[] };
  return { height: e.blockHeight, heightSlot: e.absoluteSlot, statuses: s.value, statusSlot: s.context.slot };
}

/**
 * The accounts at `addresses` at `commitment`, answered from a bank at or
 * past `minContextSlot` (asked of the node, and checked on its answer: a
 * node behind it is an RpcCallError, never a stale "absent"). In
 * getMultipleAccounts calls of up to 100, never merged with other reads.
 */
export async function readAccountsSince(
  connection: Connection,
  addresses: (PublicKey | string)[],
  commitment: Commitment,
  minContextSlot: number,
): Promise<(RawAccount | null)[]> {
  const keys = addresses.map((a) => (typeof a === 'string' ? a : a.toBase58()));
  const out: (RawAccount | null)[] = [];
  for (let i = 0; i < keys.length; i += ACCOUNTS_PER_CALL) {
    const slice = keys.slice(i, i + ACCOUNTS_PER_CALL);
    const { context, value } = await rpcCall<{ context: { slot: number }; value: (WireAccount | null)[] }>(
      connection,
      'getMultipleAccounts',
      [slice, { commitment, encoding: 'base64', minContextSlot }],
    );
    if (context.slot < minContextSlot)
      throw new RpcCallError('getMultipleAccounts', -32016, 'Minimum context slot has not been reached');
    slice.forEach((_, j) => {
      out.push(rawAccount(value[j] ?? null));
    });
  }
  return out;
}

/** How often a client polls for a new slot or status: about one slot (400 ms). */
export const SLOT_POLL_MS = 400;
