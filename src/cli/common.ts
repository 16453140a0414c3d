// Helpers every `sealpost` subcommand shares: the server options
// (--config, --data-dir, --listen), config loading, and error reporting
// with stable exit codes (2: usage or config error, 1: anything else).
import { existsSync } from 'node:fs';
import { type Command, CommanderError, InvalidArgumentError } from 'commander';
import { type Config, ConfigError, loadConfig, parseConfig, splitHostPort } from '../config/index.ts';

export const DEFAULT_CONFIG_FILE = 'sealpost.toml';
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

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

/** An error whose message is meant for the operator as is. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = 'CliError';
  }
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

/** Prints an error the way the CLI reports it and returns the exit code. */
export function reportError(err: unknown, stderr: { write(s: string): unknown } = process.stderr): number {
  if (err instanceof CommanderError) {
    // Commander has already printed its message (or the help text).
    return err.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  if (err instanceof ConfigError) {
    stderr.write(`${err.message}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof CliError) {
    stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  stderr.write(`error: ${message}\n`);
  if (process.env.SEALPOST_DEBUG && err instanceof Error && err.stack) stderr.write(`${err.stack}\n`);
  return EXIT_FAILURE;
}
