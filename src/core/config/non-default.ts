// `sealpost config show --non-default` (Postfix's postconf -n): only the keys
// whose effective value differs from the default. Defaults are resolved as
// the config was (same config directory, same environment) and with its data
// directory, so paths derived from `[store] data_dir` count as defaults when
// only data_dir was changed; data_dir itself is compared with its own default.
import { stringify } from 'smol-toml';
import { parseConfig } from './load.ts';
import { SECTION_ORDER } from './schema.ts';
import type { Config } from './types.ts';

type Plain = Record<string, unknown>;

const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The parts of `value` that differ from `base` (recursively through tables); undefined when none do. */
function diff(value: unknown, base: unknown): unknown {
  if (isPlain(value) && isPlain(base)) {
    const out: Plain = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const d = diff(v, base[k]);
      if (d !== undefined) out[k] = d;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return JSON.stringify(value) === JSON.stringify(base) ? undefined : value;
}

export function nonDefaultConfig(
  config: Config,
  opts: { configDir: string; env?: Record<string, string | undefined> },
): Partial<Record<string, Plain>> {
  const env = opts.env ?? process.env;
  const plain = parseConfig('', { configDir: opts.configDir, env, source: '<defaults>' });
  const sameDataDir = parseConfig('', {
    configDir: opts.configDir,
    env,
    dataDirOverride: config.store.data_dir,
    source: '<defaults>',
  });
  const out: Partial<Record<string, Plain>> = {};
  for (const name of SECTION_ORDER) {
    const d = diff(config[name], sameDataDir[name]) as Plain | undefined;
    if (d) out[name] = d;
  }
  if (config.store.data_dir !== plain.store.data_dir)
    out.store = { data_dir: config.store.data_dir, ...(out.store ?? {}) };
  return out;
}

export function renderNonDefault(sections: Partial<Record<string, Plain>>, header: string[]): string {
  const parts = header.map((line) => `# ${line}`.trimEnd());
  for (const name of SECTION_ORDER) {
    const section = sections[name];
    if (section) parts.push('', stringify({ [name]: section }).trimEnd());
  }
  if (parts.length === header.length) parts.push('', '# every key has its default value');
  return `${parts.join('\n')}\n`;
}
