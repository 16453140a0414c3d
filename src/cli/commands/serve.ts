// `sealpost serve` (SMTP listeners, API, pipeline workers) and `sealpost
// worker` (only the workers; run many to scale out). Both stop on SIGINT/
// SIGTERM: listeners stop accepting and drain, workers finish running jobs.
import type { Command } from 'commander';
import { createLogger } from '../../log.ts';
import { startServe } from '../../serve/serve.ts';
import { addServerOptions, type Listen, loadCliConfig, parseListen } from '../common.ts';

function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

interface WorkerCliOptions {
  config?: string;
  dataDir?: string;
  concurrency?: number;
  metricsListen?: Listen;
}

interface ServeCliOptions {
  config?: string;
  dataDir?: string;
  listen: Listen[];
  workers: boolean;
  apiListen?: Listen;
  imapListen?: Listen;
  pop3Listen?: Listen;
}

export function register(program: Command): void {
  const serve = program
    .command('serve')
    .description('run the MX and submission listeners, the account API and the pipeline workers')
    .addHelpText(
      'after',
      '\nEach --listen replaces the address of the [[smtp.listeners]] entry at the same position.\n' +
        'Example:\n  sealpost serve --config /etc/sealpost/sealpost.toml\n  sealpost serve --listen 127.0.0.1:2525',
    );
  addServerOptions(serve, { listen: 'listener address, in [[smtp.listeners]] order (repeatable)' })
    .option('--no-workers', 'do not run the pipeline workers in this process (run `sealpost worker` instead)')
    .option('--api-listen <host:port>', 'account API address, overriding [api] host and port', parseListen)
    .option(
      '--imap-listen <host:port>',
      'IMAP (implicit TLS) address, overriding [imap] host and port',
      parseListen,
    )
    .option(
      '--pop3-listen <host:port>',
      'POP3 (implicit TLS) address, overriding [pop3] host and port',
      parseListen,
    )
    .action(async (opts: ServeCliOptions) => {
      const { config } = loadCliConfig(opts);
      const logger = createLogger({ name: 'serve', level: config.log.level, format: config.log.format });
      const running = await startServe({
        config,
        logger,
        components: { smtp: true, workers: opts.workers, api: true },
        listenerOverrides: opts.listen,
        apiListen: opts.apiListen,
        mailAccess: { imapListen: opts.imapListen, pop3Listen: opts.pop3Listen },
      });
      for (const l of running.listeners)
        process.stdout.write(`${l.name} (${l.mode}) listening on ${l.host}:${l.port}\n`);
      for (const l of running.mailAccessListeners ?? [])
        process.stdout.write(`${l.name} listening on ${l.host}:${l.port}\n`);
      if (running.apiUrl) process.stdout.write(`account API on ${running.apiUrl}\n`);
      process.stdout.write(`pipeline workers: ${running.workers ? 'running' : 'not in this process'}\n`);
      const signal = await waitForSignal();
      logger.info({ signal }, 'shutting down');
      await running.close();
    });

  const worker = program
    .command('worker')
    .description('run only the pipeline workers (deliveries, pins, cleanup); start several to scale out')
    .addHelpText(
      'after',
      '\nExample:\n  sealpost worker --config /etc/sealpost/sealpost.toml --concurrency 64 --metrics-listen 0.0.0.0:9464',
    );
  addServerOptions(worker, { listen: false })
    .option(
      '--concurrency <n>',
      'deliveries processed at once by this process (default 128; at most 32 of them seal at once)',
      (v) => Number.parseInt(v, 10),
    )
    .option(
      '--metrics-listen <host:port>',
      'serve GET /metrics (admin token) and GET /health at this address (docs/operations.md)',
      parseListen,
    )
    .action(async (opts: WorkerCliOptions) => {
      const { config } = loadCliConfig(opts);
      const logger = createLogger({ name: 'worker', level: config.log.level, format: config.log.format });
      const running = await startServe({
        config,
        logger,
        components: { smtp: false, workers: true },
        workerConcurrency: opts.concurrency,
        metricsListen: opts.metricsListen,
      });
      if (running.metricsUrl) process.stdout.write(`metrics listening on ${running.metricsUrl}/metrics\n`);
      process.stdout.write('pipeline workers running\n');
      const signal = await waitForSignal();
      logger.info({ signal }, 'shutting down');
      await running.close();
    });
}
