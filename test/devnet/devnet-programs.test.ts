// Programs on devnet: deployed at start through the BPF Upgradeable Loader
// (the program account executable and owned by the loader, its ProgramData
// holding the ELF), invoked at the configured id, kept across a restart, and
// upgraded in place when the `.so` changes; and the mail program binary at
// the default id. The generic image is SPL Memo's ELF,
// taken from the runtime's preloaded copy; a copy with one log text patched
// stands for a rebuild.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Keypair,
  PublicKey,
  sendAndConfirmTransaction,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeLoaderState, LOADER_ID, programDataAddress } from '../../chain/client/loader.ts';
import { DEFAULT_PROGRAM_ID } from '../../chain/client/program-id.ts';
import { Bank } from '../../chain/devnet/bank.ts';
import { MAIL_PROGRAM_PATH } from '../../chain/devnet/server.ts';
import { startTestDevnet, type TestDevnet } from '../support/devnet-node.ts';

const running: TestDevnet[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const t of running.splice(0)) await t.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

let memo: Uint8Array;
let patched: Uint8Array;
let files: { memo: string; patched: string };

beforeAll(() => {
  const bank = Bank.open({});
  memo = bank.getAccount('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')?.data ?? new Uint8Array(0);
  bank.close();
  const text = Buffer.from(memo);
  const at = text.indexOf('Signed by:');
  expect(at).toBeGreaterThan(0);
  patched = new Uint8Array(text);
  patched.set(Buffer.from('SIGNED BY:'), at);
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-programs-'));
  files = { memo: join(dir, 'memo.so'), patched: join(dir, 'memo-patched.so') };
  writeFileSync(files.memo, memo);
  writeFileSync(files.patched, patched);
  return () => rmSync(dir, { recursive: true, force: true });
});

async function start(programId: PublicKey, programPath: string, dataDir?: string): Promise<TestDevnet> {
  const t = await startTestDevnet({
    programId: programId.toBase58(),
    programPath,
    ...(dataDir ? { dataDir } : {}),
  });
  running.push(t);
  return t;
}

async function stop(t: TestDevnet): Promise<string> {
  running.splice(running.indexOf(t), 1);
  await t.close({ keepDir: true });
  dirs.push(t.dir);
  return t.dir;
}

async function invoke(t: TestDevnet, programId: PublicKey, text: string): Promise<string[]> {
  const payer = Keypair.generate();
  await t.fund(payer, 1);
  const keys = [{ pubkey: payer.publicKey, isSigner: true, isWritable: false }];
  const ix = new TransactionInstruction({ programId, keys, data: Buffer.from(text) });
  const signature = await sendAndConfirmTransaction(t.conn, new Transaction().add(ix), [payer]);
  const landed = await t.conn.getTransaction(signature, { commitment: 'confirmed' });
  return landed?.meta?.logMessages ?? [];
}

describe('devnet programs', () => {
  it('deploys through the upgradeable loader: executable program account, ELF in ProgramData', async () => {
    const programId = Keypair.generate().publicKey;
    const t = await start(programId, files.memo);
    const program = await t.conn.getAccountInfo(programId);
    expect(program?.executable).toBe(true);
    expect(program?.owner.toBase58()).toBe(LOADER_ID.toBase58());
    const state = decodeLoaderState(program?.data ?? new Uint8Array(0));
    expect(state).toEqual({ kind: 'program', programData: programDataAddress(programId) });
    const data = await t.conn.getAccountInfo(programDataAddress(programId));
    expect(data?.owner.toBase58()).toBe(LOADER_ID.toBase58());
    const pd = decodeLoaderState(data?.data ?? new Uint8Array(0));
    if (pd.kind !== 'programData') throw new Error(`unexpected ${pd.kind}`);
    expect(pd.authority?.toBase58()).toBe(t.devnet.bank.faucetAddress);
    expect(Buffer.from(pd.bytes.subarray(0, memo.length)).equals(memo)).toBe(true);
    // Room to grow: twice the image, zero-filled.
    expect(pd.bytes.length).toBe(2 * memo.length);
    expect(pd.bytes.subarray(memo.length).every((b) => b === 0)).toBe(true);

    const logs = await invoke(t, programId, 'first');
    expect(logs[0]).toBe(`Program ${programId.toBase58()} invoke [1]`);
    expect(logs).toContain('Program log: Memo (len 5)');
    expect(logs.some((l) => /^Program \w+ consumed \d+ of 200000 compute units$/.test(l))).toBe(true);
  });

  it('keeps the program across a restart and upgrades it in place when the image changes', async () => {
    const programId = Keypair.generate().publicKey;
    const a = await start(programId, files.memo);
    const before = await a.conn.getAccountInfo(programId);
    const dir = await stop(a);

    const b = await start(programId, files.memo, dir);
    expect(await b.conn.getAccountInfo(programId)).toEqual(before);
    expect(await invoke(b, programId, 'again')).toContain('Program log: Signed by:');
    await stop(b);

    const c = await start(programId, files.patched, dir);
    expect(await c.conn.getAccountInfo(programId)).toEqual(before);
    const data = await c.conn.getAccountInfo(programDataAddress(programId));
    const pd = decodeLoaderState(data?.data ?? new Uint8Array(0));
    if (pd.kind !== 'programData') throw new Error(`unexpected ${pd.kind}`);
    expect(Buffer.from(pd.bytes.subarray(0, patched.length)).equals(patched)).toBe(true);
    expect(await invoke(c, programId, 'third')).toContain('Program log: SIGNED BY:');
  });

  it('runs the mail program binary at the default id, its ProgramData an SBF ELF (e_machine 247)', async () => {
    const t = await startTestDevnet();
    running.push(t);
    const programId = new PublicKey(DEFAULT_PROGRAM_ID);
    expect(t.devnet.programId).toBe(DEFAULT_PROGRAM_ID);
    const program = await t.conn.getAccountInfo(programId);
    expect(program?.executable).toBe(true);
    expect(program?.owner.toBase58()).toBe('BPFLoaderUpgradeab1e11111111111111111111111');
    const data = await t.conn.getAccountInfo(programDataAddress(programId));
    const pd = decodeLoaderState(data?.data ?? new Uint8Array(0));
    if (pd.kind !== 'programData') throw new Error(`unexpected ${pd.kind}`);
    const elf = Buffer.from(pd.bytes);
    expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    expect(elf.readUInt16LE(18)).toBe(247);
    const so = readFileSync(MAIL_PROGRAM_PATH);
    expect(elf.subarray(0, so.length).equals(so)).toBe(true);
  });
});
