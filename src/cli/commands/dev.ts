// `sealpost dev`: the local stack for development and trying things out.
import type { Command } from 'commander';
import { formatSummary, startDevStack } from '../../dev/dev-stack.ts';
import { createLogger } from '../../log.ts';
import { type Listen, parseListen } from '../common.ts';
import { waitForStop } from '../wait-for-stop.ts';

export function register(program: Command): void {
  program
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
    .action(async (opts: { dataDir: string; listen?: Listen; slotMs?: number; randomPorts?: boolean }) => {
      const stack = await startDevStack({
        dataDir: opts.dataDir,
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
}
