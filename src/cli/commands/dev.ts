// `sealpost dev`: the local stack for development and trying things out.
import type { Command } from 'commander';
import { formatSummary, startDevStack } from '../../dev/dev-stack.ts';
import { createLogger } from '../../log.ts';
import { type Listen, parseListen } from '../common.ts';

export function register(program: Command): void {
  program
    .command('dev')
    .description(
      'start every component on loopback with generated keys and a chain ready for mail; prints a summary (also <data-dir>/dev.json)',
    )
    .option('--data-dir <dir>', 'where keys, the generated config and all state live', '.data')
    .option('--listen <host:port>', 'devnet JSON-RPC address (WebSocket on the next port)', parseListen)
    .option('--slot-ms <n>', 'devnet slot time in milliseconds', (v) => Number.parseInt(v, 10))
    .option('--random-ports', 'put every other component on an OS-chosen loopback port (see dev.json)')
    .action(async (opts: { dataDir: string; listen?: Listen; slotMs?: number; randomPorts?: boolean }) => {
      const logger = createLogger({ name: 'sealpost-dev', format: process.stderr.isTTY ? 'pretty' : 'json' });
      const stack = await startDevStack({
        dataDir: opts.dataDir,
        rpcHost: opts.listen?.host,
        rpcPort: opts.listen?.port,
        slotMs: opts.slotMs,
        randomPorts: opts.randomPorts,
        logger,
      });
      process.stdout.write(formatSummary(stack.summary));
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      logger.info('shutting down');
      await stack.close();
    });
}
