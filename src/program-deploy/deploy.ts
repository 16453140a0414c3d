// `sealpost program deploy` without the CLI: uploads a program through the
// BPF Upgradeable Loader as `solana program deploy` does. A buffer account
// (CreateAccount + InitializeBuffer), Write chunks in a bounded window, then
// DeployWithMaxDataLen (new program) or [ExtendProgram +] Upgrade (existing
// program whose upgrade authority is ours). A re-run finds the buffer at the
// same address and writes only the chunks it lacks. Done is reported only
// after the final transaction is confirmed and the program's bytes read back.
import { createHash } from 'node:crypto';
import { type Connection, Keypair, type PublicKey } from '@solana/web3.js';
import { programDataAddress, write } from '../../chain/program/loader.ts';
import { DeployError, readAccount, readBuffer, readProgram, sameBytes, sha256Hex } from './onchain.ts';
import { type DeployKeys, describePlan, makePlan, type Plan, sol } from './plan.ts';
import { sendAll, type TxSpec } from './sender.ts';

export interface DeployInput {
  connection: Connection;
  so: Uint8Array;
  payer: Keypair;
  authority: Keypair;
  programId: PublicKey;
  /** Present for a new program (it signs the program account's creation). */
  programKeypair: Keypair | null;
  /** The buffer keypair; deriveBufferKeypair when the operator names none. */
  buffer: Keypair;
  /** true: --program-id named an existing program to upgrade; it must exist. */
  upgradeOnly: boolean;
  /** ProgramData capacity of a new program; default twice the program. */
  maxDataLen?: number;
  /** Write transactions in flight; default 8. */
  window?: number;
  pollMs?: number;
  /** Prints a line for the operator (the plan, steps). */
  say(line: string): void;
  /** Chunks written so far, of the total. */
  progress(written: number, total: number): void;
  /** Asked once the plan is printed and the balance suffices; false stops before any transaction. */
  confirm(plan: Plan): Promise<boolean>;
}

export interface DeployResult {
  action: 'deployed' | 'upgraded' | 'unchanged';
  programId: string;
  programData: string;
  upgradeAuthority: string;
  buffer: string;
  sha256: string;
  size: number;
  chunksTotal: number;
  chunksWritten: number;
  /** Chunks the buffer already held (resumed upload). */
  chunksHeld: number;
  signature: string | null;
  slot: number | null;
  /** Lamports the payer's balance went down by. */
  lamportsSpent: number;
  transactions: number;
  seconds: number;
}

/**
 * The buffer keypair a deploy uses when none is named: derived from the
 * upgrade authority's secret and the program id, so every run of the same
 * deploy finds the same buffer and nobody without the authority key can.
 */
export function deriveBufferKeypair(authority: Keypair, programId: PublicKey): Keypair {
  const seed = createHash('sha256')
    .update('sealpost:program-buffer:v1')
    .update(authority.secretKey.subarray(0, 32))
    .update(programId.toBytes())
    .digest();
  return Keypair.fromSeed(new Uint8Array(seed));
}

async function balanceOf(conn: Connection, key: PublicKey): Promise<number> {
  try {
    return await conn.getBalance(key, 'confirmed');
  } catch (err) {
    throw new DeployError(`the RPC at ${conn.rpcEndpoint} did not answer: ${(err as Error).message}`);
  }
}

async function waitPastDeploySlot(conn: Connection, programId: PublicKey): Promise<void> {
  const program = await readProgram(conn, programId);
  if (!program) return;
  for (let i = 0; i < 600; i++) {
    if ((await conn.getSlot('confirmed')) >= Number(program.slot)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function deployProgram(input: DeployInput): Promise<DeployResult> {
  const started = Date.now();
  const conn = input.connection;
  const { so, payer, authority, programId } = input;
  const id = programId.toBase58();
  const startBalance = await balanceOf(conn, payer.publicKey);
  const existing = await readProgram(conn, programId);
  if (!existing && input.upgradeOnly) {
    throw new DeployError(
      `program ${id} does not exist on this cluster, so there is nothing to upgrade; a new program is deployed with --program-keypair`,
    );
  }
  const base = {
    programId: id,
    programData: programDataAddress(programId).toBase58(),
    buffer: input.buffer.publicKey.toBase58(),
    sha256: sha256Hex(so),
    size: so.length,
  };
  if (existing) {
    if (!existing.authority) {
      throw new DeployError(
        `program ${id} is immutable (its upgrade authority was revoked): it cannot be upgraded`,
      );
    }
    if (!existing.authority.equals(authority.publicKey)) {
      throw new DeployError(
        `program ${id} has upgrade authority ${existing.authority.toBase58()}, not ${authority.publicKey.toBase58()}: we may not upgrade it`,
      );
    }
    if (existing.elf && sameBytes(existing.elf, so)) {
      return {
        ...base,
        action: 'unchanged',
        upgradeAuthority: authority.publicKey.toBase58(),
        chunksTotal: 0,
        chunksWritten: 0,
        chunksHeld: 0,
        signature: null,
        slot: Number(existing.slot),
        lamportsSpent: 0,
        transactions: 0,
        seconds: (Date.now() - started) / 1000,
      };
    }
  }
  const maxDataLen = input.maxDataLen ?? so.length * 2;
  if (maxDataLen < so.length) {
    throw new DeployError(`--max-len ${maxDataLen} is smaller than the program (${so.length} bytes)`);
  }
  const keys: DeployKeys = {
    payer,
    authority,
    buffer: input.buffer,
    programId,
    programKeypair: existing ? null : input.programKeypair,
  };
  const buffer = await readBuffer(conn, input.buffer.publicKey, authority.publicKey, so.length);
  const plan = await makePlan(conn, keys, so, existing, buffer, maxDataLen);
  for (const line of describePlan(plan, keys, startBalance)) input.say(line);
  if (startBalance < plan.cost.needed) {
    throw new DeployError(
      `the payer ${payer.publicKey.toBase58()} needs ${sol(plan.cost.needed)} SOL, has ${sol(startBalance)} SOL ` +
        `(short by ${sol(plan.cost.needed - startBalance)} SOL); nothing was sent`,
    );
  }
  if (!(await input.confirm(plan))) throw new DeployError('stopped before sending anything');
  try {
    return await execute(input, plan, base, startBalance, started);
  } catch (err) {
    const resume = `buffer ${base.buffer} keeps what was written: run the same command again to resume`;
    throw new DeployError(`${(err as Error).message}\n${resume}`);
  }
}

async function execute(
  input: DeployInput,
  plan: Plan,
  base: Pick<DeployResult, 'programId' | 'programData' | 'buffer' | 'sha256' | 'size'>,
  startBalance: number,
  started: number,
): Promise<DeployResult> {
  const conn = input.connection;
  const { so, payer, authority, programId } = input;
  const id = base.programId;

  const send = (specs: TxSpec[], onConfirmed?: (i: number) => void) =>
    sendAll(specs, {
      connection: conn,
      payer,
      window: input.window ?? 8,
      ...(input.pollMs ? { pollMs: input.pollMs } : {}),
      ...(onConfirmed ? { onConfirmed } : {}),
    });
  // Setup and finish transactions depend on each other: one at a time, in order.
  for (const spec of plan.setup) await send([spec]);

  const held = plan.chunksTotal - plan.offsets.length;
  let written = 0;
  input.progress(held, plan.chunksTotal);
  const writes = plan.offsets.map((at) => ({
    label: `Write at offset ${at}`,
    ixs: [write(input.buffer.publicKey, authority.publicKey, at, so.subarray(at, at + plan.chunkSize))],
    signers: [authority],
  }));
  await send(writes, () => input.progress(held + ++written, plan.chunksTotal));

  // The buffer must hold exactly this build before it becomes the program.
  const filled = await readBuffer(conn, input.buffer.publicKey, authority.publicKey, so.length);
  if (filled.kind !== 'resume' || !sameBytes(filled.bytes, so)) {
    throw new DeployError(`buffer ${base.buffer} does not hold the program after the writes`);
  }
  let signature: string | null = null;
  for (const spec of plan.finish) {
    // The loader refuses to extend or upgrade a program in the slot it last changed.
    if (plan.action === 'upgrade') await waitPastDeploySlot(conn, programId);
    [signature = null] = await send([spec]);
  }

  const landed = await readProgram(conn, programId);
  if (!landed?.elf || !sameBytes(landed.elf, so)) {
    throw new DeployError(
      `the ${plan.action} of ${id} was confirmed but the program does not hold this build`,
    );
  }
  const leftover = await readAccount(conn, input.buffer.publicKey);
  if (leftover) input.say(`note: buffer ${base.buffer} still exists after the ${plan.action}`);
  const endBalance = await balanceOf(conn, payer.publicKey);
  return {
    ...base,
    action: plan.action === 'deploy' ? 'deployed' : 'upgraded',
    upgradeAuthority: authority.publicKey.toBase58(),
    chunksTotal: plan.chunksTotal,
    chunksWritten: plan.offsets.length,
    chunksHeld: held,
    signature,
    slot: Number(landed.slot),
    lamportsSpent: startBalance - endBalance,
    transactions: plan.setup.length + plan.offsets.length + plan.finish.length,
    seconds: (Date.now() - started) / 1000,
  };
}
