// `sealpost devnet`: only the local chain node (JSON-RPC + PubSub WebSocket),
// state under <data-dir>/devnet. Stops cleanly on SIGINT/SIGTERM, persisting
// the open slot and a snapshot before exiting.
import { join } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { type FidelityOptions, parseFidelitySpec, startDevnet } from '../../../../chain/devnet/server.ts';
import { createLogger } from '../../../core/log.ts';
import { addServerOptions, CliError, EXIT_USAGE, type Listen, loadCliConfig } from '../../common.ts';
import { waitForStop } from '../../wait-for-stop.ts';

const DEFAULT_LISTEN: Listen = { host: '127.0.0.1', port: 8899 };

function parseSlotMs(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 10 || n > 60_000) {
    throw new InvalidArgumentError(`expected an integer number of milliseconds in 10..60000, got "${value}"`);
  }
  return n;
}

/** `--fidelity <spec>` (docs/devnet.md "Fidelity mode"). */
export function parseFidelityOption(value: string): FidelityOptions {
  try {
    return parseFidelitySpec(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function describeFidelity(f: FidelityOptions): string {
  return Object.entries(f)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

export function register(program: Command): void {
  const cmd = program
    .command('devnet')
    .description('run the local Solana JSON-RPC node with the mail program (WebSocket on the next port)');
  addServerOptions(cmd, { listen: 'JSON-RPC address (default 127.0.0.1:8899; WebSocket on port + 1)' })
    .option('--slot-ms <n>', 'slot time in milliseconds (default 400)', parseSlotMs)
    .option(
      '--fidelity <spec>',
      'answer like a mainnet provider: mainnet, or switches lag=N[:P],drop=F,min-fee=N,rps=N[:S],gpa=ok|refuse|slow[:MS],commitment,agave (docs/devnet.md)',
      parseFidelityOption,
    )
    .action(
      async (opts: {
        config?: string;
        dataDir?: string;
        listen: Listen[];
        slotMs?: number;
        fidelity?: FidelityOptions;
      }) => {
        if (opts.listen.length > 1)
          throw new CliError('devnet takes one --listen (the WebSocket uses port + 1)', EXIT_USAGE);
        const { config } = loadCliConfig(opts);
        const listen = opts.listen[0] ?? DEFAULT_LISTEN;
        const logger = createLogger({ name: 'devnet', level: config.log.level, format: config.log.format });
        const devnet = await startDevnet({
          dataDir: join(config.store.data_dir, 'devnet'),
          host: listen.host,
          port: listen.port,
          programId: config.chain.program_id,
          slotMs: opts.slotMs,
          logger,
          fidelity: opts.fidelity,
        });
        process.stdout.write(
          `devnet\n  JSON-RPC   ${devnet.rpcUrl}\n  WebSocket  ${devnet.wsUrl}\n  program id ${devnet.programId}\n` +
            `  faucet     ${devnet.faucetKeypair.publicKey.toBase58()} (the program's upgrade authority; keypair ${devnet.faucetKeypairFile})\n` +
            (opts.fidelity ? `  fidelity   ${describeFidelity(opts.fidelity)}\n` : ''),
        );
        await waitForStop();
        logger.info('shutting down');
        await devnet.close();
      },
    );
}
