// `sealpost admin account create|show|list|delete` as a real subprocess
// against the store a running API uses: what the CLI provisions is visible
// through the API, and delete runs the same audited sweep.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { type ApiRig, type Dialect, newWallet, startRig } from '../support/api-rig.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(rig: ApiRig | null, args: string[]): Promise<Run> {
  const config = rig ? ['--config', join(rig.dir, 'sealpost.toml'), '--data-dir', rig.dir] : [];
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, ...config], { timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let rig: ApiRig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

describe.each(['sqlite', 'postgres'] as Dialect[])('admin account CLI on %s', (dialect) => {
  it('create is visible through the API; show and list print it', async () => {
    rig = await startRig(dialect);
    const alice = newWallet();
    const created = await cli(rig, [
      'admin',
      'account',
      'create',
      alice.address,
      '--timezone',
      'europe/paris',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const out = JSON.parse(created.stdout);
    expect(out.created).toBe(true);
    expect(out.account).toMatchObject({ wallet: alice.address, source: 'admin', timezone: 'Europe/Paris' });

    const token = await rig.login(alice);
    const me = await rig.request('GET', '/v1/account', { token });
    expect(me.status).toBe(200);
    expect(me.body.account).toMatchObject({
      wallet: alice.address,
      source: 'admin',
      timezone: 'Europe/Paris',
    });

    const again = await cli(rig, ['admin', 'account', 'create', alice.address]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`already exists: account ${alice.address}\n`);

    const shown = await cli(rig, ['admin', 'account', 'show', alice.address, '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(me.body);
    const text = await cli(rig, ['admin', 'account', 'show', alice.address]);
    expect(text.stdout).toContain(`wallet               ${alice.address}`);
    expect(text.stdout).toContain('timezone             Europe/Paris');

    const bob = newWallet();
    await cli(rig, ['admin', 'account', 'create', bob.address]);
    const sorted = [alice.address, bob.address].sort();
    const page1 = JSON.parse((await cli(rig, ['admin', 'account', 'list', '--limit', '1', '--json'])).stdout);
    expect(page1.accounts.map((a: { wallet: string }) => a.wallet)).toEqual([sorted[0]]);
    expect(page1.next).toBe(sorted[0]);
    const page2 = JSON.parse(
      (await cli(rig, ['admin', 'account', 'list', '--limit', '1', '--after', page1.next, '--json'])).stdout,
    );
    expect(page2).toEqual({
      accounts: [expect.objectContaining({ wallet: sorted[1], source: 'admin' })],
      next: null,
    });
  }, 240_000);
});

describe('admin account CLI', () => {
  it('delete runs the sweep, audited with actor cli; a second delete fails with exit 1', async () => {
    rig = await startRig('sqlite');
    const alice = newWallet();
    const token = await rig.login(alice);
    await rig.request('POST', '/v1/account', { token });
    const r = await cli(rig, ['admin', 'account', 'delete', alice.address, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ deleted: true, found: true, copies: 0 });
    expect(r.stderr).toContain(`sweeping account ${alice.address}`);
    expect((await rig.request('GET', '/v1/account', { token })).status).toBe(401);
    rig.clock.now = Date.now() + 2000;
    const fresh = await rig.login(alice);
    expect((await rig.request('GET', '/v1/account', { token: fresh })).status).toBe(404);
    const second = await cli(rig, ['admin', 'account', 'delete', alice.address]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`no account for wallet ${alice.address}; nothing was swept`);
    const audit = (await new AccountsRepo(rig.store.db).listAudit({ target: alice.address })).filter(
      (a) => a.action === 'account.delete',
    );
    expect(audit.map((a) => [a.actor, a.outcome])).toEqual([
      ['cli', 'failure'],
      ['cli', 'success'],
    ]);
  }, 240_000);

  it('bad arguments exit 2 naming the problem; a missing account exits 1; help shows examples', async () => {
    rig = await startRig('sqlite');
    const bad = await cli(rig, ['admin', 'account', 'create', 'not-a-wallet']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('expected a base58 wallet address (32 bytes), got "not-a-wallet"');
    const tz = await cli(rig, ['admin', 'account', 'create', newWallet().address, '--timezone', 'Mars/Base']);
    expect(tz.code).toBe(2);
    expect(tz.stderr).toContain('--timezone Mars/Base is not an IANA time zone name');
    const missing = await cli(rig, ['admin', 'account', 'show', newWallet().address]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: no account for wallet /);
    expect(await new AccountsRepo(rig.store.db).list()).toEqual({ accounts: [], next: null });
    const help = await cli(null, ['admin', 'account', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain('sealpost admin account delete');
    const adminHelp = await cli(null, ['admin', '--help']);
    expect(adminHelp.stdout).toContain('token');
  }, 240_000);
});
