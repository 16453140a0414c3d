import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { addServerOptions, loadCliConfig, parseListen } from '../src/cli/common.ts';
import { ConfigError } from '../src/config/index.ts';
import { tempDir } from './helpers/temp-dir.ts';

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
    const loaded = loadCliConfig({});
    expect(loaded.configFile).toBe('sealpost.toml');
    expect(loaded.config.smtp.hostname).toBe('mx.example.org');
    expect(loaded.config.store.data_dir).toBe(join(dir, '.data'));

    expect(() => loadCliConfig({ config: 'other.toml' })).toThrow(ConfigError);
  });
});
