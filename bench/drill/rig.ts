// A whole deployment as separate processes on loopback, the way an operator
// runs it: `sealpost devnet` (the chain), `sealpost pind` (operator pin and
// gateway), `sealpost serve` (MX + API) and `sealpost worker` processes,
// against Redis (the machine's, under a random prefix, or a private
// redis-server). Every process can be killed and started again with the
// same arguments, ports and data.
//
// With `fidelity` the chain is not a `sealpost devnet` process but a devnet
// started in this process (the same ports, data directory and slot time), so
// a drill can switch its fidelity mode, read its counters and roll slots
// back; the switches are applied once the stack is up (mailboxes made, every
// process ready) and the counters zeroed then.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@solana/web3.js';
import {
  type Devnet,
  type FidelityOptions,
  faucetKeypairPath,
  startDevnet,
} from '../../chain/devnet/server.ts';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import { dropSchema } from '../../test/support/postgres.ts';
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
  /**
   * `[redis]` keys written instead of `url` (e.g. `sentinels` and `name`,
   * test/support/redis-sentinel.ts); `redisUrl` is then only where close()
   * drops the prefix.
   */
  redisToml?: string;
  /** `[store] url`: a PostgreSQL URL (a schema of its own is made and dropped); default SQLite in the stack's directory. */
  postgresUrl?: string;
  /** Appended to the stack's config file before serve starts (e.g. `[blobs] backend = "postgres"`). */
  extraToml?: string;
  /** Called with the blob store's directory before serve starts (e.g. to mount a tmpfs there). */
  prepareBlobs?: (dir: string) => void;
  /** More recipient wallets with open mailboxes, made fast (bench/harness/wallets.ts); after `wallets` in `addresses()`. */
  manyWallets?: number;
  /** More `[chain]` keys for the stack's config (bench/harness/stack.ts writeStackConfig). */
  chain?: Record<string, string | number | boolean>;
  /**
   * Run the chain in this process (startDevnet) instead of a `sealpost
   * devnet` process, and turn these fidelity switches on (setFidelity) once
   * the stack is ready; the DrillStack's `devnet` is then its handle.
   */
  fidelity?: FidelityOptions;
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
  /** The domain authority: signs and pays for every SendMail. */
  authority: Keypair;
  adminToken: string;
  connection: Connection;
  devnet: Proc;
  pind: Proc;
  serve: Proc;
  workers: Proc[];
  addresses(): string[];
  close(): Promise<void>;
}

/** A drill stack whose chain runs in this process in fidelity mode (`startDrillStack({fidelity})`). */
export interface FidelityDrillStack extends Omit<DrillStack, 'devnet'> {
  /** The in-process devnet: setFidelity, fidelityStats, resetFidelityStats, rollbackSlots, bank. */
  devnet: Devnet;
}

/** A port P with P + 1 free too (devnet's WebSocket is the next port). */
async function pairPort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p < 65535 && (await canListen(p + 1))) return p;
  }
}

export function startDrillStack(
  opts: DrillStackOptions & { fidelity: FidelityOptions },
): Promise<FidelityDrillStack>;
export function startDrillStack(opts: DrillStackOptions): Promise<DrillStack>;
export async function startDrillStack(opts: DrillStackOptions): Promise<DrillStack | FidelityDrillStack> {
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
  let inProcess: Devnet | null = null;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const p of procs.slice().reverse()) await p.stop('SIGTERM').catch(() => undefined);
    await inProcess?.close().catch(() => undefined);
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
    let devnet: Proc | Devnet;
    let programId: string;
    if (opts.fidelity) {
      // What `sealpost devnet --data-dir <dir>/chain` runs: state under <data-dir>/devnet.
      inProcess = await startDevnet({
        dataDir: join(dir, 'chain', 'devnet'),
        host: '127.0.0.1',
        port: rpcPort,
        slotMs: 400,
      });
      devnet = inProcess;
      programId = inProcess.programId;
    } else {
      const proc = Proc.sealpost(
        'devnet',
        ['devnet', '--data-dir', join(dir, 'chain'), '--listen', `127.0.0.1:${rpcPort}`, '--slot-ms', '400'],
        /program id\s+(\S+)/,
      );
      procs.push(proc);
      const out = await proc.start();
      devnet = proc;
      programId = /program id\s+(\S+)/.exec(out)?.[1] as string;
    }
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
    if (opts.redisToml) {
      const text = readFileSync(configFile, 'utf8');
      const urlLine = `[redis]\nurl = "${redisUrl}"\n`;
      if (!text.includes(urlLine)) throw new Error('no [redis] url line in the stack config to replace');
      writeFileSync(configFile, text.replace(urlLine, `[redis]\n${opts.redisToml}\n`));
    }
    if (opts.extraToml) writeFileSync(configFile, `${readFileSync(configFile, 'utf8')}\n${opts.extraToml}\n`);
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
    if (inProcess && opts.fidelity) {
      inProcess.setFidelity(opts.fidelity);
      inProcess.resetFidelityStats();
    }
    const stack = {
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
      authority: keys.authority,
      adminToken: keys.adminToken,
      connection: new Connection(rpcUrl, 'confirmed'),
      pind,
      serve,
      workers,
      addresses: () => [...keys.wallets.map((w) => w.address), ...more].map((w) => `${w}@${STACK_DOMAIN}`),
      close,
    };
    return inProcess ? { ...stack, devnet: inProcess } : { ...stack, devnet: devnet as Proc };
  } catch (err) {
    await close();
    throw err;
  }
}
