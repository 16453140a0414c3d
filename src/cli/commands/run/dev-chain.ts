// `sealpost dev airdrop|balance`: fund a wallet on the dev stack's chain and
// read its balance. Where the chain is comes from <data-dir>/dev.json, which
// `sealpost dev` writes when it is up; airdrops go only to dev's own devnet
// (requestAirdrop is a devnet's faucet), never to a chain `sealpost dev
// --rpc` was pointed at.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Connection, PublicKey } from '@solana/web3.js';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { isBase58Key } from '../../../../chain/client/index.ts';
import { sol } from '../../../../chain/program/deploy/plan.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import type { DevSummary } from '../../../run/dev/dev-stack.ts';
import { CliError, cliConnection, EXIT_USAGE } from '../../common.ts';
import { solOption } from '../../options.ts';

/** What `sealpost dev` names its own chain in dev.json's components. */
const OWN_DEVNET = 'devnet (chain JSON-RPC)';
const EXTERNAL_CHAIN = 'chain JSON-RPC (external)';
const DEFAULT_AIRDROP_LAMPORTS = 10_000_000_000n;

interface DevChain {
  rpcUrl: string;
  own: boolean;
  devJson: string;
}

/** The chain of the dev stack whose data directory is `dataDir`, from its dev.json. */
export function devChainOf(dataDir: string): DevChain {
  const devJson = join(resolve(dataDir), 'dev.json');
  let summary: DevSummary;
  try {
    summary = JSON.parse(readFileSync(devJson, 'utf8')) as DevSummary;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(
      code === 'ENOENT'
        ? `no dev stack in ${resolve(dataDir)}: ${devJson} does not exist (start one with \`sealpost dev\`, or pass --data-dir)`
        : `${devJson} is unreadable: ${(err as Error).message}`,
    );
  }
  const rpcUrl = summary.chain?.rpc_url;
  if (typeof rpcUrl !== 'string') throw new CliError(`${devJson} names no chain (chain.rpc_url)`);
  const names = (summary.components ?? []).map((c) => c.name);
  const own = names.includes(OWN_DEVNET) && !names.includes(EXTERNAL_CHAIN);
  return { rpcUrl, own, devJson };
}

/** An address, or the address of a Solana CLI keypair file. */
function walletArgument(value: string): PublicKey {
  if (isBase58Key(value)) return new PublicKey(value);
  if (existsSync(value)) {
    try {
      return new PublicKey(readKeypairFile(value).publicKey);
    } catch (err) {
      throw new InvalidArgumentError(`${value} is not a keypair file: ${(err as Error).message}`);
    }
  }
  throw new InvalidArgumentError(`expected a base58 address or a keypair file, got "${value}"`);
}

async function reachable<T>(chain: DevChain, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new CliError(
      `${what} at ${chain.rpcUrl} failed: ${(err as Error).message} (is \`sealpost dev\` running? ${chain.devJson} names that chain)`,
    );
  }
}

async function balance(conn: Connection, chain: DevChain, address: PublicKey): Promise<number> {
  return reachable(chain, 'reading the balance', () => conn.getBalance(address, 'confirmed'));
}

/**
 * --data-dir of `dev airdrop|balance`: `sealpost dev` has the option too, and
 * commander gives it the value wherever it stands on the command line.
 */
function dataDirOf(cmd: Command): string {
  const parent = cmd.parent;
  if (cmd.getOptionValueSource('dataDir') !== 'cli' && parent?.getOptionValueSource('dataDir') === 'cli')
    return parent.opts().dataDir as string;
  return cmd.opts().dataDir as string;
}

interface DevChainOpts {
  sol?: bigint;
  json?: boolean;
}

export function registerDevChain(dev: Command): void {
  dev
    .command('airdrop')
    .description("fund a wallet from dev's own devnet faucet (requestAirdrop); refused on any other chain")
    .argument('<address>', 'the wallet: a base58 address or a keypair file', walletArgument)
    .option('--data-dir <dir>', 'the dev stack (its dev.json names the chain)', '.data')
    .addOption(
      // A bigint default carries its own text: help would JSON.stringify it otherwise.
      new Option('--sol <amount>', 'SOL to airdrop')
        .argParser(solOption)
        .default(DEFAULT_AIRDROP_LAMPORTS, '10'),
    )
    .option('--json', 'print the result as JSON on stdout')
    .action(async (address: PublicKey, opts: DevChainOpts, cmd: Command) => {
      const dataDir = dataDirOf(cmd);
      const chain = devChainOf(dataDir);
      if (!chain.own) {
        throw new CliError(
          `the dev stack in ${resolve(dataDir)} runs against an external chain (${chain.rpcUrl}, \`sealpost dev --rpc\`): ` +
            'airdrop funds wallets only on dev’s own devnet; fund it from that chain’s faucet or a funded wallet',
        );
      }
      const lamports = opts.sol ?? DEFAULT_AIRDROP_LAMPORTS;
      if (lamports === 0n) throw new CliError('--sol must be more than 0', EXIT_USAGE);
      if (lamports > BigInt(Number.MAX_SAFE_INTEGER))
        throw new CliError(`--sol ${sol(Number(lamports))} is more than one airdrop can carry`, EXIT_USAGE);
      const conn = cliConnection(chain.rpcUrl);
      const signature = await reachable(chain, 'the airdrop', async () => {
        const sig = await conn.requestAirdrop(address, Number(lamports));
        const latest = await conn.getLatestBlockhash('confirmed');
        const { value } = await conn.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
        if (value.err) throw new Error(`the airdrop transaction ${sig} failed: ${JSON.stringify(value.err)}`);
        return sig;
      });
      const after = await balance(conn, chain, address);
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ address: address.toBase58(), airdropped_lamports: lamports.toString(), balance_lamports: after, signature, rpc_url: chain.rpcUrl }, null, 2)}\n`,
        );
        return;
      }
      process.stdout.write(
        `airdropped ${sol(Number(lamports))} SOL to ${address.toBase58()}: balance ${sol(after)} SOL (${signature})\n`,
      );
    });

  dev
    .command('balance')
    .description("a wallet's balance on the dev stack's chain")
    .argument('<address>', 'the wallet: a base58 address or a keypair file', walletArgument)
    .option('--data-dir <dir>', 'the dev stack (its dev.json names the chain)', '.data')
    .option('--json', 'print the result as JSON on stdout')
    .action(async (address: PublicKey, opts: DevChainOpts, cmd: Command) => {
      const chain = devChainOf(dataDirOf(cmd));
      const lamports = await balance(cliConnection(chain.rpcUrl), chain, address);
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ address: address.toBase58(), balance_lamports: lamports, rpc_url: chain.rpcUrl }, null, 2)}\n`,
        );
        return;
      }
      process.stdout.write(`${sol(lamports)} SOL (${lamports} lamports)\n`);
    });
}
