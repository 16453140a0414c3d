// `sealpost reload`: makes a running `sealpost serve` re-read its
// certificates, admin token and reloadable config keys (src/run/serve/reload.ts)
// and reports what it did. It finds serve through the pid file serve writes
// (<data_dir>/serve.pid or --pid-file), sends SIGHUP and waits for the entry
// of the status file beside it that answers the signal. Exit 0 when the
// reload succeeded; 1 when it failed (serve keeps its previous state), when
// no serve runs or when serve does not answer in time.
import { setTimeout as sleep } from 'node:timers/promises';
import { type Command, InvalidArgumentError } from 'commander';
import {
  looksLikeServe,
  PID_FILE_NAME,
  processState,
  type ReloadStatus,
  readPidFile,
  readReloadStatus,
  reloadStatusPath,
  servePidFilePath,
} from '../../../run/serve/pid-file.ts';
import { CliError, CONFIG_OPTION_HELP, loadCliConfig } from '../../common.ts';

interface ReloadCliOptions {
  config?: string;
  dataDir?: string;
  pidFile?: string;
  timeout: number;
  json?: boolean;
}

const HELP_AFTER = `
What reloads and what needs a restart: docs/config.md, "Reload". A reload
that fails changes nothing: serve keeps the certificates, admin token and
config it had, and this command prints why and exits 1. Sending SIGHUP to
serve yourself (kill -HUP, systemctl reload) does the same without waiting
for the outcome; serve logs it either way.

Examples:
  $ sealpost reload --config /etc/sealpost/sealpost.toml
  $ sealpost reload --pid-file /run/sealpost/serve.pid --json
`;

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0 || n > 3600)
    throw new InvalidArgumentError(`expected seconds between 0 and 3600, got "${value}"`);
  return n;
}

/** What the status entry says, as the lines this command prints. */
function describe(status: ReloadStatus): string {
  const lines = [
    `reloaded serve (pid ${status.pid}${status.processes > 1 ? `, ${status.processes} serving processes` : ''})`,
  ];
  const c = status.certificate;
  if (c)
    lines.push(
      `  certificate: ${c.changed ? 'changed' : 'unchanged'}: ${c.subject}, sha256 ${c.fingerprint256}, valid until ${c.valid_to} (${c.cert_file})`,
    );
  if (status.admin_token) lines.push(`  admin token: ${status.admin_token}`);
  lines.push(`  config keys changed: ${status.applied.length ? status.applied.join(', ') : 'none'}`);
  if (status.restart_needed.length)
    lines.push(`  changed but only applied at the next start: ${status.restart_needed.join(', ')}`);
  for (const w of status.warnings) lines.push(`  warning: ${w}`);
  return `${lines.join('\n')}\n`;
}

/** The running serve's pid, or a CliError saying why there is none. */
function runningServe(pidFile: string): number {
  let pid: number | null;
  try {
    pid = readPidFile(pidFile);
  } catch (err) {
    throw new CliError(`no running serve: ${(err as Error).message}`);
  }
  if (pid === null)
    throw new CliError(
      `no running serve: pid file ${pidFile} not found (is \`sealpost serve\` running with this config, or give --pid-file)`,
    );
  const state = processState(pid);
  if (state === 'gone')
    throw new CliError(
      `no running serve: pid file ${pidFile} names process ${pid}, which is not running (a stale pid file: serve did not exit cleanly)`,
    );
  if (state === 'foreign')
    throw new CliError(
      `serve (pid ${pid}, from ${pidFile}) runs as another user: run sealpost reload as that user (or root)`,
    );
  if (looksLikeServe(pid) === false)
    throw new CliError(
      `no running serve: pid file ${pidFile} names process ${pid}, which is not sealpost serve (a stale pid file whose pid was reused)`,
    );
  return pid;
}

export function register(program: Command): void {
  program
    .command('reload')
    .description(
      'make a running `sealpost serve` re-read its certificates, admin token and reloadable config keys (SIGHUP), and report the outcome',
    )
    .option('--config <file>', CONFIG_OPTION_HELP)
    .option('--data-dir <dir>', 'data directory (overrides [store] data_dir), where serve keeps its pid file')
    .option(
      '--pid-file <file>',
      `serve's pid file, as given to \`sealpost serve --pid-file\` (default <data_dir>/${PID_FILE_NAME}; no config is read then)`,
    )
    .option('--timeout <secs>', 'how long to wait for serve to report the reload', parseSeconds, 40)
    .option('--json', 'print the status entry serve wrote for this reload as JSON on stdout')
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: ReloadCliOptions) => {
      const pidFile = opts.pidFile ?? servePidFilePath(undefined, loadCliConfig(opts).config.store.data_dir);
      const pid = runningServe(pidFile);
      const statusFile = reloadStatusPath(pidFile);
      const before = readReloadStatus(statusFile);
      // An entry answers this signal when it is newer than what the file held before it.
      const baseline = before?.pid === pid ? before.seq : 0;
      process.kill(pid, 'SIGHUP');
      const deadline = Date.now() + opts.timeout * 1000;
      let status: ReloadStatus | null = null;
      for (;;) {
        const now = readReloadStatus(statusFile);
        if (now && now.pid === pid && now.event === 'reload' && now.seq > baseline) {
          status = now;
          break;
        }
        if (Date.now() > deadline) break;
        if (processState(pid) === 'gone')
          throw new CliError(`serve (pid ${pid}) ended before it reported the reload`);
        await sleep(100);
      }
      if (!status)
        throw new CliError(
          `serve (pid ${pid}) got SIGHUP but did not report the reload within ${opts.timeout} s (status file ${statusFile}); see its log`,
        );
      if (opts.json) process.stdout.write(`${JSON.stringify(status)}\n`);
      if (!status.ok)
        throw new CliError(
          `reload of serve (pid ${pid}) failed; it keeps its previous certificates, admin token and config:\n${status.errors.map((e) => `  ${e}`).join('\n')}`,
        );
      if (!opts.json) process.stdout.write(describe(status));
    });
}
