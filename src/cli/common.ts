// Helpers every `sealpost` subcommand shares: the server options
// (--config, --data-dir, --listen), config loading, and error reporting
// with stable exit codes (./errors.ts, re-exported here); the config-file
// choice lives in src/core/config/config-file.ts (re-exported here).
import type { Connection } from '@solana/web3.js';
import { type Command, InvalidArgumentError } from 'commander';
import { createConnection } from '../core/chain-rpc.ts';
import {
  CONFIG_ENV,
  chooseConfigFile,
  configChoiceLine,
  DEFAULT_CONFIG_FILE,
  DEV_CONFIG_FILE,
  type Listen,
} from '../core/config/config-file.ts';
import { type Config, loadConfig, parseConfig, splitHostPort } from '../core/config/index.ts';

export {
  CONFIG_ENV,
  type ConfigChoice,
  chooseConfigFile,
  configChoiceLine,
  DEFAULT_CONFIG_FILE,
  DEV_CONFIG_FILE,
  formatListen,
  type Listen,
} from '../core/config/config-file.ts';
export { CliError, EXIT_FAILURE, EXIT_USAGE, reportError } from './errors.ts';

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

/** Help text of --config: where a command looks when it is not given. */
export const CONFIG_OPTION_HELP = `config file (default $${CONFIG_ENV}, else ./${DEFAULT_CONFIG_FILE}, else ./${DEV_CONFIG_FILE}, else built-in defaults)`;

/** Adds --config, --data-dir and (unless `listen: false`) a repeatable --listen. */
export function addServerOptions(cmd: Command, opts: { listen?: false | string } = {}): Command {
  cmd
    .option('--config <file>', CONFIG_OPTION_HELP)
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

export interface LoadCliConfigContext {
  env?: Record<string, string | undefined>;
  /** Where the "using config" line goes; default standard error (stdout stays clean for --json). */
  stderr?: { write(s: string): unknown };
}

/**
 * Loads the config chooseConfigFile picks, saying on stderr which file it is
 * when --config did not name it. A file named by --config or
 * $SEALPOST_CONFIG must exist. Throws ConfigError, which reportError turns
 * into "config error in FILE:" plus one line per issue and exit code 2.
 */
export function loadCliConfig(
  opts: { config?: string; dataDir?: string },
  ctx: LoadCliConfigContext = {},
): LoadedCliConfig {
  const env = ctx.env ?? process.env;
  const choice = chooseConfigFile(opts.config, env);
  if (choice.file === null) {
    return {
      config: parseConfig('', { dataDirOverride: opts.dataDir, source: '<defaults>', env }),
      configFile: null,
    };
  }
  const line = configChoiceLine(choice);
  if (line) (ctx.stderr ?? process.stderr).write(`${line}\n`);
  const config = loadConfig(choice.file, { dataDirOverride: opts.dataDir, env });
  if (config.chain.max_rps !== undefined)
    configuredRps = { rpcUrl: config.chain.rpc_url, maxRps: config.chain.max_rps };
  return { config, configFile: choice.file };
}

// `[chain] max_rps` of the config file this CLI run loaded, for its `rpc_url`
// (a one-shot process loads one config): cliConnection keeps to it.
let configuredRps: { rpcUrl: string; maxRps: number } | null = null;

/**
 * The CLI's chain connection: each RPC call fails after 60 s instead of
 * hanging, and a public RPC's HTTP 429 is waited out (by its Retry-After)
 * and retried for up to a minute, silently (src/core/net/rpc-discipline.ts).
 * Calls per second: the loaded config's `[chain] max_rps` when `rpc` is its
 * `rpc_url`, else the default (none for a node on this host, 10 for others).
 */
export function cliConnection(rpc: string): Connection {
  // The config's max_rps holds for the node it names; another --rpc gets the default for its host.
  const maxRps = configuredRps && configuredRps.rpcUrl === rpc ? configuredRps.maxRps : undefined;
  return createConnection(rpc, {
    timeoutMs: 60_000,
    maxWaitMs: 60_000,
    ...(maxRps !== undefined ? { maxRps } : {}),
  });
}
