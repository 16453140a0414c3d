// Black-box: `sealpost dev` as a user runs it — a child process on random
// loopback ports — then the chain it prepared, read with web3.js.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Connection, PublicKey } from '@solana/web3.js';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { getDomain, getMailbox, getPostoffice } from '../chain/index.ts';
import { loadConfig } from '../src/config/index.ts';
import type { DevSummary } from '../src/dev/dev-stack.ts';
import { readKeypairFile } from '../src/keys/keypair-file.ts';
import { tempDir } from './helpers/temp-dir.ts';
import { withoutTrace } from './helpers/trace.ts';

const execFileP = promisify(execFile);
const BIN = resolve(import.meta.dirname, '..', 'bin', 'sealpost.js');
const running: ChildProcess[] = [];

const configFiles: string[] = [];

afterEach(async () => {
  for (const child of running.splice(0)) await stop(child);
  // The stack's queues live under the prefix its generated config names: remove them.
  for (const file of configFiles.splice(0)) {
    const { redis } = loadConfig(file);
    const client = new Redis(redis.url);
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${redis.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await client.del(...keys);
    } while (cursor !== '0');
    client.disconnect();
  }
});

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

/** Starts `sealpost dev` and resolves once it printed its summary. */
async function startDev(
  dataDir: string,
): Promise<{ child: ChildProcess; stdout: () => string; stderr: () => string }> {
  const child = spawn(
    process.execPath,
    [BIN, 'dev', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--slot-ms', '50', '--random-ports'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  running.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`sealpost dev did not come up:\n${err}`)), 45_000);
    const check = () => {
      if (out.includes('Press Ctrl-C')) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sealpost dev exited with ${code}:\n${err}`));
    });
  });
  return { child, stdout: () => out, stderr: () => err };
}

describe('sealpost dev', () => {
  it('starts devnet with a chain ready for mail, writes dev.json, and comes back to the same state', async () => {
    const dataDir = tempDir();
    const first = await startDev(dataDir);
    const summary = JSON.parse(readFileSync(join(dataDir, 'dev.json'), 'utf8')) as DevSummary;
    configFiles.push(summary.config_file);

    expect(first.stdout()).toContain(summary.chain.rpc_url);
    expect(first.stdout()).toContain(summary.wallets[0]?.address);
    expect(summary.domain).toBe('sealpost.localhost');
    expect(existsSync(summary.config_file)).toBe(true);
    // The accounts store is created and migrated at start.
    expect(existsSync(summary.store.url.replace(/^sqlite:/, ''))).toBe(true);
    expect(statSync(summary.keys.credential_key).size).toBe(32);
    expect(readFileSync(summary.keys.admin_token, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);

    const conn = new Connection(summary.chain.rpc_url, {
      commitment: 'confirmed',
      wsEndpoint: summary.chain.ws_url,
    });
    const programId = summary.program_id;
    const postoffice = await getPostoffice(conn, programId);
    expect(postoffice?.delegateAddress.toBase58()).toBe(summary.delegate);
    const domain = await getDomain(conn, programId, summary.domain);
    expect(domain?.isActive).toBe(true);
    expect(domain?.authority.toBase58()).toBe(summary.authority);
    expect(readKeypairFile(summary.keys.authority).address).toBe(summary.authority);

    expect(summary.wallets.map((w) => w.name)).toEqual(['open', 'postage']);
    for (const wallet of summary.wallets) {
      // Solana CLI keypair format: a JSON array of 64 byte values.
      const raw = JSON.parse(readFileSync(wallet.key_file, 'utf8')) as number[];
      expect(raw).toHaveLength(64);
      expect(statSync(wallet.key_file).mode & 0o777).toBe(0o600);
      expect(readKeypairFile(wallet.key_file).address).toBe(wallet.address);
      expect(await conn.getBalance(new PublicKey(wallet.address))).toBeGreaterThan(1_000_000_000);
      const mailbox = await getMailbox(conn, programId, wallet.address);
      expect(mailbox?.defaultPostage).toBe(BigInt(wallet.default_postage_lamports));
      expect(mailbox?.domain.toBase58()).toBe(
        (await import('../chain/index.ts')).domainAddress(programId, summary.domain)[0].toBase58(),
      );
    }
    expect(summary.wallets[0]?.default_postage_lamports).toBe('0');
    expect(BigInt(summary.wallets[1]?.default_postage_lamports ?? '0')).toBeGreaterThan(0n);

    // The whole stack answers: the account API, and a first mail over SMTP
    // to the open test wallet that its owner reads back with the CLI.
    const api = summary.components.find((c) => c.name === 'account API');
    expect((await fetch(`${api?.url}/v1/openapi.json`)).status).toBe(200);
    const mx = summary.components.find((c) => c.name.startsWith('smtp mx'));
    const open = summary.wallets[0];
    if (!mx || !open) throw new Error('no MX or wallet in the summary');
    const raw = 'From: newcomer@example.test\r\nSubject: first mail\r\n\r\nhello sealpost\r\n';
    await nodemailer
      .createTransport({
        host: '127.0.0.1',
        port: Number(new URL(mx.url).port),
        secure: false,
        ignoreTLS: true,
      })
      .sendMail({ envelope: { from: 'newcomer@example.test', to: [open.address_form] }, raw });
    let count = 0n;
    for (let i = 0; i < 200 && count === 0n; i++) {
      count = (await getMailbox(conn, programId, open.address))?.mailCount ?? 0n;
      if (count === 0n) await new Promise((r) => setTimeout(r, 100));
    }
    expect(count).toBe(1n);
    // Asynchronously, so this process keeps draining the dev stack's output pipes meanwhile.
    const read = await execFileP(
      process.execPath,
      [
        BIN,
        'mailbox',
        'read',
        '--key',
        open.key_file,
        '--config',
        summary.config_file,
        '--rpc',
        summary.chain.rpc_url,
        '--gateway',
        summary.components.find((c) => c.name === 'pind (IPFS gateway)')?.url ?? '',
      ],
      { encoding: 'utf8' },
    );
    expect(read.stderr).toContain('newcomer@example.test');
    // The message as sent under its trace fields.
    expect(withoutTrace(read.stdout)).toBe(raw);

    const balanceBefore = await conn.getBalance(new PublicKey(summary.authority));

    expect(await stop(first.child)).toBe(0);

    // Second run: same keys, same chain (persisted), nothing to do.
    const second = await startDev(dataDir);
    const again = JSON.parse(readFileSync(join(dataDir, 'dev.json'), 'utf8')) as DevSummary;
    expect(again.authority).toBe(summary.authority);
    expect(again.wallets.map((w) => w.address)).toEqual(summary.wallets.map((w) => w.address));
    expect(second.stderr()).toContain('chain already prepared');
    const conn2 = new Connection(again.chain.rpc_url, {
      commitment: 'confirmed',
      wsEndpoint: again.chain.ws_url,
    });
    expect(await conn2.getBalance(new PublicKey(summary.authority))).toBe(balanceBefore);
    expect(await getMailbox(conn2, programId, summary.wallets[1]?.address ?? '')).not.toBeNull();
  }, 120_000);
});
