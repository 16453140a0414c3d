// `sealpost dev`: the local stack for development and trying things out.
import { type Command, InvalidArgumentError } from 'commander';
import type { FidelityOptions } from '../../../../chain/devnet/server.ts';
import { createLogger } from '../../../core/log.ts';
import { formatSummary, startDevStack } from '../../../run/dev/dev-stack.ts';
import { CliError, EXIT_USAGE, type Listen, parseListen } from '../../common.ts';
import { RPC_FLAGS, RPC_MONIKER_HELP, rpcOption } from '../../options.ts';
import { waitForStop } from '../../wait-for-stop.ts';
import { registerDevChain } from './dev-chain.ts';
import { parseFidelityOption } from './devnet.ts';

function urlOf(value: string, schemes: string[]): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`not a URL: "${value}"`);
  }
  if (!schemes.includes(url.protocol)) throw new InvalidArgumentError(`expected ${schemes.join(' or ')} URL`);
  return value;
}
const wsUrl = (v: string) => urlOf(v, ['ws:', 'wss:']);

interface DevCliOptions {
  dataDir: string;
  listen?: Listen;
  slotMs?: number;
  randomPorts?: boolean;
  fidelity?: FidelityOptions;
  rpc?: string;
  ws?: string;
}

export function register(program: Command): void {
  const dev = program
    .command('dev')
    .description(
      'start every component on loopback with generated keys and a chain ready for mail; prints a summary (also <data-dir>/dev.json)',
    )
    .option('--data-dir <dir>', 'where keys, the generated config and all state live', '.data')
    .option('--listen <host:port>', 'devnet JSON-RPC address (WebSocket on the next port)', parseListen)
    .option('--slot-ms <n>', 'devnet slot time in milliseconds', (v) => Number.parseInt(v, 10))
    .option(
      '--random-ports',
      'put every listener (devnet included, unless --listen names it) on an OS-chosen loopback port; the ports are written into the generated config and dev.json',
    )
    .option(
      '--fidelity <spec>',
      'run the devnet in fidelity mode (as `sealpost devnet --fidelity`: mainnet, or lag=N[:P],drop=F,min-fee=N,rps=N[:S],gpa=…,commitment,agave)',
      parseFidelityOption,
    )
    .option(
      RPC_FLAGS,
      `run against this chain (a public devnet or testnet, a proxy) instead of a devnet of its own; it is only checked, never funded or initialized${RPC_MONIKER_HELP}`,
      rpcOption,
    )
    .option('--ws <url>', 'the PubSub URL of --rpc (default derived from it)', wsUrl)
    .action(async (opts: DevCliOptions) => {
      if (opts.ws && !opts.rpc) throw new CliError('--ws needs --rpc', EXIT_USAGE);
      if (opts.fidelity && opts.rpc)
        throw new CliError('--fidelity applies to dev’s own devnet, not to --rpc', EXIT_USAGE);
      if (opts.rpc && opts.listen)
        throw new CliError('--listen is for dev’s own devnet, not --rpc', EXIT_USAGE);
      const stack = await startDevStack({
        dataDir: opts.dataDir,
        fidelity: opts.fidelity,
        rpcUrl: opts.rpc,
        wsUrl: opts.ws,
        rpcHost: opts.listen?.host,
        rpcPort: opts.listen?.port,
        slotMs: opts.slotMs,
        randomPorts: opts.randomPorts,
        // The chain node, the pin daemon and domaind get processes (and cores) of their own.
        childProcesses: true,
        // [log] level of the generated config applies; the format follows the terminal.
        logger: (config) =>
          createLogger({
            name: 'sealpost-dev',
            level: config.log.level,
            format: process.stderr.isTTY ? 'pretty' : 'json',
          }),
      });
      process.stdout.write(formatSummary(stack.summary));
      await waitForStop();
      stack.logger.info('shutting down');
      await stack.close();
    });
  registerDevChain(dev);
}
