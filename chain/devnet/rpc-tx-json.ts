// getTransaction's renderings of a landed transaction: json, jsonParsed
// (annotated keys; System instructions parsed, others partially decoded) and
// base64/base58.
import bs58 from 'bs58';
import { SYSTEM_PROGRAM_ID } from './constants.ts';
import type { TxRecord } from './history.ts';
import type { InnerInstructions, ReturnData } from './svm.ts';
import { type DecodedTransaction, decodeTransaction, isSignerIndex, isWritableIndex } from './transaction.ts';

export type TxEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

function parseSystemInstruction(data: Uint8Array, accounts: string[]): { type: string; info: object } | null {
  if (data.length < 4) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const tag = view.getUint32(0, true);
  try {
    switch (tag) {
      case 0:
        return {
          type: 'createAccount',
          info: {
            source: accounts[0],
            newAccount: accounts[1],
            lamports: view.getBigUint64(4, true),
            space: view.getBigUint64(12, true),
            owner: bs58.encode(data.subarray(20, 52)),
          },
        };
      case 1:
        return { type: 'assign', info: { account: accounts[0], owner: bs58.encode(data.subarray(4, 36)) } };
      case 2:
        return {
          type: 'transfer',
          info: { source: accounts[0], destination: accounts[1], lamports: view.getBigUint64(4, true) },
        };
      case 8:
        return { type: 'allocate', info: { account: accounts[0], space: view.getBigUint64(4, true) } };
      default:
        return null;
    }
  } catch {
    return null;
  }
}

function parsedMessage(tx: DecodedTransaction) {
  return {
    accountKeys: tx.accountKeys.map((pubkey, i) => ({
      pubkey,
      signer: isSignerIndex(tx, i),
      writable: isWritableIndex(tx, i),
      source: 'transaction',
    })),
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => {
      const programId = tx.accountKeys[ix.programIdIndex] as string;
      const accounts = ix.accountIndexes.map((i) => tx.accountKeys[i] as string);
      const parsed = programId === SYSTEM_PROGRAM_ID ? parseSystemInstruction(ix.data, accounts) : null;
      if (parsed) return { program: 'system', programId, parsed, stackHeight: null };
      return { programId, accounts, data: bs58.encode(ix.data), stackHeight: null };
    }),
    ...(tx.version === 0 ? { addressTableLookups: [] } : {}),
  };
}

function jsonMessage(tx: DecodedTransaction) {
  return {
    accountKeys: tx.accountKeys,
    header: tx.header,
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: ix.accountIndexes,
      data: bs58.encode(ix.data),
      stackHeight: null,
    })),
    ...(tx.version === 0 ? { addressTableLookups: [] } : {}),
  };
}

/** Inner instructions as getTransaction and simulateTransaction show them; jsonParsed names the accounts. */
export function innerInstructionsJson(inner: InnerInstructions[], keys?: string[]) {
  return inner.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((ix) =>
      keys
        ? {
            programId: keys[ix.programIdIndex],
            accounts: ix.accounts.map((i) => keys[i]),
            data: ix.data,
            stackHeight: ix.stackHeight,
          }
        : ix,
    ),
  }));
}

export function returnDataJson(returnData: ReturnData | null) {
  if (!returnData) return null;
  return {
    programId: returnData.programId,
    data: [Buffer.from(returnData.data).toString('base64'), 'base64'],
  };
}

export function renderTransaction(record: TxRecord, encoding: TxEncoding, includeVersion: boolean) {
  const tx = decodeTransaction(record.wire);
  let transaction: unknown;
  if (encoding === 'base64') transaction = [Buffer.from(record.wire).toString('base64'), 'base64'];
  else if (encoding === 'base58') transaction = [bs58.encode(record.wire), 'base58'];
  else {
    transaction = {
      signatures: tx.signatures.map((s) => bs58.encode(s)),
      message: encoding === 'jsonParsed' ? parsedMessage(tx) : jsonMessage(tx),
    };
  }
  const meta = {
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    fee: record.fee,
    preBalances: record.preBalances,
    postBalances: record.postBalances,
    innerInstructions: innerInstructionsJson(
      record.innerInstructions,
      encoding === 'jsonParsed' ? tx.accountKeys : undefined,
    ),
    logMessages: record.logs,
    preTokenBalances: [],
    postTokenBalances: [],
    rewards: [],
    ...(includeVersion ? { loadedAddresses: { writable: [], readonly: [] } } : {}),
    ...(record.returnData ? { returnData: returnDataJson(record.returnData) } : {}),
    computeUnitsConsumed: record.unitsConsumed,
  };
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    transaction,
    meta,
    ...(includeVersion ? { version: tx.version } : {}),
  };
}

export function transactionVersion(record: TxRecord): 'legacy' | 0 {
  return decodeTransaction(record.wire).version;
}
