// Helpers every `sealpost` subcommand shares: the server options
// (--config, --data-dir, --listen), config loading, and error reporting
// with stable exit codes (./errors.ts, re-exported here).
import { existsSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { type Config, loadConfig, parseConfig, splitHostPort } from '../config/index.ts';

export { CliError, EXIT_FAILURE, EXIT_USAGE, reportError } from './errors.ts';

export const DEFAULT_CONFIG_FILE = 'sealpost.toml';

export interface Listen {
  host: string;
  port: number;
}

export interface ServerCliOptions {
  /** --config FILE; undefined when not given. */
  config?: string;
  /** --data-dir DIR */
  dataDir?: string;
  /** --listen HOST:PORT, in the order given. */
  listen: Listen[];
}

/**
 * Parses `host:port`, `[v6]:port`. Port 0 is allowed (the OS picks a free
 * port; the command reports the one it got). Throws commander's
 * InvalidArgumentError so option parsing reports it as a usage error.
 */
export function parseListen(value: string): Listen {
  try {
    return splitHostPort(value, undefined, { allowPortZero: true });
  } catch (err) {
    throw new InvalidArgumentError(`${(err as Error).message}, got "${value}"`);
  }
}

export function formatListen(listen: Listen): string {
  return listen.host.includes(':') ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
}

/** Adds --config, --data-dir and (unless `listen: false`) a repeatable --listen. */
export function addServerOptions(cmd: Command, opts: { listen?: false | string } = {}): Command {
  cmd
    .option(
      '--config <file>',
      `config file (default ${DEFAULT_CONFIG_FILE}; built-in defaults when that is absent)`,
    )
    .option('--data-dir <dir>', 'data directory (overrides [store] data_dir)');
  if (opts.listen !== false) {
    cmd.option(
      '--listen <host:port>',
      opts.listen ?? 'listen address (repeatable; overrides the config file)',
      (value: string, prev: Listen[]) => [...prev, parseListen(value)],
      [] as Listen[],
    );
  }
  return cmd;
}

export interface LoadedCliConfig {
  config: Config;
  /** The file read, or null when built-in defaults were used. */
  configFile: string | null;
}

/**
 * The default file may be absent (defaults apply); a file named with
 * --config must exist. Throws ConfigError, which reportError turns into
 * "config error in FILE:" plus one line per issue and exit code 2.
 */
export function loadCliConfig(opts: { config?: string; dataDir?: string }): LoadedCliConfig {
  const explicit = opts.config !== undefined;
  const file = opts.config ?? DEFAULT_CONFIG_FILE;
  if (!explicit && !existsSync(file)) {
    return {
      config: parseConfig('', { dataDirOverride: opts.dataDir, source: '<defaults>' }),
      configFile: null,
    };
  }
  return { config: loadConfig(file, { dataDirOverride: opts.dataDir }), configFile: file };
}
