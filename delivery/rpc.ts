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

/**
 * The block height (at `confirmed`) and the statuses of `signatures`
 * (history searched), in one request. The height is read first, so a
 * signature missing after it was read while its blockhash had expired can
 * no longer land.
 */
export async function heightAndStatuses(
  connection: Connection,
  signatures: string[],
): Promise<{ height: number; statuses: (SignatureStatus | null)[] }> {
  const [height, statuses] = await rpcBatch(connection, [
    { method: 'getBlockHeight', params: [{ commitment: 'confirmed' }] },
    { method: 'getSignatureStatuses', params: [signatures, { searchTransactionHistory: true }] },
  ]);
  return {
    height: height as number,
    statuses: (statuses as { value: (SignatureStatus | null)[] }).value,
  };
}
