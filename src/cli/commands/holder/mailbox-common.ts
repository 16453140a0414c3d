// Options and helpers every `sealpost mailbox …` command shares: where the
// chain is (--config, --rpc, --program-id), option parsers, which wallet a
// command acts for, and chain reads that name the node in their errors.
import { type Command, InvalidArgumentError } from 'commander';
import { DEFAULT_PROGRAM_ID } from '../../../../chain/client/program-id.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { CliError, CONFIG_OPTION_HELP, EXIT_USAGE, loadCliConfig } from '../../common.ts';
import { addressOption as keyOption, RPC_FLAGS, RPC_MONIKER_HELP, rpcOption } from '../../options.ts';

export { addressOption as keyOption, intOption, urlOption } from '../../options.ts';

export const DEV_RPC = 'http://127.0.0.1:8899';
export const DEV_GATEWAY = 'http://127.0.0.1:8183';
export const LAMPORTS_PER_SOL = 1_000_000_000n;

export interface ChainOptions {
  config?: string;
  rpc?: string;
  programId?: string;
  wallet?: string;
  key?: string;
  json?: boolean;
}

export function indexOption(value: string): bigint {
  if (!/^\d{1,20}$/.test(value))
    throw new InvalidArgumentError(`expected a message index (0, 1, …), got "${value}"`);
  return BigInt(value);
}

export function addChainOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', `take rpc, program id and gateway from this ${CONFIG_OPTION_HELP}`)
    .option(RPC_FLAGS, `chain JSON-RPC URL (default: config, else ${DEV_RPC})${RPC_MONIKER_HELP}`, rpcOption)
    .option(
      '--program-id <base58>',
      `mail program id (default: config, else ${DEFAULT_PROGRAM_ID})`,
      keyOption('program id'),
    )
    .option('--json', 'print the result as JSON on stdout');
}

export function settings(opts: ChainOptions & { gateway?: string }) {
  const loaded = loadCliConfig({ config: opts.config });
  // With no config file, the dev stack's default addresses below apply.
  const config = loaded.configFile !== null ? loaded.config : null;
  return {
    rpc: opts.rpc ?? config?.chain.rpc_url ?? DEV_RPC,
    programId: opts.programId ?? config?.chain.program_id ?? DEFAULT_PROGRAM_ID,
    gateway: (opts.gateway ?? config?.ipfs.gateway_url ?? DEV_GATEWAY).replace(/\/+$/, ''),
    /** The config as loaded (built-in defaults when there is no file), for the account API's address. */
    config: loaded.config,
  };
}

/** Chain reads fail with web3.js's wording; say which node could not be read. */
export async function chainRead<T>(rpc: string, what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new CliError(`could not read ${what} from the chain at ${rpc}: ${(err as Error).message}`);
  }
}

export function walletOf(opts: ChainOptions): string | undefined {
  if (opts.key) {
    const address = readKeypairFile(opts.key).address;
    if (opts.wallet && opts.wallet !== address) {
      throw new CliError(
        `--wallet ${opts.wallet} is not the wallet of --key ${opts.key} (${address})`,
        EXIT_USAGE,
      );
    }
    return address;
  }
  return opts.wallet;
}

export const isoSeconds = (secs: bigint) => new Date(Number(secs) * 1000).toISOString();

export function sol(lamports: bigint): string {
  const frac = (lamports % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  return `${lamports / LAMPORTS_PER_SOL}${frac ? `.${frac}` : ''}`;
}
