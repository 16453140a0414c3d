// A whole deployment as separate processes on loopback, the way an operator
// runs it: `sealpost devnet` (the chain), `sealpost pind` (operator pin and
// gateway), `sealpost serve` (MX + API) and `sealpost worker` processes,
// against Redis (the machine's, under a random prefix, or a private
// redis-server). Every process can be killed and started again with the
// same arguments, ports and data.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@solana/web3.js';
import { faucetKeypairPath } from '../../chain/devnet/server.ts';
import type { Keypair } from '../../src/keys/keypair-file.ts';
import { dropSchema } from '../../test/helpers/postgres.ts';
import { canListen, freePort } from '../harness/net.ts';
import {
  dropRedisPrefix,
  prepareChain,
  randomPrefix,
  STACK_DOMAIN,
  writeStackConfig,
} from '../harness/stack.ts';
import { createOpenMailboxes } from '../harness/wallets.ts';
import { Proc } from './procs.ts';

export interface DrillStackOptions {
  wallets: number;
  /** Worker processes next to serve (default 1). */
  workers?: number;
  /** serve runs the pipeline workers itself (default: `serve --no-workers`). */
  workersInServe?: boolean;
  /** More `sealpost serve` arguments (e.g. `--workers 2` for that many serving processes). */
  serveArgs?: string[];
  /** Default: REDIS_URL or the machine's Redis on 6379 (keys under a random prefix). */
  redisUrl?: string;
  /** `[store] url`: a PostgreSQL URL (a schema of its own is made and dropped); default SQLite in the stack's directory. */
  postgresUrl?: string;
  /** Called with the blob store's directory before serve starts (e.g. to mount a tmpfs there). */
  prepareBlobs?: (dir: string) => void;
  /** More recipient wallets with open mailboxes, made fast (bench/harness/wallets.ts); after `wallets` in `addresses()`. */
  manyWallets?: number;
  /** More `[chain]` keys for the stack's config (bench/harness/stack.ts writeStackConfig). */
  chain?: Record<string, string | number | boolean>;
  label: string;
}

export interface DrillStack {
  dir: string;
  configFile: string;
  prefix: string;
  redisUrl: string;
  rpcUrl: string;
  gatewayUrl: string;
  apiUrl: string;
  mxPort: number;
  programId: string;
  blobDir: string;
  wallets: Keypair[];
  adminToken: string;
  connection: Connection;
  devnet: Proc;
  pind: Proc;
  serve: Proc;
  workers: Proc[];
  addresses(): string[];
  close(): Promise<void>;
}

/** A port P with P + 1 free too (devnet's WebSocket is the next port). */
async function pairPort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p < 65535 && (await canListen(p + 1))) return p;
  }
}

export async function startDrillStack(opts: DrillStackOptions): Promise<DrillStack> {
  const dir = mkdtempSync(join(tmpdir(), `sealpost-drill-${opts.label}-`));
  const redisUrl = opts.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = randomPrefix(`drill-${opts.label}`);
  // serve creates the schema on first open; close drops it.
  const schema = `sealpost_drill_${randomBytes(5).toString('hex')}`;
  const storeUrl = opts.postgresUrl ? `${opts.postgresUrl}?schema=${schema}` : undefined;
  const rpcPort = await pairPort();
  const [pindPort, mxPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const rpcUrl = `http://127.0.0.1:${rpcPort}`;
  const gatewayUrl = `http://127.0.0.1:${pindPort}`;
  const procs: Proc[] = [];
  const dataDir = join(dir, 'data');
  const blobDir = join(dataDir, 'blobs');
  mkdirSync(blobDir, { recursive: true });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const p of procs.slice().reverse()) await p.stop('SIGTERM').catch(() => undefined);
    await dropRedisPrefix(redisUrl, prefix);
    if (opts.postgresUrl) await dropSchema(schema, opts.postgresUrl).catch(() => undefined);
    try {
      execFileSync('umount', ['-l', blobDir], { stdio: 'ignore' });
    } catch {
      // not a mount point
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const devnet = Proc.sealpost(
      'devnet',
      ['devnet', '--data-dir', join(dir, 'chain'), '--listen', `127.0.0.1:${rpcPort}`, '--slot-ms', '400'],
      /program id\s+(\S+)/,
    );
    procs.push(devnet);
    const out = await devnet.start();
    const programId = /program id\s+(\S+)/.exec(out)?.[1] as string;
    const keys = await prepareChain({
      dir,
      rpcUrl,
      programId,
      wallets: opts.wallets,
      upgradeAuthorityFile: faucetKeypairPath(join(dir, 'chain', 'devnet')),
    });
    const more = opts.manyWallets
      ? await createOpenMailboxes({
          connection: new Connection(rpcUrl, 'confirmed'),
          programId,
          domain: STACK_DOMAIN,
          payer: keys.authority,
          count: opts.manyWallets,
        })
      : [];
    const configFile = writeStackConfig({
      dir,
      keysDir: keys.keysDir,
      rpcUrl,
      programId,
      pindUrl: gatewayUrl,
      gatewayUrl,
      redisUrl,
      prefix,
      mxPort,
      apiPort,
      dataDir,
      storeUrl,
      chain: opts.chain,
    });
    const pind = Proc.sealpost(
      'pind',
      ['pind', '--config', configFile, '--data-dir', join(dir, 'pind'), '--listen', `127.0.0.1:${pindPort}`],
      /gateway\s+\S+/,
    );
    procs.push(pind);
    await pind.start();
    opts.prepareBlobs?.(blobDir);
    const serve = Proc.sealpost(
      'serve',
      [
        'serve',
        '--config',
        configFile,
        ...(opts.workersInServe ? [] : ['--no-workers']),
        ...(opts.serveArgs ?? []),
      ],
      /pipeline workers:/,
    );
    procs.push(serve);
    await serve.start();
    const workers = Array.from({ length: opts.workers ?? 1 }, (_, i) =>
      Proc.sealpost(`worker-${i}`, ['worker', '--config', configFile], /pipeline workers running/),
    );
    procs.push(...workers);
    await Promise.all(workers.map((w) => w.start()));
    return {
      dir,
      configFile,
      prefix,
      redisUrl,
      rpcUrl,
      gatewayUrl,
      apiUrl: `http://127.0.0.1:${apiPort}`,
      mxPort,
      programId,
      blobDir,
      wallets: keys.wallets,
      adminToken: keys.adminToken,
      connection: new Connection(rpcUrl, 'confirmed'),
      devnet,
      pind,
      serve,
      workers,
      addresses: () => [...keys.wallets.map((w) => w.address), ...more].map((w) => `${w}@${STACK_DOMAIN}`),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
