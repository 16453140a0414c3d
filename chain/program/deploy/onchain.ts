// Reading a program of the BPF Upgradeable Loader from a cluster: the program
// account, its ProgramData (authority, deploy slot, the ELF without the
// loader's metadata and zero padding) and a deploy buffer. Every way an
// address can fail to be an upgradeable program gets its own message.
import { createHash } from 'node:crypto';
import type { AccountInfo, Connection, PublicKey } from '@solana/web3.js';
import {
  BUFFER_METADATA_SIZE,
  decodeLoaderState,
  elfLength,
  LOADER_ID,
  PROGRAMDATA_METADATA_SIZE,
} from '../../client/loader.ts';

/** A refusal or failure meant for the operator as is. */
export class DeployError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeployError';
  }
}

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const OLD_LOADERS: Record<string, string> = {
  BPFLoader1111111111111111111111111111111111: 'BPF Loader v1',
  BPFLoader2111111111111111111111111111111111: 'BPF Loader v2',
  LoaderV411111111111111111111111111111111111: 'Loader v4',
  NativeLoader1111111111111111111111111111111: 'the native loader (a builtin)',
};

export interface OnChainProgram {
  programId: PublicKey;
  programData: PublicKey;
  /** null: immutable (authority revoked). */
  authority: PublicKey | null;
  /** Slot of the last deploy or upgrade. */
  slot: bigint;
  /** Room for the program in ProgramData (its data length minus the metadata). */
  capacity: number;
  /** The deployed ELF, padding stripped; null when the bytes are not an ELF image. */
  elf: Uint8Array | null;
  /** Lamports held by the ProgramData account. */
  programDataLamports: number;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}

/** Reads an account, turning a transport failure into a message that names the RPC. */
export async function readAccount(conn: Connection, address: PublicKey): Promise<AccountInfo<Buffer> | null> {
  try {
    return await conn.getAccountInfo(address, 'confirmed');
  } catch (err) {
    throw new DeployError(
      `could not read ${address.toBase58()} from the RPC at ${conn.rpcEndpoint}: ${(err as Error).message}`,
    );
  }
}

function ownerText(owner: string): string {
  return OLD_LOADERS[owner] ?? (owner === SYSTEM_PROGRAM ? 'the System program' : owner);
}

/**
 * The upgradeable program at `programId`, or null when no account exists
 * there. Throws DeployError when the address holds anything else: a plain or
 * foreign account, a program of another loader, a buffer, a closed program.
 */
export async function readProgram(conn: Connection, programId: PublicKey): Promise<OnChainProgram | null> {
  const id = programId.toBase58();
  const account = await readAccount(conn, programId);
  if (!account) return null;
  const owner = account.owner.toBase58();
  if (owner === SYSTEM_PROGRAM) {
    throw new DeployError(
      `${id} is a plain account (owned by the System program, ${account.lamports} lamports), not a program`,
    );
  }
  if (!account.owner.equals(LOADER_ID)) {
    if (account.executable) {
      throw new DeployError(
        `${id} is a program of ${ownerText(owner)}, not of the BPF Upgradeable Loader: it cannot be upgraded`,
      );
    }
    throw new DeployError(`${id} is an account of program ${owner}, not a program`);
  }
  const state = decodeLoaderState(new Uint8Array(account.data));
  if (state.kind !== 'program') {
    const what =
      state.kind === 'programData' ? 'a ProgramData account (pass the program id)' : `a loader ${state.kind}`;
    throw new DeployError(`${id} is ${what}, not a program`);
  }
  const data = await readAccount(conn, state.programData);
  const pd = data?.owner.equals(LOADER_ID) ? decodeLoaderState(new Uint8Array(data.data)) : null;
  if (!data || pd?.kind !== 'programData') {
    throw new DeployError(
      `program ${id} is closed (its ProgramData ${state.programData.toBase58()} is gone); a closed program id cannot be used again`,
    );
  }
  let elf: Uint8Array | null = null;
  try {
    elf = pd.bytes.subarray(0, elfLength(pd.bytes));
  } catch {}
  return {
    programId,
    programData: state.programData,
    authority: pd.authority,
    slot: pd.slot,
    capacity: data.data.length - PROGRAMDATA_METADATA_SIZE,
    elf,
    programDataLamports: data.lamports,
  };
}

export type BufferState =
  | { kind: 'absent' }
  /** A buffer of ours for a program of this size: resume it. */
  | { kind: 'resume'; bytes: Uint8Array; lamports: number }
  /** A buffer of ours of another size (another build): close it, then start over. */
  | { kind: 'stale'; size: number; lamports: number };

/** What the buffer address holds, for a program of `programLen` bytes written by `authority`. */
export async function readBuffer(
  conn: Connection,
  buffer: PublicKey,
  authority: PublicKey,
  programLen: number,
): Promise<BufferState> {
  const account = await readAccount(conn, buffer);
  if (!account) return { kind: 'absent' };
  const at = buffer.toBase58();
  const state = account.owner.equals(LOADER_ID) ? decodeLoaderState(new Uint8Array(account.data)) : null;
  if (state?.kind !== 'buffer') {
    throw new DeployError(
      `the buffer address ${at} already holds an account (owner ${ownerText(account.owner.toBase58())}) that is not a deploy buffer; pass another --buffer FILE`,
    );
  }
  if (!state.authority?.equals(authority)) {
    throw new DeployError(
      `buffer ${at} belongs to authority ${state.authority?.toBase58() ?? 'none'}, not ${authority.toBase58()}; pass another --buffer FILE`,
    );
  }
  const size = account.data.length - BUFFER_METADATA_SIZE;
  if (size !== programLen) return { kind: 'stale', size, lamports: account.lamports };
  return { kind: 'resume', bytes: new Uint8Array(state.bytes), lamports: account.lamports };
}
