// Shared pieces of the instruction builders: account metas and encoding.
import { type AccountMeta, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { Buffer } from 'buffer';
import { type Key, toPublicKey } from './bytes.ts';
import { encodeInstruction, type MailInstruction } from './instruction-data.ts';

export const ZERO_HASH = new Uint8Array(32);

function meta(key: Key, isSigner: boolean, isWritable: boolean): AccountMeta {
  return { pubkey: toPublicKey(key), isSigner, isWritable };
}

export const signerW = (k: Key) => meta(k, true, true);
export const signer = (k: Key) => meta(k, true, false);
export const writable = (k: Key) => meta(k, false, true);
export const readonly = (k: Key) => meta(k, false, false);
export const system = () => readonly(SystemProgram.programId);

export function ix(programId: Key, keys: AccountMeta[], data: MailInstruction): TransactionInstruction {
  // web3.js types instruction data as Buffer; 'buffer' is the same polyfill its browser build uses.
  return new TransactionInstruction({
    programId: toPublicKey(programId),
    keys,
    data: Buffer.from(encodeInstruction(data)),
  });
}
