// `sealpost dev --rpc` (startDevStack's rpcUrl) against a chain it does not
// run: it only checks, says what is missing, and starts no devnet of its own;
// `sealpost dev --fidelity` / `sealpost devnet --fidelity` reach the devnet.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { getPostoffice } from '../../chain/client/index.ts';
import { loadConfig } from '../../src/core/config/index.ts';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { bootstrapChain } from '../../src/run/dev/bootstrap-chain.ts';
import { DEV_DOMAIN, DEV_POSTAGE_LAMPORTS, startDevStack } from '../../src/run/dev/dev-stack.ts';
import { startTestChain } from '../support/devnet.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const silent = pino({ level: 'silent' });
const children: ChildProcess[] = [];
const configFiles: string[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const file of configFiles.splice(0)) {
    const { redis } = loadConfig(file);
    const client = createRedis(redis);
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${redis.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await client.del(...keys);
    } while (cursor !== '0');
    client.disconnect();
  }
});

describe('sealpost dev --rpc', () => {
  it('checks an unprepared chain and stops with what is missing; runs on a prepared one without a devnet', async () => {
    const chain = await startTestChain();
    const dataDir = tempDir('sealpost-dev-rpc-');
    configFiles.push(join(dataDir, 'sealpost.toml'));
    const options = {
      dataDir,
      rpcUrl: chain.devnet.rpcUrl,
      wsUrl: chain.devnet.wsUrl,
      randomPorts: true,
      logger: silent,
      configPatch: (c: { chain: { program_id: string } }) => {
        c.chain.program_id = chain.programId;
      },
    };
    const refused = await startDevStack(options).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/is not ready for mail/);
    expect(refused).toMatch(/postoffice of program \S+ is not initialized/);
    expect(refused).toMatch(/sealpost\.localhost is not authorized/);
    expect(refused).toMatch(/the domain authority key \S+ holds 0\.0000 SOL/);
    // Nothing was changed on that chain.
    const authority = readKeypairFile(join(dataDir, 'keys', 'authority.json'));
    expect(await chain.connection.getBalance(Keypair.fromSecretKey(authority.secretKey).publicKey)).toBe(0);
    expect(await getPostoffice(chain.connection, chain.programId)).toBeNull();
    expect(existsSync(join(dataDir, 'devnet'))).toBe(false);

    // Prepared by someone who can (here: with the devnet's faucet as the upgrade authority).
    const key = (name: string) => readKeypairFile(join(dataDir, 'keys', `${name}.json`));
    await bootstrapChain({
      connection: chain.connection,
      programId: chain.programId,
      domain: DEV_DOMAIN,
      authority: key('authority'),
      delegate: key('delegate'),
      upgradeAuthorityFile: chain.devnet.faucetKeypairFile,
      wallets: [
        { name: 'open', key: key('wallet-open'), defaultPostage: 0n },
        { name: 'postage', key: key('wallet-postage'), defaultPostage: DEV_POSTAGE_LAMPORTS },
      ],
      fundLamports: 2e9,
    });
    const checked = await bootstrapChain({
      connection: chain.connection,
      programId: chain.programId,
      domain: DEV_DOMAIN,
      authority: key('authority'),
      delegate: key('delegate'),
      upgradeAuthorityFile: 'not-read-in-check-mode.json',
      wallets: [{ name: 'open', key: key('wallet-open'), defaultPostage: 0n }],
      checkOnly: true,
    });
    expect(checked).toEqual({ performed: [], missing: [] });

    const stack = await startDevStack(options);
    try {
      expect(stack.summary.chain).toEqual({ rpc_url: chain.devnet.rpcUrl, ws_url: chain.devnet.wsUrl });
      expect(stack.summary.components[0]).toEqual({
        name: 'chain JSON-RPC (external)',
        url: chain.devnet.rpcUrl,
      });
      expect(stack.summary.processes).toEqual([]);
      expect(existsSync(join(dataDir, 'devnet'))).toBe(false);
      expect(loadConfig(join(dataDir, 'sealpost.toml')).chain.rpc_url).toBe(chain.devnet.rpcUrl);
    } finally {
      await stack.close();
    }
  }, 60_000);
});

describe('sealpost dev --fidelity', () => {
  it('prepares the chain and serves through a devnet in fidelity mode', async () => {
    const dataDir = tempDir('sealpost-dev-fidelity-');
    configFiles.push(join(dataDir, 'sealpost.toml'));
    const stack = await startDevStack({
      dataDir,
      rpcPort: 0,
      randomPorts: true,
      slotMs: 50,
      fidelity: 'agave,commitment',
      logger: silent,
    });
    try {
      const rpcUrl = stack.summary.chain.rpc_url;
      const answer = async (body: unknown) =>
        fetch(rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await answer({ jsonrpc: '2.0', id: 'x'.repeat(60_000), method: 'getSlot' })).status).toBe(413);
      const batch = (await (
        await answer([
          { jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'processed' }] },
          { jsonrpc: '2.0', id: 2, method: 'getBlockHeight', params: [{ commitment: 'processed' }] },
        ])
      ).json()) as { result: number }[];
      expect(batch[1]?.result).toBeLessThan(batch[0]?.result as number);
      expect(stack.summary.wallets.length).toBe(2);
    } finally {
      await stack.close();
    }
  }, 60_000);
});

function startCli(args: string[]): Promise<{ child: ChildProcess; out: string; rpcUrl: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  return new Promise((resolveStarted, reject) => {
    const timer = setTimeout(() => reject(new Error(`devnet did not start: ${out}${err}`)), 20_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const rpc = /JSON-RPC\s+(\S+)/.exec(out)?.[1];
      if (rpc && /faucet[^\n]*\n(?:\s+fidelity[^\n]*\n)?/.test(out)) {
        clearTimeout(timer);
        resolveStarted({ child, out, rpcUrl: rpc });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${err}`));
    });
  });
}

describe('sealpost devnet --fidelity', () => {
  it('starts the devnet with the switches and refuses a bad spec', async () => {
    const dataDir = tempDir('sealpost-devnet-fidelity-');
    const { out, rpcUrl } = await startCli([
      'devnet',
      '--data-dir',
      dataDir,
      '--listen',
      '127.0.0.1:0',
      '--slot-ms',
      '50',
      '--fidelity',
      'agave,gpa=refuse',
    ]);
    expect(out).toMatch(/fidelity\s+agaveLimits=true programAccounts=refuse\n/);
    const big = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'x'.repeat(60_000), method: 'getSlot' }),
    });
    expect(big.status).toBe(413);
    const gpa = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'getProgramAccounts',
        params: [Keypair.generate().publicKey.toBase58()],
      }),
    });
    expect(((await gpa.json()) as { error: { code: number } }).error.code).toBe(-32010);

    const bad = spawn(process.execPath, [BIN, 'devnet', '--data-dir', dataDir, '--fidelity', 'drop=7'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(bad);
    let err = '';
    bad.stderr?.on('data', (d) => {
      err += d;
    });
    const code = await new Promise<number | null>((r) => bad.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(err).toMatch(/dropRate must be in 0\.\.1/);
  }, 40_000);
});
