// A 429 storm never spends a delivery attempt (issue 30): against a devnet
// in fidelity mode that answers HTTP 429 above one call a second, with
// `rpc_max_wait_secs = 1` (every call gives up with RpcUnavailableError at
// its first 429), a delivery job is run again and again without its
// `attemptsMade` growing, nothing is bounced, no line is logged per job; once
// the limit is lifted the message is delivered exactly once (one Email
// account with its CID). Real devnet, Redis (random prefix), pind.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../chain/index.ts';
import {
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
} from '../delivery/jobs.ts';
import { startInboundWorkers } from '../delivery/worker.ts';
import { createOperatorPinner } from '../pinning/operator.ts';
import { startPind } from '../pinning/pind/server.ts';
import { BlobStore } from '../src/blobs/blob-store.ts';
import { createConnection } from '../src/chain-rpc.ts';
import type { IpfsConfig } from '../src/config/types.ts';
import { newMessageId } from '../src/log.ts';
import { acceptMessage } from '../src/smtp/accept.ts';
import { AccountsRepo, MessagesRepo, openStore } from '../src/store/index.ts';
import { startTestChain } from './helpers/devnet.ts';
import { prepareMailChain } from './helpers/mail-chain.ts';
import { LogLines } from './helpers/mx-rig.ts';
import { eventually, REDIS_URL } from './helpers/spooler-rig.ts';
import { tempDir } from './helpers/temp-dir.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('a delivery while the chain RPC answers 429', { timeout: 180_000 }, () => {
  it('spends no attempt, bounces nothing, and delivers exactly once when the limit lifts', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, 'mail.test');
    const bob = await mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const dir = tempDir('sealpost-rpc429-');
    const pind = await startPind({
      dataDir: join(dir, 'pind'),
      pin: { host: '127.0.0.1', port: 0 },
      maxPinBytes: 1 << 24,
      logger: pino({ level: 'silent' }),
    });
    cleanups.push(() => pind.close());
    const store = await openStore({ url: 'sqlite:sealpost.sqlite', dataDir: dir });
    cleanups.push(() => store.close());
    const prefix = `sptest-rpc429-${randomBytes(6).toString('hex')}`;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    cleanups.push(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const blobs = new BlobStore(join(dir, 'blobs'));
    const logs = new LogLines();
    const logger = pino({ level: 'info' }, logs.stream);
    // As src/serve/serve.ts makes it, with `rpc_max_wait_secs = 1` and no client-side rate.
    const connection = createConnection(chain.devnet.rpcUrl, {
      maxRps: 0,
      maxWaitMs: 1000,
      log: logger.child({ component: 'chain-rpc' }),
    });
    const workers = await startInboundWorkers({
      redis: () => new Redis(REDIS_URL, { maxRetriesPerRequest: null }),
      prefix,
      connection,
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
      logger,
      sendMailBatch: { max: 1, waitMs: 0 },
      confirmTimeoutMs: 30_000,
      expiryGapMs: 300,
      proofRetryMs: 500,
    });
    cleanups.push(() => workers.close());
    // One call a second, Retry-After 1 s: a delivery's calls come faster, so it meets 429s throughout.
    chain.devnet.setFidelity({ maxRps: 1, retryAfterSecs: 1 });
    chain.devnet.resetFidelityStats();

    const flow = new FlowProducer({ connection: redis, prefix });
    const msgid = newMessageId();
    const raw = `From: <ann@remote.test>\r\nTo: <${wallet}@mail.test>\r\nSubject: storm ${msgid}\r\n\r\nhi\r\n`;
    // Two attempts: one spent on a 429 would show, two would bounce the message.
    await acceptMessage(
      { blobs, flow, attempts: 2, backoffMs: 200 },
      {
        msgid,
        from: 'ann@remote.test',
        recipients: [{ address: `${wallet}@mail.test`, wallet, form: 'wallet', exempt: false }],
        remoteIp: '127.0.0.9',
        receivedAt: Date.now(),
        source: (async function* () {
          yield Buffer.from(raw);
        })(),
        maxBytes: 1 << 20,
      },
    );
    await flow.close();
    const id = `${msgid}.0`;
    const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: redis, prefix });
    const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: redis, prefix });
    cleanups.push(() => Promise.all([deliver.close(), outbound.close()]));

    // The storm: the job keeps being run and delayed, never charged an attempt.
    const stormEnds = Date.now() + 8_000;
    let runs = 0;
    while (Date.now() < stormEnds) {
      const job = await deliver.getJob(id);
      // Should it get through between 429s after all, its completion is its one attempt (checked below).
      if (job && (await job.isCompleted())) break;
      if (job) {
        expect(job.attemptsMade, job.failedReason).toBe(0);
        expect(await job.isFailed()).toBe(false);
        runs = Math.max(runs, job.attemptsStarted);
      }
      await sleep(100);
    }
    const storm = chain.devnet.fidelityStats();
    expect(storm.rateLimited).toBeGreaterThan(0);
    // Run more than once: at least one run ended on a 429 and was delayed, not failed.
    expect(runs).toBeGreaterThan(1);

    chain.devnet.setFidelity({ maxRps: 0 });
    const done = await eventually(async () => {
      const job = await deliver.getJob(id);
      if (job && (await job.isFailed())) throw new Error(`failed: ${job.failedReason}`);
      return job && (await job.isCompleted()) ? job : undefined;
    }, 60_000);
    // The completion is the one attempt it spent.
    expect(done.attemptsMade).toBe(1);
    const cid = done.data.stages.pin?.cid;
    expect(cid).toBeTruthy();
    const inbox = await listInbox(chain.connection, chain.programId, bob.publicKey);
    expect(inbox.filter((e) => e.email.cid === cid)).toHaveLength(1);
    expect(inbox).toHaveLength(1);
    expect(await outbound.count()).toBe(0);
    // Logged once a minute at most, never once per job run.
    expect(logs.lines.filter((l) => /status=deferred|status=bounced/.test(String(l.msg)))).toHaveLength(0);
    expect(
      logs.lines.filter((l) => String(l.msg).startsWith('deliveries wait for the chain RPC')),
    ).toHaveLength(1);
    expect(logs.lines.filter((l) => l.component === 'chain-rpc' && l.cause === 'rate-limited')).toHaveLength(
      1,
    );
  });
});
