// Writes a Config back as TOML (what `sealpost dev` saves as its generated
// config file). Every key is written explicitly, so the file documents the
// values in effect; parsing it again yields the same Config.
import { stringify } from 'smol-toml';
import { knownKeysAt } from './issues.ts';
import { configSchema, SECTION_ORDER } from './schema.ts';
import type { Config } from './types.ts';

export interface RenderOptions {
  /** Comment lines put at the top (without the leading "# "). */
  header?: string[];
}

// Orders keys as the schema declares them (the order docs/config.md uses)
// and drops unset optional keys, which TOML cannot express.
function normalize(value: unknown, path: (string | number)[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => normalize(v, [...path, i]));
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const order = knownKeysAt(configSchema, path);
    const keys = [
      ...order.filter((k) => k in record),
      ...Object.keys(record).filter((k) => !order.includes(k)),
    ];
    return Object.fromEntries(
      keys.filter((k) => record[k] !== undefined).map((k) => [k, normalize(record[k], [...path, k])]),
    );
  }
  return value;
}

export function renderConfigToml(config: Config, opts: RenderOptions = {}): string {
  const header = opts.header ?? ['Sealpost configuration. Every key is described in docs/config.md.'];
  const parts = header.map((line) => `# ${line}`.trimEnd());
  for (const name of SECTION_ORDER) {
    parts.push('', stringify({ [name]: normalize(config[name], [name]) }).trimEnd());
  }
  return `${parts.join('\n')}\n`;
}
