// What the on-chain record commands (`sealpost beacon`, `sealpost market`)
// share: the chain options (--config, --rpc, --program-id), the connection
// they name, and sending one instruction signed and paid by a key file, a
// program refusal becoming one CLI line.

import { type Connection, type Keypair, Transaction, type TransactionInstruction } from '@solana/web3.js';
import type { Command } from 'commander';
import { parseMailProgramError } from '../../../chain/client/errors.ts';
import { sendSigned } from '../../../chain/client/rebroadcast.ts';
import { confirmSignature } from '../../core/chain-rpc.ts';
import { CliError, loadCliConfig } from '../common.ts';
import {
  addPriorityFeeOptions,
  budgetInstructions,
  type PriorityFeeOptions,
  priorityPolicyOf,
  usePriorityFee,
} from '../priority-fee.ts';
import { addressOption, connect, RPC_FLAGS, RPC_MONIKER_HELP, rpcOption } from './operate/program-common.ts';

export interface ChainOpts extends PriorityFeeOptions {
  config?: string;
  rpc?: string;
  programId?: string;
}

export async function chainOf(opts: ChainOpts): Promise<{ conn: Connection; programId: string }> {
  const { config } = loadCliConfig(opts);
  const conn = usePriorityFee(
    await connect(opts.rpc ?? config.chain.rpc_url),
    priorityPolicyOf(opts, config.chain),
  );
  return { conn, programId: opts.programId ?? config.chain.program_id };
}

/**
 * Signs `ix` with `signers` (the first pays the fee), behind the compute
 * budget (limit and price: ../priority-fee.ts, the policy registered on
 * `conn`), sends it and waits for `confirmed`; throws the RPC's error or the
 * failed status as they come, for the caller to word.
 */
export async function signAndConfirm(
  conn: Connection,
  signers: Keypair[],
  ix: TransactionInstruction,
): Promise<string> {
  const latest = await conn.getLatestBlockhash('confirmed');
  const payer = signers[0]?.publicKey;
  if (!payer) throw new Error('signAndConfirm: no signer');
  const budget = await budgetInstructions(conn, [ix], payer);
  const tx = new Transaction({ feePayer: payer, ...latest }).add(...budget.instructions);
  tx.sign(...signers);
  const wire = tx.serialize();
  const signature = await sendSigned(conn, wire, { preflightCommitment: 'confirmed' });
  // Polled at slot cadence, never over the WebSocket alone; the same bytes re-sent every 2 s while unseen.
  const value = await confirmSignature(conn, { signature, ...latest, wire }, 'confirmed');
  if (value.err) throw value;
  return signature;
}

/**
 * Sends one instruction paid and signed by `key` (and co-signed by `also`);
 * a program refusal becomes one CLI line.
 */
export async function send(
  conn: Connection,
  key: Keypair,
  ix: TransactionInstruction,
  what: string,
  also: Keypair[] = [],
): Promise<string> {
  try {
    return await signAndConfirm(conn, [key, ...also.filter((k) => !k.publicKey.equals(key.publicKey))], ix);
  } catch (err) {
    const refused = parseMailProgramError(err);
    if (refused) throw new CliError(`${what} refused by the mail program: ${refused.name} (${refused.code})`);
    throw new CliError(`${what} failed: ${(err as Error).message ?? JSON.stringify(err)}`);
  }
}

/** Prints a command's outcome: one line, or with --json one object (with the signature). */
export function report(opts: { json?: boolean }, line: string, fields: Record<string, unknown>): void {
  process.stdout.write(opts.json ? `${JSON.stringify(fields, null, 2)}\n` : `${line}\n`);
}

/** A command signed by one key file (`--key`), with `--json` and the chain options. */
export function keyCommand(cmd: Command, description: string, keyHelp: string): Command {
  return addChainOptions(
    cmd
      .description(description)
      .requiredOption('-k, --key <file>', keyHelp)
      .option('--json', 'print the outcome as JSON'),
  );
}

export function addChainOptions(cmd: Command): Command {
  return addPriorityFeeOptions(cmd)
    .option('--config <file>', 'config file (for [chain] rpc_url and program_id)')
    .option(RPC_FLAGS, `JSON-RPC URL (default [chain] rpc_url)${RPC_MONIKER_HELP}`, rpcOption)
    .option(
      '--program-id <base58>',
      'mail program (default [chain] program_id)',
      addressOption('program id'),
    );
}
