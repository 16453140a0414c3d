// One stack for the webmail end-to-end tests: `sealpost dev` on random
// loopback ports — devnet, pind, MX and pipeline over real Redis with a
// random prefix, and the account API serving the mail view and the webmail
// (built by the test run itself into a temp directory) — plus one headless
// Chromium (Debian's, driven by playwright-core).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { type Browser, chromium } from 'playwright-core';
import { build } from 'vite';
import { createMailboxInstruction } from '../../chain/client/index.ts';
import { type Config, loadConfig } from '../../src/core/config/index.ts';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { DEV_DOMAIN, type DevSummary, startDevStack } from '../../src/run/dev/dev-stack.ts';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = resolve(import.meta.dirname, '..', '..');

export interface WebmailStack {
  summary: DevSummary;
  config: Config;
  /** The page's origin: the dev stack's account API, which serves the webmail. */
  url: string;
  rpcUrl: string;
  gatewayUrl: string;
  pinUrl: string;
  mxPort: number;
  programId: string;
  connection: Connection;
  store: Store;
  webmailDir: string;
  /** The dev stack's open and postage test wallets. */
  openWallet: Keypair;
  postageWallet: Keypair;
  /** A funded wallet with a mailbox on the dev domain (postage 0 unless given). */
  newMailbox(opts?: { postage?: bigint; fund?: number }): Promise<Keypair>;
  funded(sol?: number): Promise<Keypair>;
  send(ixs: TransactionInstruction[], signers: Keypair[]): Promise<string>;
  close(): Promise<void>;
}

/** Runs `vite build` of webmail/ into `outDir`. */
export async function buildWebmail(outDir: string): Promise<void> {
  await build({
    configFile: join(ROOT, 'webmail/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
}

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

function component(summary: DevSummary, prefix: string): string {
  const c = summary.components.find((x) => x.name.startsWith(prefix));
  if (!c) throw new Error(`the dev stack has no ${prefix}`);
  return c.url;
}

export async function startWebmailStack(opts: { clock?: () => number } = {}): Promise<WebmailStack> {
  const base = mkdtempSync(join(tmpdir(), 'sealpost-webmail-'));
  const webmailDir = join(base, 'webmail');
  mkdirSync(webmailDir);
  await buildWebmail(webmailDir);
  const prefix = `spweb-${randomBytes(6).toString('hex')}`;
  const logger = pino({ level: 'silent' });
  // Closed last: the stack's keys under the random prefix go once everything has stopped.
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const closers: (() => Promise<unknown>)[] = [
    async () => {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
      redis.disconnect();
    },
  ];
  const close = async () => {
    for (const fn of closers.splice(0).reverse()) await fn().catch(() => {});
    rmSync(base, { recursive: true, force: true });
  };
  const dev = await startDevStack({
    dataDir: join(base, 'dev'),
    rpcPort: 0,
    randomPorts: true,
    // 100 ms slots, not the dev default of 400 ms: every on-chain step of a
    // test waits for its slot. A blockhash still lives 150 slots (15 s),
    // and the page takes a fresh one for each transaction it signs.
    slotMs: 100,
    clock: opts.clock,
    logger,
    configPatch: (c) => {
      c.redis.prefix = prefix;
      c.api.webmail_dir = webmailDir;
      c.api.rate_limit_ip_per_min = 0;
      c.api.rate_limit_wallet_per_min = 0;
    },
  }).catch(async (err) => {
    await close();
    throw err;
  });
  closers.push(() => dev.close());
  try {
    const summary = dev.summary;
    const pinUrl = component(summary, 'pind (pin surface)');
    const gatewayUrl = component(summary, 'pind (IPFS gateway)');
    const mx = new URL(component(summary, 'smtp mx'));
    const config = loadConfig(summary.config_file, { dataDirOverride: summary.data_dir });
    // The test's own handle on the dev stack's store (SQLite in WAL mode), for assertions.
    const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
    closers.push(() => store.close());
    const apiUrl = component(summary, 'account API');

    const connection = new Connection(summary.chain.rpc_url, 'confirmed');
    // A fresh blockhash per transaction: web3.js would reuse a cached one for up to 30 s.
    const send = async (ixs: TransactionInstruction[], signers: Keypair[]) => {
      const latest = await connection.getLatestBlockhash('confirmed');
      const tx = new Transaction({ feePayer: signers[0]?.publicKey, ...latest }).add(...ixs);
      tx.sign(...signers);
      const signature = await connection.sendRawTransaction(tx.serialize());
      const { value } = await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
      if (value.err) throw new Error(`transaction failed: ${JSON.stringify(value.err)}`);
      return signature;
    };
    const funded = async (sol = 10) => {
      const kp = Keypair.generate();
      const sig = await connection.requestAirdrop(kp.publicKey, sol * LAMPORTS_PER_SOL);
      const latest = await connection.getLatestBlockhash('confirmed');
      await connection.confirmTransaction({ signature: sig, ...latest }, 'confirmed');
      return kp;
    };
    const wallet = (name: string) => {
      const w = summary.wallets.find((x) => x.name === name);
      if (!w) throw new Error(`no ${name} wallet`);
      return Keypair.fromSecretKey(readKeypairFile(w.key_file).secretKey);
    };
    return {
      summary,
      config,
      url: apiUrl,
      rpcUrl: summary.chain.rpc_url,
      gatewayUrl,
      pinUrl,
      mxPort: Number(mx.port),
      programId: summary.program_id,
      connection,
      store,
      webmailDir,
      openWallet: wallet('open'),
      postageWallet: wallet('postage'),
      funded,
      send,
      async newMailbox(opts = {}) {
        const owner = await funded(opts.fund ?? 10);
        await send(
          [
            createMailboxInstruction({
              programId: summary.program_id,
              owner: owner.publicKey,
              domain: DEV_DOMAIN,
              defaultPostage: opts.postage ?? 0n,
            }),
          ],
          [owner],
        );
        return owner;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
