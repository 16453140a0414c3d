// Sealpost in this process for the harness: devnet, pind and `startServe`.
// For the MX-accept comparison with the SMTP listener only (the shape of
// `sealpost serve --no-workers`): the 250 comes after the spool fsync and the
// delivery jobs in Redis, and no worker runs, just as the peers only queue.
// For end to end with the pipeline workers too (the shape of `sealpost serve`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@solana/web3.js';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { startDevnet } from '../../chain/devnet/server.ts';
import { startPind } from '../../pinning/pind/server.ts';
import { QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { type Config, loadConfig } from '../../src/core/config/index.ts';
import { startServe } from '../../src/run/serve/serve.ts';
import { dropRedisPrefix, prepareChain, randomPrefix, STACK_DOMAIN, writeStackConfig } from './stack.ts';
import { createOpenMailboxes } from './wallets.ts';

export interface SealpostMx {
  port: number;
  /** An address that resolves to a mailbox on chain (the first of `rcpts`). */
  rcpt: string;
  rcpts: string[];
  redisUrl: string;
  prefix: string;
  /** Mean duration of each pipeline stage so far, from the process's own metrics. */
  stageMeans(): Promise<Record<string, { count: number; meanMs: number }>>;
  /** Delivery jobs queued so far (one per acknowledged recipient). */
  queued(): Promise<number>;
  /** CPU ms used so far by each of the stack's own processes (with their children), when it runs in other processes than this one. */
  cpuMs?(): Record<string, number>;
  stop(): Promise<void>;
}

export interface SealpostMxOptions {
  workers?: boolean;
  /** Wallets made by bootstrapChain (keys on disk). */
  wallets?: number;
  /** More recipient wallets with open mailboxes, made fast (bench/harness/wallets.ts); after `wallets` in `rcpts`. */
  manyWallets?: number;
  /** `serve --concurrency`: deliveries one worker process runs at once. */
  workerConcurrency?: number;
  /** `[chain]` settings over the harness's config (e.g. SendMail batching off for an A/B). */
  chain?: Partial<Config['chain']>;
}

/** Delivery jobs in Redis under the prefix, whatever their state (one per acknowledged recipient). */
export async function deliverJobCount(redisUrl: string, prefix: string): Promise<number> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const q = new Queue(QUEUE_DELIVER, { connection, prefix });
  try {
    const c = await q.getJobCounts('wait', 'active', 'delayed', 'completed', 'failed');
    return Object.values(c).reduce((a, b) => a + b, 0);
  } finally {
    await q.close();
    connection.disconnect();
  }
}

export async function startSealpostMx(opts: SealpostMxOptions = {}): Promise<SealpostMx> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-mx-'));
  const silent = pino({ level: 'silent' });
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = randomPrefix('bench-mx');
  const devnet = await startDevnet({
    dataDir: join(dir, 'devnet'),
    host: '127.0.0.1',
    port: 0,
    logger: silent,
  });
  const closers: (() => Promise<void>)[] = [
    () => devnet.close(),
    async () => rmSync(dir, { recursive: true, force: true }),
  ];
  const stop = async () => {
    for (const fn of closers.splice(0).reverse()) await fn().catch(() => undefined);
  };
  try {
    const keys = await prepareChain({
      dir,
      rpcUrl: devnet.rpcUrl,
      programId: devnet.programId,
      wallets: opts.wallets ?? 1,
      upgradeAuthorityFile: devnet.faucetKeypairFile,
    });
    const pind = await startPind({
      dataDir: join(dir, 'pind'),
      pin: { host: '127.0.0.1', port: 0 },
      maxPinBytes: 32 << 20,
      logger: silent,
    });
    closers.push(() => pind.close());
    const configFile = writeStackConfig({
      dir,
      keysDir: keys.keysDir,
      rpcUrl: devnet.rpcUrl,
      programId: devnet.programId,
      pindUrl: pind.pinUrl,
      gatewayUrl: pind.gatewayUrl,
      redisUrl,
      prefix,
      mxPort: 2525,
      apiPort: 8080,
    });
    const config = loadConfig(configFile);
    Object.assign(config.chain, opts.chain);
    const more = opts.manyWallets
      ? await createOpenMailboxes({
          connection: new Connection(devnet.rpcUrl, 'confirmed'),
          programId: devnet.programId,
          domain: STACK_DOMAIN,
          payer: keys.authority,
          count: opts.manyWallets,
        })
      : [];
    closers.push(() => dropRedisPrefix(redisUrl, prefix));
    const serving = await startServe({
      config,
      logger: silent,
      components: { smtp: true, workers: opts.workers ?? false, api: false },
      listenerOverrides: [{ host: '127.0.0.1', port: 0 }],
      mailAccess: { imap: false, pop3: false },
      workerConcurrency: opts.workerConcurrency,
    });
    closers.push(() => serving.close());
    const mx = serving.listeners.find((l) => l.mode === 'mx');
    if (!mx) throw new Error('no MX listener');
    const rcpts = [...keys.wallets.map((w) => w.address), ...more].map((w) => `${w}@${STACK_DOMAIN}`);
    return {
      port: mx.port,
      rcpt: rcpts[0] as string,
      rcpts,
      redisUrl,
      prefix,
      stageMeans: () => serving.prometheus.stageMeans(),
      queued: () => deliverJobCount(redisUrl, prefix),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
