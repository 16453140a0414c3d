// `sealpost serve` (SMTP listeners, API, pipeline workers) and `sealpost
// worker` (only the workers; run many to scale out). Both stop on SIGINT/
// SIGTERM: listeners stop accepting and drain, workers finish running jobs.
// serve runs `--workers N` serving processes under a supervisor
// (src/run/serve/cluster.ts); with N = 1 it is one process, no cluster. serve
// reloads on SIGHUP (src/run/serve/reload.ts): the config file is read again and
// the certificates, admin token and reloadable keys are swapped in; the pid
// file and the reload status file (src/run/serve/pid-file.ts) let `sealpost
// reload` send the signal and report the outcome.
import cluster from 'node:cluster';
import { type Command, InvalidArgumentError } from 'commander';
import { type Config, loadConfig, parseConfig } from '../../../core/config/index.ts';
import { MAX_SERVE_WORKERS } from '../../../core/config/sections/runtime.ts';
import { createLogger } from '../../../core/log.ts';
import {
  answerReloads,
  clusterMetricsSource,
  reportReady,
  runServePrimary,
  serveProcessCount,
  serveSlot,
} from '../../../run/serve/cluster.ts';
import { PID_FILE_NAME, ServePidFile, servePidFilePath } from '../../../run/serve/pid-file.ts';
import { loadServeKeys, type Serving, startServe } from '../../../run/serve/serve.ts';
import { addServerOptions, type Listen, loadCliConfig, parseListen } from '../../common.ts';
import { waitForStop } from '../../wait-for-stop.ts';

function parseProcesses(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > MAX_SERVE_WORKERS)
    throw new InvalidArgumentError(
      `expected 0 (one per core) or a process count up to ${MAX_SERVE_WORKERS}, got "${value}"`,
    );
  return n;
}

/** What serve prints once it listens (by the supervisor, once, with --workers N). */
function readyText(running: Serving): string {
  const lines: string[] = [];
  for (const l of running.listeners) lines.push(`${l.name} (${l.mode}) listening on ${l.host}:${l.port}`);
  for (const l of running.mailAccessListeners ?? []) lines.push(`${l.name} listening on ${l.host}:${l.port}`);
  if (running.apiUrl) lines.push(`account API on ${running.apiUrl}`);
  lines.push(`pipeline workers: ${running.workers ? 'running' : 'not in this process'}`);
  return `${lines.join('\n')}\n`;
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
  apiListen?: Listen;
  imapListen?: Listen;
  pop3Listen?: Listen;
  pidFile?: string;
}

/** Reads the config serve started with again: the same file (or the defaults) and --data-dir. */
function configRereader(configFile: string | null, dataDir: string | undefined): () => Config {
  return () =>
    configFile === null
      ? parseConfig('', { dataDirOverride: dataDir, source: '<defaults>' })
      : loadConfig(configFile, { dataDirOverride: dataDir });
}

export function register(program: Command): void {
  const serve = program
    .command('serve')
    .description('run the MX and submission listeners, the account API and the pipeline workers')
    .addHelpText(
      'after',
      '\nEach --listen replaces the address of the [[smtp.listeners]] entry at the same position.\n' +
        'SIGHUP (or `sealpost reload`) re-reads the certificates, the admin token and the reloadable\n' +
        'config keys without dropping sessions; docs/config.md "Reload" lists what needs a restart.\n' +
        'Example:\n  sealpost serve --config /etc/sealpost/sealpost.toml\n  sealpost serve --listen 127.0.0.1:2525',
    );
  // `--workers N` (processes) and `--no-workers` (no pipeline workers) share commander's
  // attribute name, so each is read from its own option event.
  let processesOption: number | undefined;
  let pipelineWorkers = true;
  serve.on('option:workers', (value: number) => {
    processesOption = value;
  });
  serve.on('option:no-workers', () => {
    pipelineWorkers = false;
  });
  addServerOptions(serve, { listen: 'listener address, in [[smtp.listeners]] order (repeatable)' })
    .option(
      '--workers <n>',
      'serving processes sharing the listeners, each with its own pipeline workers (default [serve] workers: one per core; 1: a single process)',
      parseProcesses,
    )
    .option('--no-workers', 'do not run the pipeline workers in serve (run `sealpost worker` instead)')
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
    .option(
      '--pid-file <file>',
      `where serve writes its process id while it runs, for \`sealpost reload\` (default <data_dir>/${PID_FILE_NAME})`,
    )
    .action(async (opts: ServeCliOptions) => {
      const { config, configFile } = loadCliConfig(opts);
      const reread = configRereader(configFile, opts.dataDir);
      const base = createLogger({ name: 'serve', level: config.log.level, format: config.log.format });
      const processes = serveProcessCount(processesOption ?? config.serve.workers);
      const pidFile = new ServePidFile(
        servePidFilePath(opts.pidFile, config.store.data_dir),
        base.child({ component: 'reload' }),
      );
      if (cluster.isPrimary && processes > 1) {
        // A key file every process would fail to read stops serve here, before any fork.
        loadServeKeys(config);
        const stopTimeoutMs = (config.smtp.timeouts.shutdown_drain_secs + 60) * 1000;
        try {
          process.exitCode = await runServePrimary({
            processes,
            logger: base.child({ component: 'supervisor' }),
            stopTimeoutMs,
            maxStartFailures: config.serve.start_attempts,
            onReady: (text) => {
              pidFile.claim(processes);
              process.stdout.write(
                `${text}serve: ${processes} serving processes (supervisor pid ${process.pid})\n`,
              );
            },
            // The supervisor's own lines follow [log] level too; the processes report any config problem.
            onSighup: () => {
              try {
                base.level = reread().log.level;
              } catch {
                // Reported by every serving process.
              }
            },
            onReload: (report, n) => pidFile.record(report, n),
          });
        } finally {
          pidFile.release();
        }
        return;
      }
      const slot = serveSlot();
      const logger = slot === undefined ? base : base.child({ slot });
      let running: Serving | undefined;
      // Installed before anything starts: SIGHUP's default would end the process. One
      // arriving during start-up is run once serve is up (the files are read then anyway).
      // Once stopping, SIGHUP is ignored (not fatal) so the drain is never cut short.
      let reloadPending = false;
      let stopping = false;
      const reload = () => {
        if (stopping) return;
        if (!running) {
          reloadPending = true;
          return;
        }
        const report = running.reload(reread);
        // A forked process's report goes to the supervisor, which writes the status file.
        if (slot === undefined) pidFile.record(report, 1);
      };
      process.on('SIGHUP', reload);
      try {
        running = await startServe({
          config,
          logger,
          components: { smtp: true, workers: pipelineWorkers, api: true },
          listenerOverrides: opts.listen,
          apiListen: opts.apiListen,
          mailAccess: { imapListen: opts.imapListen, pop3Listen: opts.pop3Listen },
          // Once-per-deployment parts run in slot 0 (or in the one process).
          singletons: slot === undefined || slot === 0,
          metricsSource: slot === undefined ? undefined : (own) => clusterMetricsSource(own),
        });
      } catch (err) {
        if (slot === undefined) throw err;
        // A forked process ends here (its IPC channel would keep it alive); the supervisor counts the failure.
        logger.error({ err: (err as Error).message }, 'this serving process could not start');
        process.exit(1);
      }
      const serving = running;
      if (slot === undefined) {
        pidFile.claim(1);
        process.stdout.write(readyText(running));
      } else {
        answerReloads(() => serving.reload(reread));
        reportReady(readyText(running));
      }
      if (reloadPending) reload();
      const reason = await waitForStop();
      logger.info({ signal: reason }, 'shutting down');
      stopping = true;
      await running.close();
      pidFile.release();
      // A forked process's IPC channel would keep it alive: leave now that everything is closed.
      if (slot !== undefined) cluster.worker?.disconnect();
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
      const signal = await waitForStop();
      logger.info({ signal }, 'shutting down');
      await running.close();
    });
}
