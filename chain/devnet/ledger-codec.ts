// JSON forms of what the ledger stores: account states, transaction records
// and slot records. Lamports travel as decimal strings (they exceed 2^53),
// bytes as base64.
import type { AccountState, Address } from './account-store.ts';
import type { TxRecord } from './history.ts';
import type { InnerInstructions } from './svm.ts';
import { decodeTransaction } from './transaction.ts';
import type { TransactionErrorJson } from './tx-error.ts';

export interface SlotRecord {
  slot: number;
  blockhash: string;
  blockTime: number;
  txs: TxRecord[];
  /** Final state of every account written in the slot; null = deleted. */
  accounts: Map<Address, AccountState | null>;
}

export interface SlotInfo {
  slot: number;
  blockhash: string;
  blockTime: number;
}

type AccountJson = [string, string, string, boolean];
type TxJson = {
  s: string;
  l: number;
  t: number;
  e: TransactionErrorJson | null;
  f: string;
  pre: string[];
  post: string[];
  g: string[];
  u: number;
  w: string;
  /** Inner instructions, when there were any (format 2). */
  i?: InnerInstructions[];
  /** Return data [program id, base64], when there was any (format 2). */
  r?: [Address, string];
};
type SlotJson = { s: number; h: string; t: number; x?: TxJson[]; a?: [Address, AccountJson | null][] };

const b64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

export function accountToJson(state: AccountState): AccountJson {
  return [state.lamports.toString(), state.owner, b64(state.data), state.executable];
}

export function accountFromJson(json: AccountJson): AccountState {
  return { lamports: BigInt(json[0]), owner: json[1], data: unb64(json[2]), executable: json[3] };
}

export function txToJson(r: TxRecord): TxJson {
  return {
    s: r.signature,
    l: r.slot,
    t: r.blockTime,
    e: r.err,
    f: r.fee.toString(),
    pre: r.preBalances.map(String),
    post: r.postBalances.map(String),
    g: r.logs,
    u: r.unitsConsumed,
    w: b64(r.wire),
    ...(r.innerInstructions.length > 0 ? { i: r.innerInstructions } : {}),
    ...(r.returnData ? { r: [r.returnData.programId, b64(r.returnData.data)] as [Address, string] } : {}),
  };
}

export function txFromJson(j: TxJson): TxRecord {
  const wire = unb64(j.w);
  return {
    signature: j.s,
    slot: j.l,
    blockTime: j.t,
    err: j.e,
    fee: BigInt(j.f),
    preBalances: j.pre.map(BigInt),
    postBalances: j.post.map(BigInt),
    logs: j.g,
    unitsConsumed: j.u,
    innerInstructions: j.i ?? [],
    returnData: j.r ? { programId: j.r[0], data: unb64(j.r[1]) } : null,
    wire,
    accountKeys: decodeTransaction(wire).accountKeys,
  };
}

export function slotToJson(r: SlotRecord): string {
  const json: SlotJson = { s: r.slot, h: r.blockhash, t: r.blockTime };
  if (r.txs.length > 0) json.x = r.txs.map(txToJson);
  if (r.accounts.size > 0) {
    json.a = [...r.accounts].map(([address, state]) => [address, state ? accountToJson(state) : null]);
  }
  return JSON.stringify(json);
}

export function slotFromJson(text: string): SlotRecord {
  const j = JSON.parse(text) as SlotJson;
  if (typeof j.s !== 'number' || typeof j.h !== 'string' || typeof j.t !== 'number') {
    throw new Error('not a slot record');
  }
  return {
    slot: j.s,
    blockhash: j.h,
    blockTime: j.t,
    txs: (j.x ?? []).map(txFromJson),
    accounts: new Map(
      (j.a ?? []).map(([address, state]) => [address, state ? accountFromJson(state) : null]),
    ),
  };
}

/**
 * Format 2 (the runtime's ledger): program accounts are stored like any other
 * and transactions may carry inner instructions and return data. Format 1
 * (the TypeScript bank's) still loads; its programs are deployed at start.
 */
export interface SnapshotHeader {
  version: 1 | 2;
  genesisHash: string;
  /** base58 of the faucet's 32-byte seed: devnet's own key, not a secret worth guarding. */
  faucetSeed: string;
  /** Last slot the snapshot includes. */
  slot: number;
  recentSlots: SlotInfo[];
  transactionCount: number;
}

export type SnapshotLine = ['a', Address, AccountJson] | ['t', TxJson];
