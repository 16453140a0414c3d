// `sealpost program verify`: the deployed program's bytes (ProgramData
// without the loader's metadata and zero padding) against a local build,
// byte for byte, with what an operator wants to see about the program.
import type { Connection, PublicKey } from '@solana/web3.js';
import { DeployError, readProgram, sameBytes, sha256Hex } from './onchain.ts';

export interface VerifyResult {
  match: boolean;
  programId: string;
  programData: string;
  /** null: immutable. */
  upgradeAuthority: string | null;
  deploySlot: number;
  /** ProgramData room for the program (max_data_len). */
  capacity: number;
  onChain: { size: number; sha256: string } | null;
  local: { size: number; sha256: string };
  /** Where the bytes first differ, when they do. */
  firstDifference: number | null;
}

export async function verifyProgram(
  conn: Connection,
  programId: PublicKey,
  so: Uint8Array,
): Promise<VerifyResult> {
  const program = await readProgram(conn, programId);
  if (!program)
    throw new DeployError(`no account at ${programId.toBase58()} on this cluster: nothing deployed there`);
  const elf = program.elf;
  let firstDifference: number | null = null;
  if (elf && !sameBytes(elf, so)) {
    const n = Math.min(elf.length, so.length);
    firstDifference = n;
    for (let i = 0; i < n; i++) {
      if (elf[i] !== so[i]) {
        firstDifference = i;
        break;
      }
    }
  }
  return {
    match: elf !== null && sameBytes(elf, so),
    programId: programId.toBase58(),
    programData: program.programData.toBase58(),
    upgradeAuthority: program.authority?.toBase58() ?? null,
    deploySlot: Number(program.slot),
    capacity: program.capacity,
    onChain: elf ? { size: elf.length, sha256: sha256Hex(elf) } : null,
    local: { size: so.length, sha256: sha256Hex(so) },
    firstDifference: elf ? firstDifference : 0,
  };
}
