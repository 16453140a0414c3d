import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { addServerOptions, loadCliConfig, parseListen } from '../../src/cli/common.ts';
import { ConfigError } from '../../src/core/config/index.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('parseListen', () => {
  it('accepts IPv4, names and bracketed IPv6', () => {
    expect(parseListen('127.0.0.1:2525')).toEqual({ host: '127.0.0.1', port: 2525 });
    expect(parseListen('localhost:80')).toEqual({ host: 'localhost', port: 80 });
    expect(parseListen('[::1]:25')).toEqual({ host: '::1', port: 25 });
    expect(parseListen('[::]:0')).toEqual({ host: '::', port: 0 });
  });

  it('rejects anything else with a usage message', () => {
    for (const bad of [
      '127.0.0.1',
      '::1:25',
      '[127.0.0.1]:25',
      'host:port',
      'a:70000',
      ':25',
      'bad host:1',
    ]) {
      expect(() => parseListen(bad), bad).toThrow(/expected HOST:PORT/);
    }
  });

  it('collects repeated --listen options in order', () => {
    const cmd = addServerOptions(new Command('x').exitOverride()).action(() => {});
    cmd.parse(['--listen', '127.0.0.1:1', '--listen', '[::1]:2'], { from: 'user' });
    expect(cmd.opts().listen).toEqual([
      { host: '127.0.0.1', port: 1 },
      { host: '::1', port: 2 },
    ]);
  });
});

describe('loadCliConfig', () => {
  const cwd = process.cwd();
  afterEach(() => process.chdir(cwd));

  it('falls back to defaults only when the default file is absent', () => {
    const dir = tempDir();
    process.chdir(dir);
    const { config, configFile } = loadCliConfig({ dataDir: 'd' });
    expect(configFile).toBeNull();
    expect(config.store.data_dir).toBe(join(dir, 'd'));

    writeFileSync(join(dir, 'sealpost.toml'), '[smtp]\nhostname = "mx.example.org"\n');
    const loaded = loadCliConfig({}, { stderr: { write: () => true } });
    expect(loaded.configFile).toBe('sealpost.toml');
    expect(loaded.config.smtp.hostname).toBe('mx.example.org');
    expect(loaded.config.store.data_dir).toBe(join(dir, '.data'));

    expect(() => loadCliConfig({ config: 'other.toml' })).toThrow(ConfigError);
  });

  it('picks --config, then $SEALPOST_CONFIG, then ./sealpost.toml, then ./.data/sealpost.toml, and says which', () => {
    const dir = tempDir();
    process.chdir(dir);
    const lines: string[] = [];
    const ctx = (env: Record<string, string | undefined> = {}) => ({
      env,
      stderr: { write: (s: string) => lines.push(s) },
    });
    const hostOf = (file: string) => `${file.replace(/[^a-z]/g, '')}.example.org`;
    const write = (file: string) => writeFileSync(join(dir, file), `[smtp]\nhostname = "${hostOf(file)}"\n`);

    // Nothing here: the built-in defaults, silently.
    expect(loadCliConfig({}, ctx()).configFile).toBeNull();
    expect(lines).toEqual([]);

    mkdirSync(join(dir, '.data'));
    write('.data/sealpost.toml');
    const dev = loadCliConfig({}, ctx());
    expect(dev.configFile).toBe(join('.data', 'sealpost.toml'));
    expect(dev.config.smtp.hostname).toBe(hostOf('.data/sealpost.toml'));
    expect(lines.splice(0)).toEqual([`using config ${join('.data', 'sealpost.toml')} (dev stack)\n`]);

    write('sealpost.toml');
    expect(loadCliConfig({}, ctx()).config.smtp.hostname).toBe(hostOf('sealpost.toml'));
    // The long-standing default is read silently.
    expect(lines.splice(0)).toEqual([]);

    write('env.toml');
    const fromEnv = loadCliConfig({}, ctx({ SEALPOST_CONFIG: 'env.toml' }));
    expect(fromEnv.config.smtp.hostname).toBe(hostOf('env.toml'));
    expect(lines.splice(0)).toEqual(['using config env.toml (SEALPOST_CONFIG)\n']);

    // --config wins over all of them and needs no announcement.
    write('explicit.toml');
    const explicit = loadCliConfig({ config: 'explicit.toml' }, ctx({ SEALPOST_CONFIG: 'env.toml' }));
    expect(explicit.config.smtp.hostname).toBe(hostOf('explicit.toml'));
    expect(lines).toEqual([]);

    // A file named by the environment must exist, as one named by --config must.
    expect(() => loadCliConfig({}, ctx({ SEALPOST_CONFIG: 'missing.toml' }))).toThrow(/missing\.toml/);
  });
});
