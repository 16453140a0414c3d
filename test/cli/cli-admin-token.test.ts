// Black-box: `sealpost admin token` run as a child process — creates or
// rotates the admin token file named by the config, --data-dir or --file.
import { execFile } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function adminToken(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, 'admin', 'token', ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

const mode = (path: string) => statSync(path).mode & 0o777;
const HEX_LINE = /^[0-9a-f]{64}\n$/;

// Each run starts a Node process with tsx; allow for a busy machine.
describe('sealpost admin token', { timeout: 120_000 }, () => {
  it('creates the file named by [api] admin_token_file, then rotates it, printing nothing secret', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'sealpost.toml'), '[api]\nadmin_token_file = "keys/admin.token"\n');
    const path = join(cwd, 'keys', 'admin.token');

    const created = await adminToken(['--config', 'sealpost.toml'], cwd);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe('');
    expect(mode(path)).toBe(0o600);
    const first = readFileSync(path, 'utf8');
    expect(first).toMatch(HEX_LINE);
    expect(Buffer.from(first.trim(), 'hex')).toHaveLength(32);
    expect(created.stderr).toContain(`created admin token file ${path} (mode 0600, 32 random bytes, hex)`);
    expect(created.stderr).not.toContain(first.trim());

    const rotated = await adminToken(['--config', 'sealpost.toml'], cwd);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toBe('');
    const second = readFileSync(path, 'utf8');
    expect(second).toMatch(HEX_LINE);
    expect(second).not.toBe(first);
    expect(mode(path)).toBe(0o600);
    expect(rotated.stderr).toContain(`rotated admin token file ${path}`);
    expect(rotated.stderr).toContain(
      'warning: running servers accept only the old token until they read this file again: run `sealpost reload`',
    );
    expect(rotated.stderr).not.toContain(second.trim());
  });

  it('defaults to <data-dir>/admin.token without a config file', async () => {
    const cwd = tempDir();
    const run = await adminToken(['--data-dir', 'state'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'state', 'admin.token'), 'utf8')).toMatch(HEX_LINE);
  });

  it('--file with --format base64url --print shows the token that the file holds', async () => {
    const cwd = tempDir();
    const run = await adminToken(['--file', 'admin.tok', '--format', 'base64url', '--print'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(Buffer.from(run.stdout.trim(), 'base64url')).toHaveLength(32);
    expect(readFileSync(join(cwd, 'admin.tok'), 'utf8')).toBe(run.stdout);
    expect(mode(join(cwd, 'admin.tok'))).toBe(0o600);
  });

  it('--json reports file, action and format; the token only with --print', async () => {
    const cwd = tempDir();
    const plain = await adminToken(['--file', 'a.token', '--json'], cwd);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toEqual({
      file: join(cwd, 'a.token'),
      action: 'created',
      format: 'hex',
    });

    const printed = await adminToken(['--file', 'a.token', '--json', '--print'], cwd);
    expect(printed.code, printed.stderr).toBe(0);
    const out = JSON.parse(printed.stdout) as Record<string, string>;
    expect(out).toMatchObject({ file: join(cwd, 'a.token'), action: 'rotated', format: 'hex' });
    expect(`${out.token}\n`).toBe(readFileSync(join(cwd, 'a.token'), 'utf8'));
  });

  it('--file wins over the config, so a broken config does not block a rotation', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'sealpost.toml'), '[api]\nadmin_token_fil = "x"\n');
    const run = await adminToken(['--file', 'ok.token'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'ok.token'), 'utf8')).toMatch(HEX_LINE);
  });

  it('exits 2 on a bad --format or a bad config, writing nothing', async () => {
    const cwd = tempDir();
    const format = await adminToken(['--file', 'x.token', '--format', 'base64'], cwd);
    expect(format).toMatchObject({ code: 2, stdout: '' });
    expect(format.stderr).toContain('expected one of hex, base64url, got "base64"');
    expect(() => statSync(join(cwd, 'x.token'))).toThrow();

    writeFileSync(join(cwd, 'bad.toml'), '[api]\nadmin_token_fil = "keys/admin.token"\n');
    const config = await adminToken(['--config', 'bad.toml', '--data-dir', 'state'], cwd);
    expect(config).toMatchObject({ code: 2, stdout: '' });
    expect(config.stderr).toContain('config error in bad.toml:');
    expect(config.stderr).toContain('api.admin_token_fil');
    expect(() => statSync(join(cwd, 'state'))).toThrow();
  });

  it('has --help with examples and says when servers pick up a new token', async () => {
    const run = await adminToken(['--help'], tempDir());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('$ sealpost admin token --config sealpost.toml');
    expect(run.stdout).toContain('reads the file at start and at each reload');
    expect(run.stdout).toContain('--print');
  });
});
