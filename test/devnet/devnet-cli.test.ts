// `sealpost devnet` as a black box: start the CLI on random ports, use it over
// JSON-RPC, stop it with SIGTERM, start it again on the same data directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.ts';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

async function startCli(dataDir: string): Promise<{ child: ChildProcess; rpcUrl: string; wsUrl: string }> {
  const child = spawn(
    process.execPath,
    ['bin/sealpost.js', 'devnet', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--slot-ms', '50'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`devnet did not start: ${out}${err}`)), 20_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const rpc = /JSON-RPC\s+(\S+)/.exec(out)?.[1];
      const ws = /WebSocket\s+(\S+)/.exec(out)?.[1];
      if (rpc && ws) {
        clearTimeout(timer);
        resolve({ child, rpcUrl: rpc, wsUrl: ws });
      }
    });
    child.once('exit', (code) => reject(new Error(`devnet exited with ${code}: ${err}`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe('sealpost devnet', () => {
  it('serves JSON-RPC, shuts down cleanly on SIGTERM and keeps its state', async () => {
    const dataDir = tempDir('sealpost-devnet-cli-');
    const first = await startCli(dataDir);
    expect(Number(new URL(first.wsUrl).port)).toBe(Number(new URL(first.rpcUrl).port) + 1);
    const conn = new Connection(first.rpcUrl, { commitment: 'confirmed', wsEndpoint: first.wsUrl });
    const who = Keypair.generate();
    const signature = await conn.requestAirdrop(who.publicKey, 2 * LAMPORTS_PER_SOL);
    await conn.confirmTransaction({ signature, ...(await conn.getLatestBlockhash()) });
    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);
    expect(existsSync(join(dataDir, 'devnet', 'ledger.snapshot'))).toBe(true);
    expect(existsSync(join(dataDir, 'devnet', 'ledger.lock'))).toBe(false);

    const second = await startCli(dataDir);
    const again = new Connection(second.rpcUrl, 'confirmed');
    expect(await again.getBalance(who.publicKey)).toBe(2 * LAMPORTS_PER_SOL);
    expect((await again.getSignatureStatus(signature)).value?.err).toBeNull();
    second.child.kill('SIGINT');
    expect(await exited(second.child)).toBe(0);
  });
});
