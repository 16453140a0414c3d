// The rig of the delivery-pipeline tests that drive inbound jobs straight
// from acceptMessage: a temp dir with pind, a SQLite store and a blob store,
// real Redis under a random prefix, the BullMQ deliver/outbound queues, and
// the inbound workers started with the test's own options over the rig's
// defaults (one process, log lines collected). Everything it opens goes onto
// the test's cleanups.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { FlowProducer, type Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { acceptMessage } from '../../delivery/intake/accept.ts';
import {
  type InboundWorkerOptions,
  type InboundWorkers,
  startInboundWorkers,
} from '../../delivery/worker.ts';
import { createOperatorPinner } from '../../pinning/operator.ts';
import { startPind } from '../../pinning/pind/server.ts';
import {
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
} from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import type { IpfsConfig } from '../../src/core/config/types.ts';
import { newMessageId } from '../../src/core/log.ts';
import { AccountsRepo, MessagesRepo, openStore, type Store } from '../../src/core/store/index.ts';
import type { TestChain } from './devnet.ts';
import type { MailChain } from './mail-chain.ts';
import { LogLines } from './mx-rig.ts';
import { eventually, REDIS_URL } from './spooler-rig.ts';
import { tempDir } from './temp-dir.ts';

export interface DeliveryRig {
  dir: string;
  store: Store;
  prefix: string;
  redis: Redis;
  blobs: BlobStore;
  logs: LogLines;
  deliver: Queue<DeliverJobData>;
  outbound: Queue<OutboundJobData>;
  /** Inbound workers over the rig's defaults (chain connection, logs, one SendMail a transaction). */
  startWorkers(opts?: Partial<InboundWorkerOptions>): Promise<InboundWorkers>;
  /** Accepts one message from ann@remote.test to the wallets (one delivery job each); returns its msgid. */
  accept(wallets: string[], subject: string, attempts: number): Promise<string>;
  /**
   * Waits until the delivery job completes and returns it as read after completion (a job read
   * before its state is checked may be a snapshot from just before it finished, attemptsMade 0).
   * Throws when the job fails and `failedCounts(job)` says so (default: any failure).
   */
  completed(
    id: string,
    timeoutMs: number,
    failedCounts?: (job: Job<DeliverJobData>) => boolean,
  ): Promise<Job<DeliverJobData>>;
}

export async function startDeliveryRig(
  chain: TestChain,
  mail: MailChain,
  tag: string,
  cleanups: (() => Promise<unknown>)[],
): Promise<DeliveryRig> {
  const dir = tempDir(`sealpost-${tag}-`);
  const pind = await startPind({
    dataDir: join(dir, 'pind'),
    pin: { host: '127.0.0.1', port: 0 },
    maxPinBytes: 1 << 24,
    logger: pino({ level: 'silent' }),
  });
  cleanups.push(() => pind.close());
  const store = await openStore({ url: 'sqlite:sealpost.sqlite', dataDir: dir });
  cleanups.push(() => store.close());
  const prefix = `sptest-${tag}-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });
  const blobs = new BlobStore(join(dir, 'blobs'));
  const logs = new LogLines();
  const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: redis, prefix });
  const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: redis, prefix });
  cleanups.push(() => Promise.all([deliver.close(), outbound.close()]));
  return {
    dir,
    store,
    prefix,
    redis,
    blobs,
    logs,
    deliver,
    outbound,
    async startWorkers(opts = {}) {
      const workers = await startInboundWorkers({
        redis: () => new Redis(REDIS_URL, { maxRetriesPerRequest: null }),
        prefix,
        connection: chain.connection,
        programId: chain.programId,
        authority: mail.authority,
        blobs,
        operatorPin: createOperatorPinner({
          operator: 'pind',
          pind_url: pind.pinUrl,
          max_pin_bytes: 1 << 24,
        } as IpfsConfig),
        messages: new MessagesRepo(store.db),
        accounts: new AccountsRepo(store.db),
        credentialKey: new Uint8Array(32),
        localDomains: ['mail.test'],
        hostname: 'mx.mail.test',
        logger: pino({ level: 'info' }, logs.stream),
        sendMailBatch: { max: 1, waitMs: 0 },
        confirmTimeoutMs: 30_000,
        expiryGapMs: 300,
        proofRetryMs: 500,
        ...opts,
      });
      cleanups.push(() => workers.close());
      return workers;
    },
    async accept(wallets, subject, attempts) {
      const flow = new FlowProducer({ connection: redis, prefix });
      const msgid = newMessageId();
      const to = wallets.map((w) => `<${w}@mail.test>`).join(', ');
      const raw = `From: <ann@remote.test>\r\nTo: ${to}\r\nSubject: ${subject} ${msgid}\r\n\r\nhi\r\n`;
      await acceptMessage(
        { blobs, flow, attempts, backoffMs: 200 },
        {
          msgid,
          from: 'ann@remote.test',
          recipients: wallets.map((wallet) => ({
            address: `${wallet}@mail.test`,
            wallet,
            form: 'wallet' as const,
            exempt: false,
          })),
          remoteIp: '127.0.0.9',
          receivedAt: Date.now(),
          source: (async function* () {
            yield Buffer.from(raw);
          })(),
          maxBytes: 1 << 20,
        },
      );
      await flow.close();
      return msgid;
    },
    async completed(id, timeoutMs, failedCounts = () => true) {
      await eventually(async () => {
        const job = await deliver.getJob(id);
        if (!job) return undefined;
        const state = await job.getState();
        if (state === 'failed' && failedCounts(job)) throw new Error(`failed: ${job.failedReason}`);
        return state === 'completed' ? true : undefined;
      }, timeoutMs);
      const job = await deliver.getJob(id);
      if (!job) throw new Error(`job ${id} disappeared after completing`);
      return job;
    },
  };
}
