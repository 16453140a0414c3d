// Helpers the `sealpost program …` commands share: option parsers, keypair
// files named in errors, a connection that proves the RPC answers, and
// deploy refusals turned into CLI errors.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Connection, Keypair, type PublicKey } from '@solana/web3.js';
import { InvalidArgumentError } from 'commander';
import { DeployError, type OnChainProgram, readProgram } from '../../../../chain/program/deploy/onchain.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { CliError, cliConnection } from '../../common.ts';

export {
  addressOption,
  intOption,
  RPC_FLAGS,
  RPC_MONIKER_HELP,
  rpcOption,
  urlOption,
} from '../../options.ts';

/** Lamports: an integer 0..2^64-1. */
export function lamportsOption(value: string): bigint {
  if (!/^\d{1,20}$/.test(value) || BigInt(value) >= 2n ** 64n) {
    throw new InvalidArgumentError(`expected lamports (an integer 0..2^64-1), got "${value}"`);
  }
  return BigInt(value);
}

/** 32 bytes as 64 hex digits. */
export function hex32Option(value: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(value))
    throw new InvalidArgumentError(`expected 64 hex digits (32 bytes), got "${value}"`);
  return new Uint8Array(Buffer.from(value, 'hex'));
}

/** The committed mail program build. */
export const MAIL_PROGRAM_SO = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'chain',
  'program',
  'mail_program.so',
);

/** A Solana CLI keypair file named by `option`; the error names the option and the file. */
export function loadKeypair(option: string, file: string): Keypair {
  try {
    return Keypair.fromSecretKey(readKeypairFile(file).secretKey);
  } catch (err) {
    throw new CliError(`${option}: ${(err as Error).message}`);
  }
}

export function readSo(file: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(file));
  } catch (err) {
    throw new CliError(`--so ${file}: cannot read the program: ${(err as Error).message}`);
  }
}

/** A connection whose first call proves the RPC answers (within 20 s). */
export async function connect(rpc: string): Promise<Connection> {
  const conn = cliConnection(rpc);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer within 20 s')), 20_000);
  });
  try {
    await Promise.race([conn.getVersion(), timeout]);
  } catch (err) {
    throw new CliError(`the RPC at ${rpc} does not answer: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  return conn;
}

/** Runs `fn`, turning deploy refusals into CLI errors (exit 1, message as is). */
export async function cliRun<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DeployError) throw new CliError(err.message);
    throw err;
  }
}

/** The program must be a deployed upgradeable program before anything is sent to it. */
export async function mustBeProgram(conn: Connection, programId: PublicKey): Promise<OnChainProgram> {
  const program = await readProgram(conn, programId);
  if (!program)
    throw new DeployError(`no program at ${programId.toBase58()} on this cluster; deploy it first`);
  return program;
}
