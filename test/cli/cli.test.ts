// Black-box: runs the real `bin/sealpost.js` as a child process.
import { execFile } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sealpost(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

describe('sealpost CLI', () => {
  it('prints help for the program and each subcommand', async () => {
    const cwd = tempDir();
    const top = await sealpost(['--help'], cwd);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: sealpost');
    expect(top.stdout).toContain('keygen');
    const keygen = await sealpost(['keygen', '--help'], cwd);
    expect(keygen.code).toBe(0);
    for (const sub of ['wallet', 'authority', 'delegate', 'credential-key'])
      expect(keygen.stdout).toContain(sub);
    const check = await sealpost(['config', 'check', '--help'], cwd);
    expect(check.stdout).toContain('--config <file>');
    expect(check.stdout).toContain('--data-dir <dir>');
  });

  it('exits 2 on a config error, naming the file and the key', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'bad.toml'), '[smtp]\nhostnme = "mail.example.org"\n[api]\nport = "80a"\n');
    const run = await sealpost(['config', 'check', '--config', 'bad.toml'], cwd);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'config error in bad.toml:\n' +
        '  unknown key smtp.hostnme (did you mean smtp.hostname?)\n' +
        '  api.port: expected integer 1-65535, got "80a"\n',
    );
  });

  it('uses defaults when sealpost.toml is absent but fails on a missing --config file', async () => {
    const cwd = tempDir();
    const defaults = await sealpost(['config', 'check'], cwd);
    expect(defaults).toMatchObject({ code: 0, stdout: 'config ok: built-in defaults (no config file)\n' });
    const missing = await sealpost(['config', 'check', '--config', 'absent.toml'], cwd);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `config error in absent.toml:\n  file not found: ${join(cwd, 'absent.toml')}`,
    );
  });

  it('shows the effective config with --data-dir applied', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'sealpost.toml'), '[smtp]\nhostname = "mail.example.org"\n');
    const run = await sealpost(['config', 'show', '--data-dir', 'state'], cwd);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('hostname = "mail.example.org"');
    expect(run.stdout).toContain(`url = "sqlite:${join(cwd, 'state', 'sealpost.sqlite')}"`);
  });

  it('keygen wallet writes a 0600 keypair, prints its address, and refuses to overwrite', async () => {
    const cwd = tempDir();
    const first = await sealpost(['keygen', 'wallet', 'keys/alice.json'], cwd);
    expect(first.code).toBe(0);
    const path = join(cwd, 'keys', 'alice.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(first.stdout).toBe(`${readKeypairFile(path).address}\n`);
    const before = readFileSync(path, 'utf8');

    const again = await sealpost(['keygen', 'wallet', 'keys/alice.json'], cwd);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists; refusing to overwrite it');
    expect(readFileSync(path, 'utf8')).toBe(before);

    const forced = await sealpost(['keygen', 'wallet', 'keys/alice.json', '--force'], cwd);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toBe(`${readKeypairFile(path).address}\n`);
    expect(readFileSync(path, 'utf8')).not.toBe(before);
  });

  it('keygen credential-key writes 32 raw bytes', async () => {
    const cwd = tempDir();
    const run = await sealpost(['keygen', 'credential-key', 'credential.key'], cwd);
    expect(run.code).toBe(0);
    expect(readFileSync(join(cwd, 'credential.key'))).toHaveLength(32);
    expect(statSync(join(cwd, 'credential.key')).mode & 0o777).toBe(0o600);
  });

  it('exits 2 on usage errors', async () => {
    const run = await sealpost(['keygen', 'wallet'], tempDir());
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("missing required argument 'file'");
  });
});
