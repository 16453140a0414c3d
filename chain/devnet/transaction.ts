// Wire format of Solana transactions: legacy messages and v0 messages without
// address lookup tables. Decoding is strict (no trailing bytes, canonical
// compact-u16 lengths) and separate from sanitizing and signature checks so
// the RPC layer can map each failure to the error a real node returns.
import bs58 from 'bs58';
import type { Address } from './account-store.ts';
import { PACKET_DATA_SIZE } from './constants.ts';
import { encodeKey } from './key-cache.ts';

export interface MessageHeader {
  numRequiredSignatures: number;
  numReadonlySignedAccounts: number;
  numReadonlyUnsignedAccounts: number;
}

export interface CompiledInstruction {
  programIdIndex: number;
  accountIndexes: number[];
  data: Uint8Array;
}

export interface DecodedTransaction {
  version: 'legacy' | 0;
  /** 64-byte signatures in wire order; the first is the transaction id. */
  signatures: Uint8Array[];
  /** The exact message bytes the signatures cover. */
  message: Uint8Array;
  header: MessageHeader;
  accountKeys: Address[];
  accountKeyBytes: Uint8Array[];
  recentBlockhash: string;
  instructions: CompiledInstruction[];
  /** The whole wire transaction (signatures + message). */
  wire: Uint8Array;
}

/** The bytes are not a transaction (real nodes: "failed to deserialize …"). */
export class TransactionDecodeError extends Error {
  override name = 'TransactionDecodeError';
}

/** Decoded but structurally invalid, or using a feature devnet does not run. */
export class TransactionSanitizeError extends Error {
  override name = 'TransactionSanitizeError';
}

class Reader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  u8(): number {
    if (this.offset >= this.bytes.length)
      throw new TransactionDecodeError('io error: failed to fill whole buffer');
    return this.bytes[this.offset++] as number;
  }

  take(length: number): Uint8Array {
    if (length > this.remaining) throw new TransactionDecodeError('io error: failed to fill whole buffer');
    const out = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  /** Solana's compact-u16: 1–3 bytes, 7 bits each, canonical form only. */
  shortVec(): number {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const byte = this.u8();
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) {
        if (i > 0 && byte === 0) throw new TransactionDecodeError('non-canonical compact-u16 length');
        if (value > 0xffff) throw new TransactionDecodeError('compact-u16 length overflow');
        return value;
      }
    }
    throw new TransactionDecodeError('compact-u16 length overflow');
  }
}

export function decodeTransaction(wire: Uint8Array): DecodedTransaction {
  if (wire.length > PACKET_DATA_SIZE) {
    throw new TransactionDecodeError(
      `transaction too large: ${wire.length} bytes (max: ${PACKET_DATA_SIZE})`,
    );
  }
  const r = new Reader(wire);
  const signatureCount = r.shortVec();
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < signatureCount; i++) signatures.push(r.take(64));
  const messageStart = r.offset;
  const first = r.u8();
  let version: 'legacy' | 0 = 'legacy';
  let headerFirst = first;
  if (first & 0x80) {
    const v = first & 0x7f;
    if (v !== 0)
      throw new TransactionSanitizeError(`Transaction version (${v}) is unsupported by this devnet`);
    version = 0;
    headerFirst = r.u8();
  }
  const header: MessageHeader = {
    numRequiredSignatures: headerFirst,
    numReadonlySignedAccounts: r.u8(),
    numReadonlyUnsignedAccounts: r.u8(),
  };
  const keyCount = r.shortVec();
  const accountKeyBytes: Uint8Array[] = [];
  for (let i = 0; i < keyCount; i++) accountKeyBytes.push(r.take(32));
  const recentBlockhash = encodeKey(r.take(32));
  const instructionCount = r.shortVec();
  const instructions: CompiledInstruction[] = [];
  for (let i = 0; i < instructionCount; i++) {
    const programIdIndex = r.u8();
    const accountIndexes = Array.from(r.take(r.shortVec()));
    const data = r.take(r.shortVec());
    instructions.push({ programIdIndex, accountIndexes, data });
  }
  if (version === 0) {
    const lookups = r.shortVec();
    if (lookups > 0) {
      throw new TransactionSanitizeError('address lookup tables are not supported by this devnet');
    }
  }
  if (r.remaining > 0) throw new TransactionDecodeError(`${r.remaining} trailing bytes after the message`);
  return {
    version,
    signatures,
    message: wire.subarray(messageStart),
    header,
    accountKeys: accountKeyBytes.map(encodeKey),
    accountKeyBytes,
    recentBlockhash,
    instructions,
    wire,
  };
}

/** The structural checks a real node runs before anything else (Message::sanitize and friends). */
export function sanitizeTransaction(tx: DecodedTransaction): void {
  const { header, accountKeys, instructions } = tx;
  const n = accountKeys.length;
  const fail = (why: string): never => {
    throw new TransactionSanitizeError(`Transaction failed to sanitize accounts offsets correctly (${why})`);
  };
  if (header.numRequiredSignatures === 0) fail('no required signatures');
  if (tx.signatures.length !== header.numRequiredSignatures) {
    fail(`${tx.signatures.length} signatures for ${header.numRequiredSignatures} required signers`);
  }
  if (header.numReadonlySignedAccounts >= header.numRequiredSignatures)
    fail('the fee payer must be writable');
  if (header.numRequiredSignatures + header.numReadonlyUnsignedAccounts > n)
    fail('header exceeds account keys');
  if (n > 256) fail('too many account keys');
  for (const ix of instructions) {
    if (ix.programIdIndex === 0 || ix.programIdIndex >= n) fail('invalid program id index');
    for (const index of ix.accountIndexes) if (index >= n) fail('invalid account index');
  }
  if (new Set(accountKeys).size !== n) throw new TransactionSanitizeError('Account loaded twice');
}

export function transactionSignature(tx: DecodedTransaction): string {
  const first = tx.signatures[0];
  return first ? bs58.encode(first) : '1111111111111111111111111111111111111111111111111111111111111111';
}

export function isSignerIndex(tx: DecodedTransaction, index: number): boolean {
  return index < tx.header.numRequiredSignatures;
}

export function isWritableIndex(tx: DecodedTransaction, index: number): boolean {
  const { numRequiredSignatures: signed, numReadonlySignedAccounts, numReadonlyUnsignedAccounts } = tx.header;
  if (index < signed) return index < signed - numReadonlySignedAccounts;
  return index < tx.accountKeys.length - numReadonlyUnsignedAccounts;
}
