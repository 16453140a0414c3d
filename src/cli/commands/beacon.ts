// `sealpost beacon`: participant beacons on chain (docs/protocol.md,
// "Participant beacons"): list them by tag, publish or update one's own
// (tags and the CID of an encrypted profile blob), close it.
import { type Connection, type Keypair, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { type Command, InvalidArgumentError } from 'commander';
import { beaconDetailCid } from '../../../chain/accounts/index.ts';
import { getBeacon, listBeacons } from '../../../chain/client.ts';
import { parseMailProgramError } from '../../../chain/errors.ts';
import {
  beaconTagBits,
  beaconTagList,
  closeBeaconInstruction,
  publishBeaconInstruction,
} from '../../../chain/instructions.ts';
import { CliError, EXIT_USAGE, loadCliConfig } from '../common.ts';
import { addressOption, connect, intOption, loadKeypair, urlOption } from './program-common.ts';

export interface ChainOpts {
  config?: string;
  rpc?: string;
  programId?: string;
}

function tagsOption(value: string): number[] {
  const tags = value.split(',').map((t) => t.trim());
  if (tags.some((t) => !/^\d+$/.test(t) || Number(t) > 63))
    throw new InvalidArgumentError(`expected tag numbers 0..63 separated by commas, got "${value}"`);
  return [...new Set(tags.map(Number))].sort((a, b) => a - b);
}

export async function chainOf(opts: ChainOpts): Promise<{ conn: Connection; programId: string }> {
  const { config } = loadCliConfig(opts);
  const conn = await connect(opts.rpc ?? config.chain.rpc_url);
  return { conn, programId: opts.programId ?? config.chain.program_id };
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
    const latest = await conn.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: key.publicKey, ...latest }).add(ix);
    tx.sign(key, ...also.filter((k) => !k.publicKey.equals(key.publicKey)));
    const signature = await conn.sendRawTransaction(tx.serialize(), { preflightCommitment: 'confirmed' });
    const { value } = await conn.confirmTransaction({ signature, ...latest }, 'confirmed');
    if (value.err) throw value;
    return signature;
  } catch (err) {
    const refused = parseMailProgramError(err);
    if (refused) throw new CliError(`${what} refused by the mail program: ${refused.name} (${refused.code})`);
    throw new CliError(`${what} failed: ${(err as Error).message ?? JSON.stringify(err)}`);
  }
}

export function addChainOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'config file (for [chain] rpc_url and program_id)')
    .option('--rpc <url>', 'JSON-RPC URL (default [chain] rpc_url)', urlOption)
    .option(
      '--program-id <base58>',
      'mail program (default [chain] program_id)',
      addressOption('program id'),
    );
}

export function register(program: Command): void {
  const cmd = program.command('beacon').description('participant beacons: list by tag, publish, close');

  addChainOptions(
    cmd
      .command('list')
      .description('list beacons (owner, tags, profile CID), all or those carrying one tag')
      .option('--tag <n>', 'only beacons with this tag (0..63)', intOption(0, 63))
      .option('--json', 'print a JSON array on stdout'),
  ).action(async (opts: ChainOpts & { tag?: number; json?: boolean }) => {
    const { conn, programId } = await chainOf(opts);
    const found = await listBeacons(conn, programId, opts.tag === undefined ? {} : { tag: opts.tag });
    const rows = found.map(({ address, account }) => ({
      owner: account.owner.toBase58(),
      address: address.toBase58(),
      tags: beaconTagList(account.tags),
      cid: beaconDetailCid(account),
      createdAt: Number(account.createdAt),
      updatedAt: Number(account.updatedAt),
    }));
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    for (const r of rows) process.stdout.write(`${r.owner} tags=${r.tags.join(',') || '-'} ${r.cid}\n`);
  });

  addChainOptions(
    cmd
      .command('publish')
      .description("create or update the key's beacon: its tags and the CID of the encrypted profile blob")
      .requiredOption('-k, --key <file>', 'the participant wallet keypair file (signs and pays)')
      .requiredOption('--tags <list>', 'tag numbers 0..63, comma-separated', tagsOption)
      .requiredOption('--cid <cid>', 'CID of the encrypted profile blob (1..96 visible ASCII bytes)'),
  ).action(async (opts: ChainOpts & { key: string; tags: number[]; cid: string }) => {
    if (!/^[\x21-\x7e]{1,96}$/.test(opts.cid))
      throw new CliError(`--cid: expected 1..96 visible ASCII characters, got "${opts.cid}"`, EXIT_USAGE);
    const key = loadKeypair('--key', opts.key);
    const { conn, programId } = await chainOf(opts);
    const ix = publishBeaconInstruction({
      programId,
      owner: key.publicKey,
      tags: beaconTagBits(opts.tags),
      detailCid: opts.cid,
    });
    const signature = await send(conn, key, ix, 'PublishBeacon');
    process.stdout.write(`published the beacon of ${key.publicKey.toBase58()} (${signature})\n`);
  });

  addChainOptions(
    cmd
      .command('close')
      .description("close the key's beacon and take its rent back")
      .requiredOption('-k, --key <file>', 'the participant wallet keypair file'),
  ).action(async (opts: ChainOpts & { key: string }) => {
    const key = loadKeypair('--key', opts.key);
    const { conn, programId } = await chainOf(opts);
    if (!(await getBeacon(conn, programId, key.publicKey)))
      throw new CliError(`${key.publicKey.toBase58()} has no beacon`);
    const signature = await send(
      conn,
      key,
      closeBeaconInstruction({ programId, owner: key.publicKey }),
      'CloseBeacon',
    );
    process.stdout.write(`closed the beacon of ${key.publicKey.toBase58()} (${signature})\n`);
  });
}
