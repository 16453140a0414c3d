// `sealpost program deploy|verify|init-postoffice` as child processes against
// devnet, which runs Solana's runtime and its BPF Upgradeable Loader: a new
// program from the committed .so, its postoffice initialized in the same run,
// verified; upgrades to another
// build (built from test/fixtures/sbf/hello.c) and back, with ExtendProgram
// when the build grew, and past a stale buffer of a cut-short upgrade; an
// upload killed midway and resumed.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPostoffice, POSTOFFICE_SIZE } from '../../chain/client/index.ts';
import { LOADER_ID, PROGRAM_ACCOUNT_SIZE, PROGRAMDATA_METADATA_SIZE } from '../../chain/client/loader.ts';
import { buildSbfProgram } from '../../chain/program/tools/build.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { keyFile, MAIL_CHUNKS, MAIL_SO_BYTES, sealpost, sealpostKilled } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

let fixtureDir: string;
let hello: string;

beforeAll(async () => {
  fixtureDir = mkdtempSync(join(tmpdir(), 'sealpost-deploy-fixture-'));
  hello = join(fixtureDir, 'hello.so');
  await buildSbfProgram(resolve(import.meta.dirname, '..', 'fixtures', 'sbf', 'hello.c'), hello);
});
afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

async function setup(sol = 10) {
  const chain = await startTestChain();
  const dir = tempDir('sealpost-deploy-');
  const payer = keyFile(dir, 'payer.json', await chain.funded(sol));
  return { chain, dir, payer, rpc: chain.devnet.rpcUrl };
}

function json<T>(stdout: string): T {
  return JSON.parse(stdout) as T;
}

interface Deployed {
  action: string;
  programId: string;
  chunksTotal: number;
  chunksWritten: number;
  chunksHeld: number;
  lamportsSpent: number;
  transactions: number;
}

async function invokeLogs(chain: TestChain, programId: PublicKey): Promise<string[]> {
  const caller = await chain.funded(1);
  const keys = [{ pubkey: caller.publicKey, isSigner: true, isWritable: false }];
  const sig = await chain.send(
    [new TransactionInstruction({ programId, keys, data: Buffer.alloc(0) })],
    [caller],
  );
  const tx = await chain.connection.getTransaction(sig, {
    commitment: 'confirmed',
    maxSupportedTransactionVersion: 0,
  });
  return tx?.meta?.logMessages ?? [];
}

describe('sealpost program deploy', () => {
  it('deploys the committed .so to a new program id, initializes the postoffice in the same run, verifies it', async () => {
    const { chain, dir, payer, rpc } = await setup();
    const conn = chain.connection;
    const before = await chain.balance(payer.kp.publicKey);
    const delegate = Keypair.generate().publicKey.toBase58();
    const deploy = ['program', 'deploy', '--rpc', rpc, '--keypair', payer.path, '--delegate', delegate];
    const run = await sealpost(
      [...deploy, '--stamp-fee', '2000', '--surcharge', '6000', '--yes', '--json'],
      dir,
    );
    expect(run.code, run.stderr).toBe(0);
    const r = json<Deployed>(run.stdout);
    expect(r.action).toBe('deployed');
    // The program keypair was generated into the file the run named.
    const made = join(dir, 'mail_program-keypair.json');
    expect(run.stderr).toContain(`new program keypair written to mail_program-keypair.json`);
    expect(existsSync(made)).toBe(true);
    const programId = new PublicKey(r.programId);
    expect(Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(made, 'utf8')))).publicKey).toEqual(
      programId,
    );
    // The plan came first: cost lines (InitPostoffice's included) and the payer's balance, then progress.
    expect(run.stderr).toMatch(/SOL needed: +[\d.]+ SOL/);
    expect(run.stderr).toMatch(/postoffice rent: +0\.00218544 SOL \(186 bytes\)/);
    expect(run.stderr.indexOf('balance:')).toBeLessThan(run.stderr.indexOf('chunks written 1/'));
    expect(run.stderr).toContain(`chunks written ${MAIL_CHUNKS}/${MAIL_CHUNKS}`);
    expect(r.chunksTotal).toBe(MAIL_CHUNKS);
    expect(r.chunksWritten).toBe(MAIL_CHUNKS);

    const program = await conn.getAccountInfo(programId);
    expect(program?.executable).toBe(true);
    expect(program?.owner.equals(LOADER_ID)).toBe(true);
    // Spent: ProgramData (2× the size), program account and postoffice rent plus 5000 lamports a
    // signature (create buffer 2, writes 1 each, deploy 2, InitPostoffice 1), and the priority fee of
    // each transaction (1 lamport: the auto floor of 1 µlamport/CU on a devnet without recent fees);
    // the buffer's rent came back.
    const rent = (n: number) => conn.getMinimumBalanceForRentExemption(n);
    const fees = 5000 * (2 + MAIL_CHUNKS + 2 + 1) + (MAIL_CHUNKS + 3);
    const expected =
      (await rent(PROGRAMDATA_METADATA_SIZE + 2 * MAIL_SO_BYTES.length)) +
      (await rent(PROGRAM_ACCOUNT_SIZE)) +
      (await rent(POSTOFFICE_SIZE)) +
      fees;
    expect(r.lamportsSpent).toBe(expected);
    expect(before - (await chain.balance(payer.kp.publicKey))).toBe(expected);
    expect(r.transactions).toBe(MAIL_CHUNKS + 3); // create buffer, writes, deploy, InitPostoffice

    const po = await getPostoffice(conn, programId);
    expect(po?.admin.equals(payer.kp.publicKey)).toBe(true);
    expect(po?.delegateAddress.toBase58()).toBe(delegate);
    expect(po?.stampFeeLamports).toBe(2000n);
    expect(po?.settlementSurchargeLamports).toBe(6000n);

    const verify = await sealpost(['program', 'verify', '--rpc', rpc, '--program-id', r.programId], dir);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toContain('match: the on-chain program is the local build, byte for byte');
    expect(verify.stdout).toContain(`upgrade authority  ${payer.kp.publicKey.toBase58()}`);

    const init = [
      'program',
      'init-postoffice',
      '--rpc',
      rpc,
      '--keypair',
      payer.path,
      '--program-id',
      r.programId,
    ];
    const again = await sealpost([...init, '--delegate', delegate], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `already exists with admin ${payer.kp.publicKey.toBase58()} (pending admin none)`,
    );
    expect(again.stderr).toMatch(/stamp fee +2000 lamports/);

    // A second deploy of the same build sends nothing: the postoffice is ours already.
    const same = await sealpost([...deploy, '--yes', '--json'], dir);
    expect(same.code, same.stderr).toBe(0);
    const unchanged = json<Deployed & { postoffice: { action: string } }>(same.stdout);
    expect(unchanged.action).toBe('unchanged');
    expect(unchanged.postoffice.action).toBe('exists');
    expect(unchanged.lamportsSpent).toBe(0);
  }, 120_000);

  it('upgrades to another build and back, extending ProgramData when the build grew', async () => {
    const { chain, dir, payer, rpc } = await setup();
    const prog = keyFile(dir, 'hello-keypair.json');
    const authority = keyFile(dir, 'authority.json');
    const id = prog.kp.publicKey.toBase58();
    const common = [
      '--rpc',
      rpc,
      '--keypair',
      payer.path,
      '--upgrade-authority',
      authority.path,
      '--no-init',
      '--yes',
      '--json',
    ];
    // A tiny program with no room to grow.
    const size = readFileSync(hello).length;
    const first = await sealpost(
      [
        'program',
        'deploy',
        ...common,
        '--program-keypair',
        prog.path,
        '--so',
        hello,
        '--max-len',
        String(size),
      ],
      dir,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(await invokeLogs(chain, prog.kp.publicKey)).toContain('Program log: hello v2');

    // An upgrade to the mail program cut short leaves a buffer of its size; an
    // upgrade to another build (a patched hello) closes it and starts over.
    const cut = await sealpostKilled(
      ['program', 'deploy', ...common, '--program-id', id, '--window', '2'],
      dir,
      /chunks written [3-9]\//,
    );
    expect(cut.killed, cut.stderr).toBe(true);
    const hello3 = join(dir, 'hello3.so');
    writeFileSync(
      hello3,
      Buffer.from(readFileSync(hello).toString('latin1').replace('hello v2', 'hello v3'), 'latin1'),
    );
    const other = await sealpost(['program', 'deploy', ...common, '--program-id', id, '--so', hello3], dir);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toMatch(/close stale buffer \(another build\): refunds [\d.]+ SOL/);
    await new Promise((r) => setTimeout(r, 200)); // an upgraded program runs from the next slot
    expect(await invokeLogs(chain, prog.kp.publicKey)).toContain('Program log: hello v3');

    const up = await sealpost(['program', 'deploy', ...common, '--program-id', id], dir);
    expect(up.code, up.stderr).toBe(0);
    expect(json<Deployed>(up.stdout).action).toBe('upgraded');
    expect(up.stderr).toMatch(/extend program data: +[\d.]+ SOL \(\+\d+ bytes\)/);
    const verify = await sealpost(['program', 'verify', '--rpc', rpc, '--program-id', id], dir);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(verify.stdout).toContain(`upgrade authority  ${authority.kp.publicKey.toBase58()}`);

    const back = await sealpost(['program', 'deploy', ...common, '--program-id', id, '--so', hello], dir);
    expect(back.code, back.stderr).toBe(0);
    const helloVerify = await sealpost(
      ['program', 'verify', '--rpc', rpc, '--program-id', id, '--so', hello],
      dir,
    );
    expect(helloVerify.code).toBe(0);
    const mailVerify = await sealpost(['program', 'verify', '--rpc', rpc, '--program-id', id], dir);
    expect(mailVerify.code).toBe(1);
    expect(mailVerify.stderr).toContain('MISMATCH');
    await new Promise((r) => setTimeout(r, 200)); // an upgraded program runs from the next slot
    expect(await invokeLogs(chain, prog.kp.publicKey)).toContain('Program log: hello v2');
  }, 120_000);

  it('resumes an interrupted upload, writing only the chunks the buffer lacks', async () => {
    const { chain, dir, payer, rpc } = await setup();
    const prog = keyFile(dir, 'prog.json');
    const args = [
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
    ];
    const cut = await sealpostKilled([...args, '--window', '2'], dir, /chunks written (?:[89]|[1-9]\d)\//);
    expect(cut.killed, cut.stderr).toBe(true);
    // Nothing half-deployed: the program account does not exist yet.
    expect(await chain.connection.getAccountInfo(prog.kp.publicKey)).toBeNull();

    const resumed = await sealpost([...args, '--json'], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    const r = json<Deployed>(resumed.stdout);
    expect(r.action).toBe('deployed');
    expect(r.chunksHeld).toBeGreaterThanOrEqual(8);
    expect(r.chunksWritten).toBeLessThan(MAIL_CHUNKS);
    expect(r.chunksHeld + r.chunksWritten).toBe(MAIL_CHUNKS);
    expect(resumed.stderr).toContain(`${r.chunksWritten} of ${MAIL_CHUNKS} chunks to write`);
    // A cost is never printed as a negative number (a refund larger than the spend is said in words).
    expect(resumed.stderr).toMatch(/cost after refunds: +(\d+\.\d+ SOL|none; \d+\.\d+ SOL comes back)/);
    expect(r.transactions).toBe(r.chunksWritten + 1); // the writes and the deploy, no new buffer
    const verify = await sealpost(['program', 'verify', '--rpc', rpc, '--program-id', r.programId], dir);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 120_000);
});
