// devnet's ledger: a restart keeps accounts, balances, signature statuses,
// the slot height and recent blockhashes; a crash leaves every confirmed
// transaction on disk; a torn log tail is cut off; the ledger is locked.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
} from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevnet } from '../../chain/devnet/server.ts';
import { startTestDevnet, type TestDevnet, waitForStatus } from '../support/devnet-node.ts';

const running: TestDevnet[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const t of running.splice(0)) await t.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(dataDir?: string, opts: { logger?: pino.Logger } = {}): Promise<TestDevnet> {
  const t = await startTestDevnet({ mailProgram: false, ...(dataDir ? { dataDir } : {}), ...opts });
  running.push(t);
  return t;
}

async function transfer(t: TestDevnet, from: Keypair, to: Keypair, lamports: number): Promise<string> {
  const tx = new Transaction().add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports }),
  );
  return sendAndConfirmTransaction(t.conn, tx, [from]);
}

describe('devnet persistence', () => {
  it('keeps balances, statuses, slots and recent blockhashes across close and restart', async () => {
    const a = await start();
    const from = Keypair.generate();
    const to = Keypair.generate();
    await a.fund(from, 3);
    const signature = await transfer(a, from, to, LAMPORTS_PER_SOL);
    const latest = await a.conn.getLatestBlockhash('processed');
    const presigned = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports: 1000 }),
    );
    presigned.recentBlockhash = latest.blockhash;
    presigned.sign(from);
    const slotBefore = await a.conn.getSlot('processed');
    const genesis = await a.conn.getGenesisHash();
    const dir = a.dir;
    running.splice(running.indexOf(a), 1);
    await a.close({ keepDir: true });
    dirs.push(dir);

    const b = await start(dir);
    expect(await b.conn.getGenesisHash()).toBe(genesis);
    expect(await b.conn.getSlot('processed')).toBeGreaterThan(slotBefore);
    expect(await b.conn.getBalance(to.publicKey)).toBe(LAMPORTS_PER_SOL);
    expect(await b.conn.getBalance(from.publicKey)).toBe(2 * LAMPORTS_PER_SOL - 5000);
    const status = (await b.conn.getSignatureStatus(signature)).value;
    expect(status?.err).toBeNull();
    expect(['confirmed', 'finalized']).toContain(status?.confirmationStatus);
    expect((await b.conn.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))?.meta?.fee).toBe(
      5000,
    );
    expect((await b.conn.getSignaturesForAddress(to.publicKey)).map((s) => s.signature)).toEqual([signature]);
    // A blockhash handed out before the restart is still good.
    expect((await b.conn.isBlockhashValid(latest.blockhash, { commitment: 'processed' })).value).toBe(true);
    const again = await b.conn.sendRawTransaction(presigned.serialize());
    await waitForStatus(b.conn, again);
    // And a transaction from before the restart is still a duplicate.
    expect(
      (await b.rpc('sendTransaction', [presigned.serialize().toString('base64'), { encoding: 'base64' }]))
        .error?.data.err,
    ).toBe('AlreadyProcessed');
  });

  it('has every confirmed transaction on disk when the process dies, and cuts a torn tail', async () => {
    const a = await start();
    const from = Keypair.generate();
    const to = Keypair.generate();
    await a.fund(from, 3);
    const signature = await transfer(a, from, to, LAMPORTS_PER_SOL);
    await waitForStatus(a.conn, signature, 'confirmed');
    // What a crash right now leaves behind: the files as they are, a stale lock.
    const crashed = mkdtempSync(join(tmpdir(), 'sealpost-devnet-crash-'));
    dirs.push(crashed);
    cpSync(a.dir, crashed, { recursive: true });
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(join(crashed, 'ledger.lock'), `${deadPid}\n`);
    const log = join(crashed, 'ledger.log');
    const goodSize = statSync(log).size;
    expect(goodSize).toBeGreaterThan(0);
    // A record whose write was cut short: a length prefix promising more than follows.
    appendFileSync(log, Buffer.from([0xff, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56, 0x78, 0x7b, 0x22]));

    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const b = await start(crashed, { logger });
    expect(await b.conn.getBalance(to.publicKey)).toBe(LAMPORTS_PER_SOL);
    expect((await b.conn.getSignatureStatus(signature)).value?.err).toBeNull();
    expect(lines.some((l) => l.includes('torn or corrupt tail'))).toBe(true);
    expect(statSync(log).size).toBeGreaterThanOrEqual(goodSize);
    expect(
      readFileSync(log)
        .subarray(0, goodSize)
        .equals(readFileSync(join(a.dir, 'ledger.log')).subarray(0, goodSize)),
    ).toBe(true);
  });

  it('refuses a second node on the same ledger', async () => {
    const a = await start();
    await expect(startDevnet({ dataDir: a.dir, port: 0, mailProgram: false })).rejects.toThrow(
      /in use by process/,
    );
    // The first node is unharmed.
    expect((await a.rpc('getHealth')).result).toBe('ok');
  });
});
