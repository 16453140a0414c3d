// `sealpost domaind`: the domain authorization service (POST/GET /domain,
// POST /domain/reclaim),
// the MTA-STS policy and the autoconfig/autodiscover documents. Stops
// cleanly on SIGINT/SIGTERM.
import type { Command } from 'commander';
import { KeypairFileError } from '../../../core/keys/keypair-file.ts';
import { createLogger } from '../../../core/log.ts';
import { startDomaind } from '../../../edge/domaind/server.ts';
import { addServerOptions, CliError, EXIT_USAGE, type Listen, loadCliConfig } from '../../common.ts';
import { waitForStop } from '../../wait-for-stop.ts';

export function register(program: Command): void {
  const cmd = program
    .command('domaind')
    .description(
      'run the domain authorization service, MTA-STS policy and autoconfig host (default 127.0.0.1:8081)',
    );
  addServerOptions(cmd, { listen: 'HTTP address (default [domaind] host:port)' })
    .addHelpText(
      'after',
      '\nExamples:\n  sealpost domaind --config sealpost.toml\n  curl -X POST --data example.org http://127.0.0.1:8081/domain\n  curl "http://127.0.0.1:8081/domain?name=example.org"\n',
    )
    .action(async (opts: { config?: string; dataDir?: string; listen: Listen[] }) => {
      if (opts.listen.length > 1) throw new CliError('domaind takes one --listen', EXIT_USAGE);
      const { config } = loadCliConfig(opts);
      const logger = createLogger({ name: 'domaind', level: config.log.level, format: config.log.format });
      let domaind: Awaited<ReturnType<typeof startDomaind>>;
      try {
        domaind = await startDomaind({
          config,
          logger,
          host: opts.listen[0]?.host,
          port: opts.listen[0]?.port,
        });
      } catch (err) {
        if (err instanceof KeypairFileError) throw new CliError(err.message, EXIT_USAGE);
        throw err;
      }
      process.stdout.write(
        `domaind\n  URL        ${domaind.url}\n  delegate   ${domaind.health.delegate ?? 'not configured (POST /domain and /domain/reclaim answer 503)'}\n  authority  ${domaind.health.authority ?? 'not configured'}\n`,
      );
      await waitForStop();
      logger.info('shutting down');
      await domaind.close();
    });
}
