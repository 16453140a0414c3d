// Entry points: read the TOML file, validate it, resolve defaults. Any problem
// becomes a ConfigError listing every issue at once.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { ConfigError, defaultMessage, issuesFromZod } from './issues.ts';
import { resolveConfig } from './resolve.ts';
import { configSchema } from './schema.ts';
import type { Config } from './types.ts';

export interface ParseConfigOptions {
  /** `--data-dir`: replaces `[store] data_dir`; resolved against the working directory. */
  dataDirOverride?: string;
  /** Directory relative paths are resolved against; default: the working directory. */
  configDir?: string;
  /** Environment for defaults such as REDIS_URL; default: process.env. */
  env?: Record<string, string | undefined>;
  /** Label used in error messages; default "<config text>". */
  source?: string;
}

export function parseConfig(text: string, opts: ParseConfigOptions = {}): Config {
  const source = opts.source ?? '<config text>';
  let doc: unknown;
  try {
    doc = parseToml(text);
  } catch (err) {
    if (!(err instanceof TomlError)) throw err;
    const reason = err.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'invalid TOML';
    throw new ConfigError(source, [
      {
        kind: 'syntax',
        path: '',
        message: `TOML syntax error at line ${err.line}, column ${err.column}: ${reason}`,
      },
    ]);
  }
  const parsed = configSchema.safeParse(doc, { reportInput: true, error: defaultMessage });
  if (!parsed.success) throw new ConfigError(source, issuesFromZod(parsed.error, configSchema));
  const { config, issues } = resolveConfig(parsed.data, {
    configDir: resolve(opts.configDir ?? process.cwd()),
    dataDirOverride: opts.dataDirOverride,
    env: opts.env ?? process.env,
  });
  if (issues.length > 0) throw new ConfigError(source, issues);
  return config;
}

export function loadConfig(
  path: string,
  opts: Omit<ParseConfigOptions, 'configDir' | 'source'> = {},
): Config {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `file not found: ${file}`
        : code === 'EISDIR'
          ? `${file} is a directory, expected a TOML file`
          : `cannot read ${file}: ${(err as Error).message}`;
    throw new ConfigError(path, [{ kind: 'file', path: '', message: why }]);
  }
  return parseConfig(text, { ...opts, configDir: dirname(file), source: path });
}

/** The configuration used when no config file exists: every default, data under `dataDir`. */
export function defaultConfig(dataDir: string, opts: Pick<ParseConfigOptions, 'env'> = {}): Config {
  return parseConfig('', { ...opts, dataDirOverride: dataDir, source: '<defaults>' });
}
