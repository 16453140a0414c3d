// `[chain] rent_recovery_*`: off by default, and `sealpost config check`
// names the key of a bad value.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rentRecoveryPolicyOf } from '../../delivery/rent-recovery.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

function configCheck(file: string, cwd: string): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, 'config', 'check', '--config', file],
      { cwd, env: { ...process.env, NO_COLOR: '1' } },
      (err, _stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
    );
  });
}

describe('[chain] rent_recovery_*', () => {
  it('is off unless rent_recovery_days is set', () => {
    const off = parseConfig('', { env: {}, source: 'test.toml', dataDirOverride: tempDir() });
    expect(rentRecoveryPolicyOf(off.chain)).toEqual({ days: 0, batch: 500, intervalSecs: 3600 });
    const on = parseConfig(
      '[chain]\nrent_recovery_days = 90\nrent_recovery_batch = 200\nrent_recovery_interval_secs = 600\n',
      { env: {}, source: 'test.toml', dataDirOverride: tempDir() },
    );
    expect(rentRecoveryPolicyOf(on.chain)).toEqual({ days: 90, batch: 200, intervalSecs: 600 });
  });

  it('config check names the key of a bad value', async () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'bad.toml'),
      '[chain]\nrent_recovery_days = -1\nrent_recovery_batch = 0\nrent_recovery_interval_secs = 1.5\n',
    );
    const run = await configCheck('bad.toml', cwd);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('chain.rent_recovery_days: expected integer 0-36500, got -1');
    expect(run.stderr).toContain('chain.rent_recovery_batch: expected integer 1-10000, got 0');
    expect(run.stderr).toContain('chain.rent_recovery_interval_secs: expected integer 10-604800, got 1.5');
  });
});
