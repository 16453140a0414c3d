// Which config file a command reads (--config, $SEALPOST_CONFIG, ./sealpost.toml,
// the dev stack's, or none), the line that names a file the operator did not
// name, and how a listen address is written: shared by the CLI and the dev stack.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const DEFAULT_CONFIG_FILE = 'sealpost.toml';
/** Names a config file for every command without --config; must exist when set. */
export const CONFIG_ENV = 'SEALPOST_CONFIG';
/** The file `sealpost dev` generates under its default data directory. */
export const DEV_CONFIG_FILE = join('.data', DEFAULT_CONFIG_FILE);

export interface Listen {
  host: string;
  port: number;
}

export function formatListen(listen: Listen): string {
  return listen.host.includes(':') ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
}

export interface ConfigChoice {
  /** null: no file, the built-in defaults apply. */
  file: string | null;
  /** How it was chosen; `explicit` and `env` files must exist. */
  source: 'explicit' | 'env' | 'cwd' | 'dev-stack' | 'defaults';
}

/**
 * Which config file a command reads: --config, else $SEALPOST_CONFIG, else
 * ./sealpost.toml, else ./.data/sealpost.toml (what `sealpost dev` wrote),
 * else none (built-in defaults). Relative names are taken from the working
 * directory.
 */
export function chooseConfigFile(
  explicit: string | undefined,
  env: Record<string, string | undefined> = process.env,
  exists: (file: string) => boolean = existsSync,
): ConfigChoice {
  if (explicit !== undefined) return { file: explicit, source: 'explicit' };
  const fromEnv = env[CONFIG_ENV];
  if (fromEnv) return { file: fromEnv, source: 'env' };
  if (exists(DEFAULT_CONFIG_FILE)) return { file: DEFAULT_CONFIG_FILE, source: 'cwd' };
  if (exists(DEV_CONFIG_FILE)) return { file: DEV_CONFIG_FILE, source: 'dev-stack' };
  return { file: null, source: 'defaults' };
}

/**
 * The stderr line naming a config the operator did not name: one found
 * through $SEALPOST_CONFIG or the dev stack's data directory. ./sealpost.toml
 * is the long-standing default and stays silent, so scripts that keep their
 * config beside them see only the command's own output on stderr.
 */
export function configChoiceLine(choice: ConfigChoice): string | null {
  switch (choice.source) {
    case 'env':
      return `using config ${choice.file} (${CONFIG_ENV})`;
    case 'dev-stack':
      return `using config ${choice.file} (dev stack)`;
    default:
      return null;
  }
}
