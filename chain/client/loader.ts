// Instruction builders and account decoders for Solana's BPF Upgradeable
// Loader (loader v3), as `solana program deploy` uses it: a Buffer account is
// created and filled with Write chunks, then DeployWithMaxDataLen (in the same
// transaction as the System CreateAccount of the program account) copies it
// into the ProgramData account [program id] of the loader.
// Instruction data is bincode: a u32 LE variant tag, then the fields.
// Browser-safe: web3.js and Uint8Array only.
import {
  type AccountMeta,
  PublicKey,
  SYSVAR_CLOCK_PUBKEY,
  SYSVAR_RENT_PUBKEY,
  SystemProgram,
  TransactionInstruction,
} from '@solana/web3.js';
import { Buffer } from 'buffer';

export const LOADER_ID = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');

/** Bytes before the program in a Buffer account (tag u32, Option<Pubkey> authority). */
export const BUFFER_METADATA_SIZE = 37;
/** Size of a Program account (tag u32, programdata address). */
export const PROGRAM_ACCOUNT_SIZE = 36;
/** Bytes before the program in a ProgramData account (tag u32, slot u64, Option<Pubkey> authority). */
export const PROGRAMDATA_METADATA_SIZE = 45;

/**
 * Largest Write chunk that fits a 1232-byte legacy transaction whose only
 * signer is both fee payer and buffer authority, with SetComputeUnitLimit and
 * SetComputeUnitPrice in front (chain/client/compute-budget.ts): 1232 - 220 bytes of
 * signature, header, keys, blockhash, instruction framing and the 16-byte
 * Write header - 52 bytes of the two budget instructions and their program key.
 */
export const MAX_WRITE_CHUNK = 960;

const IX = {
  InitializeBuffer: 0,
  Write: 1,
  DeployWithMaxDataLen: 2,
  Upgrade: 3,
  SetAuthority: 4,
  Close: 5,
  ExtendProgram: 6,
};

/** Rent-exempt balance under the default rent (3480 lamports/byte-year, 2 years, 128 bytes overhead). */
export function rentExemptLamports(dataLen: number): number {
  return (128 + dataLen) * 6960;
}

export function programDataAddress(programId: PublicKey): PublicKey {
  return PublicKey.findProgramAddressSync([programId.toBytes()], LOADER_ID)[0];
}

function data(tag: number, extra: (v: DataView) => void = () => {}, extraLen = 0): Buffer {
  const out = Buffer.alloc(4 + extraLen);
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint32(0, tag, true);
  extra(v);
  return out;
}

const meta = (pubkey: PublicKey, isSigner: boolean, isWritable: boolean): AccountMeta => ({
  pubkey,
  isSigner,
  isWritable,
});
const loaderIx = (keys: AccountMeta[], d: Buffer) =>
  new TransactionInstruction({ programId: LOADER_ID, keys, data: d });

/** System CreateAccount of a Buffer for `programLen` bytes, then InitializeBuffer (one transaction). */
export function createBuffer(p: {
  payer: PublicKey;
  buffer: PublicKey;
  authority: PublicKey;
  programLen: number;
  lamports?: number;
}): TransactionInstruction[] {
  const space = BUFFER_METADATA_SIZE + p.programLen;
  return [
    SystemProgram.createAccount({
      fromPubkey: p.payer,
      newAccountPubkey: p.buffer,
      lamports: p.lamports ?? rentExemptLamports(space),
      space,
      programId: LOADER_ID,
    }),
    initializeBuffer(p.buffer, p.authority),
  ];
}

export function initializeBuffer(buffer: PublicKey, authority: PublicKey): TransactionInstruction {
  return loaderIx([meta(buffer, false, true), meta(authority, false, false)], data(IX.InitializeBuffer));
}

export function write(
  buffer: PublicKey,
  authority: PublicKey,
  offset: number,
  bytes: Uint8Array,
): TransactionInstruction {
  const d = data(
    IX.Write,
    (v) => {
      v.setUint32(4, offset, true);
      v.setBigUint64(8, BigInt(bytes.length), true);
    },
    12 + bytes.length,
  );
  d.set(bytes, 16);
  return loaderIx([meta(buffer, false, true), meta(authority, true, false)], d);
}

/** One Write per chunk of at most `chunkSize` bytes, covering `program` from `from` on (resume point). */
export function writeChunks(
  buffer: PublicKey,
  authority: PublicKey,
  program: Uint8Array,
  from = 0,
  chunkSize = MAX_WRITE_CHUNK,
): TransactionInstruction[] {
  const out: TransactionInstruction[] = [];
  for (let at = from; at < program.length; at += chunkSize) {
    out.push(write(buffer, authority, at, program.subarray(at, at + chunkSize)));
  }
  return out;
}

/** System CreateAccount of the program account, then DeployWithMaxDataLen (one transaction; the program key signs). */
export function deployWithMaxDataLen(p: {
  payer: PublicKey;
  programId: PublicKey;
  buffer: PublicKey;
  authority: PublicKey;
  maxDataLen: number;
  programLamports?: number;
}): TransactionInstruction[] {
  const d = data(IX.DeployWithMaxDataLen, (v) => v.setBigUint64(4, BigInt(p.maxDataLen), true), 8);
  return [
    SystemProgram.createAccount({
      fromPubkey: p.payer,
      newAccountPubkey: p.programId,
      lamports: p.programLamports ?? rentExemptLamports(PROGRAM_ACCOUNT_SIZE),
      space: PROGRAM_ACCOUNT_SIZE,
      programId: LOADER_ID,
    }),
    loaderIx(
      [
        meta(p.payer, true, true),
        meta(programDataAddress(p.programId), false, true),
        meta(p.programId, false, true),
        meta(p.buffer, false, true),
        meta(SYSVAR_RENT_PUBKEY, false, false),
        meta(SYSVAR_CLOCK_PUBKEY, false, false),
        meta(SystemProgram.programId, false, false),
        meta(p.authority, true, false),
      ],
      d,
    ),
  ];
}

/** Replaces the program's bytes with the buffer's; the buffer's lamports beyond rent go to `spill`. */
export function upgrade(p: {
  programId: PublicKey;
  buffer: PublicKey;
  authority: PublicKey;
  spill: PublicKey;
}): TransactionInstruction {
  return loaderIx(
    [
      meta(programDataAddress(p.programId), false, true),
      meta(p.programId, false, true),
      meta(p.buffer, false, true),
      meta(p.spill, false, true),
      meta(SYSVAR_RENT_PUBKEY, false, false),
      meta(SYSVAR_CLOCK_PUBKEY, false, false),
      meta(p.authority, true, false),
    ],
    data(IX.Upgrade),
  );
}

/**
 * Changes the authority of a Buffer or ProgramData account (`account`);
 * `newAuthority` null makes it immutable (for a buffer the loader requires one).
 */
export function setAuthority(
  account: PublicKey,
  current: PublicKey,
  newAuthority: PublicKey | null,
): TransactionInstruction {
  const keys = [meta(account, false, true), meta(current, true, false)];
  if (newAuthority) keys.push(meta(newAuthority, false, false));
  return loaderIx(keys, data(IX.SetAuthority));
}

/**
 * Closes a Buffer (or, with `programId`, a program's ProgramData account) and
 * sends its lamports to `recipient`.
 */
export function close(p: {
  account: PublicKey;
  recipient: PublicKey;
  authority?: PublicKey;
  programId?: PublicKey;
}): TransactionInstruction {
  const keys = [meta(p.account, false, true), meta(p.recipient, false, true)];
  if (p.authority) keys.push(meta(p.authority, true, false));
  if (p.programId) keys.push(meta(p.programId, false, true));
  return loaderIx(keys, data(IX.Close));
}

/** Grows a program's ProgramData account by `additionalBytes` (payer funds the rent). */
export function extendProgram(
  programId: PublicKey,
  payer: PublicKey,
  additionalBytes: number,
): TransactionInstruction {
  return loaderIx(
    [
      meta(programDataAddress(programId), false, true),
      meta(programId, false, true),
      meta(SystemProgram.programId, false, false),
      meta(payer, true, true),
    ],
    data(IX.ExtendProgram, (v) => v.setUint32(4, additionalBytes, true), 4),
  );
}

export type LoaderState =
  | { kind: 'uninitialized' }
  | { kind: 'buffer'; authority: PublicKey | null; bytes: Uint8Array }
  | { kind: 'program'; programData: PublicKey }
  | { kind: 'programData'; slot: bigint; authority: PublicKey | null; bytes: Uint8Array };

/** Decodes a loader-owned account's data; `bytes` is what follows the metadata (ProgramData keeps its zero padding). */
export function decodeLoaderState(accountData: Uint8Array): LoaderState {
  const d = accountData;
  if (d.length < 4) throw new Error('loader account data too short');
  const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
  const key = (at: number) => new PublicKey(d.slice(at, at + 32));
  const optKey = (at: number): PublicKey | null => {
    if (d[at] === 0) return null;
    if (d[at] !== 1) throw new Error('malformed Option<Pubkey> in loader account');
    return key(at + 1);
  };
  const need = (n: number) => {
    if (d.length < n) throw new Error(`loader account data too short (${d.length} < ${n})`);
  };
  switch (v.getUint32(0, true)) {
    case 0:
      return { kind: 'uninitialized' };
    case 1:
      need(BUFFER_METADATA_SIZE);
      return { kind: 'buffer', authority: optKey(4), bytes: d.subarray(BUFFER_METADATA_SIZE) };
    case 2:
      need(PROGRAM_ACCOUNT_SIZE);
      return { kind: 'program', programData: key(4) };
    case 3:
      need(PROGRAMDATA_METADATA_SIZE);
      return {
        kind: 'programData',
        slot: v.getBigUint64(4, true),
        authority: optKey(12),
        bytes: d.subarray(PROGRAMDATA_METADATA_SIZE),
      };
    default:
      throw new Error(`unknown loader account state ${v.getUint32(0, true)}`);
  }
}

/**
 * Length of the ELF image at the start of `bytes` (the end of its furthest
 * header table or section), so a verifier can strip ProgramData's padding.
 */
export function elfLength(bytes: Uint8Array): number {
  if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) {
    throw new Error('not an ELF image');
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = (at: number) => Number(v.getBigUint64(at, true));
  const shoff = n(40);
  const shnum = v.getUint16(60, true);
  let end = Math.max(64, n(32) + 56 * v.getUint16(56, true), shoff + 64 * shnum);
  for (let i = 0; i < shnum; i++) {
    const h = shoff + i * 64;
    if (h + 64 > bytes.length) throw new Error('ELF section headers lie outside the data');
    if (v.getUint32(h + 4, true) !== 8) end = Math.max(end, n(h + 24) + n(h + 32));
  }
  if (end > bytes.length) throw new Error('ELF image extends past the data');
  return end;
}
