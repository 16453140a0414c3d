// `sealpost config show --non-default` (postconf -n), run as a child process:
// only keys whose value differs from its default, as TOML; paths derived
// from a changed data_dir are not listed; an empty config lists nothing.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const run = (args: string[], cwd: string) =>
  execFileSync(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } }).toString();

describe('sealpost config show --non-default', { timeout: 60_000 }, () => {
  it('prints only the keys that differ from their defaults', () => {
    const dir = tempDir('sealpost-config-nd-');
    writeFileSync(
      join(dir, 'sealpost.toml'),
      '[redis]\nprefix = "abc"\n\n[store]\ndata_dir = "data"\n\n[smtp]\nmax_recipients = 7\n',
    );
    const out = run(['config', 'show', '--non-default', '--config', 'sealpost.toml'], dir);
    expect(out.split('\n')[0]).toMatch(/^# Keys that differ from their defaults in /);
    const doc = parse(out) as Record<string, Record<string, unknown>>;
    expect(doc).toEqual({
      redis: { prefix: 'abc' },
      store: { data_dir: join(dir, 'data') },
      smtp: { max_recipients: 7 },
    });
    // The full view has many more keys.
    expect(
      Object.keys(parse(run(['config', 'show', '--config', 'sealpost.toml'], dir))).length,
    ).toBeGreaterThan(3);

    writeFileSync(join(dir, 'empty.toml'), '');
    const none = run(['config', 'show', '--non-default', '--config', 'empty.toml'], dir);
    expect(parse(none)).toEqual({});
    expect(none).toContain('# every key has its default value');
  });
});
