// `sealpost program deploy` refusing bad input before it sends anything (or
// before it would leave a half-deployed program): too little SOL, unreadable
// keypair files, program ids it may not upgrade, an RPC that does not answer;
// `set-authority --final` making a program immutable.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { startTestChain } from '../support/devnet.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

async function setup(sol = 10) {
  const chain = await startTestChain();
  const dir = tempDir('sealpost-deploy-');
  const payer = keyFile(dir, 'payer.json', await chain.funded(sol));
  return { chain, dir, payer, rpc: chain.devnet.rpcUrl };
}

describe('sealpost program deploy refuses', () => {
  it('too little SOL, saying how much is needed, before any transaction', async () => {
    const { chain, dir, payer, rpc } = await setup(0.1);
    const prog = keyFile(dir, 'prog.json');
    const before = await chain.balance(payer.kp.publicKey);
    const run = await sealpost(
      [
        'program',
        'deploy',
        '--rpc',
        rpc,
        '--keypair',
        payer.path,
        '--program-keypair',
        prog.path,
        '--no-init',
        '--yes',
      ],
      dir,
    );
    expect(run.code).toBe(1);
    // The figures follow the committed binary's size; the sum must hold and match the plan printed above.
    const m = /needs (\d+\.\d+) SOL, has 0\.1 SOL \(short by (\d+\.\d+) SOL\); nothing was sent/.exec(
      run.stderr,
    );
    expect(m).not.toBeNull();
    const [needs, short] = [Number(m?.[1]), Number(m?.[2])];
    expect(needs).toBeGreaterThan(0.5);
    expect(Math.round((needs - 0.1) * 1e9)).toBe(Math.round(short * 1e9));
    expect(run.stderr).toContain(`SOL needed:             ${m?.[1]} SOL`);
    expect(run.stderr).not.toContain('chunks written');
    await new Promise((r) => setTimeout(r, 200)); // a few slots: anything sent would have landed
    expect(await chain.balance(payer.kp.publicKey)).toBe(before);
    expect(await chain.connection.getAccountInfo(prog.kp.publicKey)).toBeNull();
  });

  it('unreadable or wrong keypair files, naming the option and the file', async () => {
    const { dir, payer, rpc } = await setup();
    writeFileSync(join(dir, 'bad.json'), 'not a key');
    writeFileSync(join(dir, 'short.json'), JSON.stringify([1, 2, 3]));
    const deploy = (...extra: string[]) =>
      sealpost(['program', 'deploy', '--rpc', rpc, '--no-init', '--yes', ...extra], dir);

    const missing = await deploy('--keypair', 'nope.json');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--keypair: keypair file nope.json: file not found');
    const bad = await deploy('--keypair', 'bad.json');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--keypair: keypair file bad.json: not JSON');
    const short = await deploy('--keypair', payer.path, '--program-keypair', 'short.json');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('--program-keypair: keypair file short.json: expected 64 numbers');
    const auth = await deploy('--keypair', payer.path, '--upgrade-authority', 'bad.json');
    expect(auth.code).toBe(1);
    expect(auth.stderr).toContain('--upgrade-authority: keypair file bad.json');
  });

  it('program ids it may not upgrade: another authority, a plain account, another loader, none', async () => {
    const { chain, dir, payer, rpc } = await setup();
    const upgrade = (id: string) =>
      sealpost(
        [
          'program',
          'deploy',
          '--rpc',
          rpc,
          '--keypair',
          payer.path,
          '--program-id',
          id,
          '--no-init',
          '--yes',
        ],
        dir,
      );

    // Devnet's own mail program: its upgrade authority is devnet's faucet.
    const foreign = await upgrade(chain.programId);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(
      new RegExp(
        `program ${chain.programId} has upgrade authority \\w+, not ${payer.kp.publicKey.toBase58()}`,
      ),
    );
    const plain = await upgrade(payer.kp.publicKey.toBase58());
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('is a plain account (owned by the System program');
    const memo = await upgrade('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
    expect(memo.code).toBe(1);
    expect(memo.stderr).toMatch(
      /is a program of .+, not of the BPF Upgradeable Loader: it cannot be upgraded/,
    );
    const none = await upgrade(Keypair.generate().publicKey.toBase58());
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('does not exist on this cluster, so there is nothing to upgrade');

    const verifyPlain = await sealpost(
      ['program', 'verify', '--rpc', rpc, '--program-id', payer.kp.publicKey.toBase58()],
      dir,
    );
    expect(verifyPlain.code).toBe(1);
    expect(verifyPlain.stderr).toContain('not a program');
  });

  it('upgrading a program made immutable with set-authority --final', async () => {
    const { dir, payer, rpc } = await setup();
    const prog = keyFile(dir, 'prog.json');
    const id = prog.kp.publicKey.toBase58();
    const deploy = ['program', 'deploy', '--rpc', rpc, '--keypair', payer.path, '--no-init', '--yes'];
    expect((await sealpost([...deploy, '--program-keypair', prog.path], dir)).code).toBe(0);
    const set = [
      'program',
      'set-authority',
      '--rpc',
      rpc,
      '--keypair',
      payer.path,
      '--program-id',
      id,
      '--final',
    ];
    const unconfirmed = await sealpost(set, dir);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('pass --yes');
    const revoked = await sealpost([...set, '--yes'], dir);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('upgrade authority none (immutable)');
    const verify = await sealpost(['program', 'verify', '--rpc', rpc, '--program-id', id], dir);
    expect(verify.stdout).toContain('upgrade authority  none (immutable)');
    writeFileSync(join(dir, 'other.so'), Buffer.from('not the same build'));
    const refused = await sealpost([...deploy, '--program-id', id, '--so', 'other.so'], dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`program ${id} is immutable`);
  }, 60_000);

  it('an RPC that does not answer', async () => {
    const dir = tempDir('sealpost-deploy-');
    const payer = keyFile(dir, 'payer.json');
    const run = await sealpost(
      ['program', 'deploy', '--rpc', 'http://127.0.0.1:9', '--keypair', payer.path, '--no-init', '--yes'],
      dir,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the RPC at http://127.0.0.1:9 does not answer');
  });
});
