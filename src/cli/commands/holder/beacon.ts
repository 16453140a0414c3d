// `sealpost beacon`: participant beacons on chain (docs/protocol.md,
// "Participant beacons"): list them by tag, publish or update one's own
// (tags and the CID of an encrypted profile blob), close it.
import { type Command, InvalidArgumentError } from 'commander';
import { beaconDetailCid } from '../../../../chain/client/accounts/index.ts';
import { getBeacon, listBeacons } from '../../../../chain/client/client.ts';
import {
  beaconTagBits,
  beaconTagList,
  closeBeaconInstruction,
  publishBeaconInstruction,
} from '../../../../chain/client/instructions.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { addChainOptions, type ChainOpts, chainOf, send } from '../chain-cli.ts';
import { intOption, loadKeypair } from '../operate/program-common.ts';

function tagsOption(value: string): number[] {
  const tags = value.split(',').map((t) => t.trim());
  if (tags.some((t) => !/^\d+$/.test(t) || Number(t) > 63))
    throw new InvalidArgumentError(`expected tag numbers 0..63 separated by commas, got "${value}"`);
  return [...new Set(tags.map(Number))].sort((a, b) => a - b);
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
