// The BullMQ workers of the inbound side: deliveries, spool cleanup, the
// recipients' own pins, operator pin releases, DeleteMail and the opt-in
// rent-recovery sweep (./rent-recovery.ts). One call
// starts them all; `close()` stops taking jobs and waits for running ones.
import type { Connection, Keypair } from '@solana/web3.js';
import { type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { PriorityFeePolicy } from '../chain/client/compute-budget.ts';
import {
  type DeleteMailJobData,
  type DeliverJobData,
  type OutboundJobData,
  QUEUE_DELETE_MAIL,
  QUEUE_DELIVER,
  QUEUE_OUTBOUND,
  QUEUE_RECIPIENT_PIN,
  QUEUE_SPOOL,
  QUEUE_UNPIN,
  type RecipientPinJobData,
  type SpoolJobData,
  type UnpinJobData,
} from '../src/contracts/inbound-jobs.ts';
import type { Pinner } from '../src/contracts/pinner.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { Logger } from '../src/core/log.ts';
import type { PipelineMetrics } from '../src/core/metrics/types.ts';
import { holdGuard } from '../src/core/queue/hold.ts';
import type { AccountsRepo, IntentsRepo, MessagesRepo } from '../src/core/store/index.ts';
import type { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import { deliveryBackoff } from './backoff.ts';
import { closeEmailAccount, releaseOperatorPin, removeSpool } from './cleanup.ts';
import { Gate } from './gate.ts';
import { type PipelineDeps, processDeliverJob } from './pipeline.ts';
import { pinForRecipient } from './recipient-pin.ts';
import {
  type RentRecoveryMetrics,
  type RentRecoveryPolicy,
  type RentRecoveryRunner,
  settleRentRecovery,
  startRentRecovery,
} from './rent-recovery.ts';
import { RpcOutage } from './rpc-outage.ts';
import { SendMailBatcher } from './sendmail/batch.ts';
import { SignatureWatch } from './sendmail/signature-watch.ts';
import type { ReaderKey } from './stages/seal.ts';

export interface InboundWorkerOptions {
  /** A connection factory: BullMQ workers each need their own blocking connection. */
  redis: () => Redis;
  prefix: string;
  connection: Connection;
  programId: string;
  authority: Keypair;
  blobs: BlobStore;
  operatorPin: Pinner;
  messages: MessagesRepo;
  accounts: AccountsRepo;
  credentialKey: Uint8Array;
  localDomains: string[];
  hostname: string;
  logger: Logger;
  /** Deliveries at once (default 128; most of them wait for the chain). */
  concurrency?: number;
  /** Of those, how many seal at once (default 32: sealing holds the message in memory). */
  sealConcurrency?: number;
  recipientPinTimeoutMs?: number;
  pinTimeoutMs?: number;
  confirmTimeoutMs?: number;
  /** `[chain] pipeline_sendmail`. */
  pipelineSendMail?: boolean;
  /** `[chain] status_poll_ms`: the shortest time between two status polls (default: by the endpoint, SignatureWatch). */
  statusPollMs?: number;
  /** `[chain] sendmail_batch_max` / `sendmail_batch_wait_ms` (absent or max 1: one SendMail per transaction). */
  sendMailBatch?: { max: number; waitMs: number };
  readerKeys?: (wallet: string) => Promise<ReaderKey[]>;
  afterStore?: PipelineDeps['afterStore'];
  recipientPinner?: Parameters<typeof pinForRecipient>[0]['pinnerFor'];
  /** Stage latencies, deliveries and pin failures for /metrics. */
  metrics?: PipelineMetrics;
  /** `[chain] priority_fee`, `priority_fee_percentile`, `max_priority_fee_lamports` (priorityFeePolicyOf). */
  priorityFee?: PriorityFeePolicy;
  /** Exactly-once proof and final-failure timing (PipelineDeps; tests shorten them). */
  expiryGapMs?: number;
  maxResigns?: number;
  proofRetryMs?: number;
  /**
   * `[chain] rent_recovery_*` (rentRecoveryPolicyOf): the sweep's scheduler
   * and worker (delivery/rent-recovery.ts); days 0 removes the scheduler.
   * Absent: the schedule is left as it is.
   */
  rentRecovery?: RentRecoveryPolicy;
  rentRecoveryMetrics?: RentRecoveryMetrics;
  /** SendMail intents in the store (delivery/pipeline.ts): a job that lost its Redis state settles its own send. */
  intents?: IntentsRepo;
  /** The outbound ledger (src/core/store/outbound-ledger.ts): DSNs are recorded there before they are queued. */
  outboundLedger?: OutboundLedger;
}

export interface InboundWorkers {
  deliver: Worker<DeliverJobData>;
  close(): Promise<void>;
}

export async function startInboundWorkers(opts: InboundWorkerOptions): Promise<InboundWorkers> {
  const log = opts.logger.child({ component: 'pipeline' });
  const connections: Redis[] = [];
  const conn = () => {
    const c = opts.redis();
    connections.push(c);
    return c;
  };
  const shared = conn();
  const recipientPins = new Queue<RecipientPinJobData>(QUEUE_RECIPIENT_PIN, {
    connection: shared,
    prefix: opts.prefix,
  });
  const outbound = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: shared, prefix: opts.prefix });
  // One status poller and one batcher per process (delivery/sendmail/batch.ts).
  const watch = new SignatureWatch(opts.connection, undefined, { minPollMs: opts.statusPollMs });
  const batch = opts.sendMailBatch;
  const batcher =
    batch && batch.max > 1
      ? new SendMailBatcher({
          connection: opts.connection,
          programId: opts.programId,
          authority: opts.authority,
          redis: shared,
          lockPrefix: opts.prefix,
          watch,
          pipelined: opts.pipelineSendMail ?? true,
          maxPerTx: batch.max,
          lingerMs: batch.waitMs,
          confirmTimeoutMs: opts.confirmTimeoutMs,
          priorityFee: opts.priorityFee,
        })
      : undefined;
  const deps: PipelineDeps = {
    connection: opts.connection,
    programId: opts.programId,
    authority: opts.authority,
    redis: shared,
    prefix: opts.prefix,
    blobs: opts.blobs,
    operatorPin: opts.operatorPin,
    messages: opts.messages,
    accounts: opts.accounts,
    recipientPins,
    outbound,
    localDomains: opts.localDomains,
    hostname: opts.hostname,
    logger: log,
    readerKeys: opts.readerKeys,
    afterStore: opts.afterStore,
    pinTimeoutMs: opts.pinTimeoutMs,
    confirmTimeoutMs: opts.confirmTimeoutMs,
    pipelineSendMail: opts.pipelineSendMail,
    sendMailBatcher: batcher,
    sealGate: new Gate(opts.sealConcurrency ?? 32),
    signatureWatch: watch,
    metrics: opts.metrics,
    priorityFee: opts.priorityFee,
    expiryGapMs: opts.expiryGapMs,
    maxResigns: opts.maxResigns,
    proofRetryMs: opts.proofRetryMs,
    deliveryLogger: opts.logger.child({ component: 'delivery' }),
    intents: opts.intents,
    outboundLedger: opts.outboundLedger,
    rpcOutage: new RpcOutage(),
  };
  // A crashed worker's jobs are picked up again within seconds, and however
  // often a job is interrupted it is retried (stages resume), never failed
  // for stalling.
  const common = {
    prefix: opts.prefix,
    autorun: true,
    lockDuration: 15_000,
    stalledInterval: 5_000,
    maxStalledCount: 1_000_000,
  } as const;

  const deliver = new Worker<DeliverJobData>(
    QUEUE_DELIVER,
    // A job the operator holds (sealpost queue hold) is delayed without running (src/core/queue/hold.ts).
    holdGuard(shared, opts.prefix, (job: Job<DeliverJobData>, token) => processDeliverJob(deps, job, token)),
    {
      ...common,
      connection: conn(),
      concurrency: opts.concurrency ?? 128,
      settings: { backoffStrategy: deliveryBackoff },
    },
  );
  const spool = new Worker<SpoolJobData>(QUEUE_SPOOL, (job) => removeSpool(opts.blobs, job.data), {
    ...common,
    connection: conn(),
    concurrency: 8,
  });
  const recipient = new Worker<RecipientPinJobData>(
    QUEUE_RECIPIENT_PIN,
    (job) =>
      pinForRecipient(
        {
          accounts: opts.accounts,
          blobs: opts.blobs,
          credentialKey: opts.credentialKey,
          logger: log,
          timeoutMs: opts.recipientPinTimeoutMs ?? 30_000,
          pinnerFor: opts.recipientPinner,
        },
        job.data,
      ),
    { ...common, connection: conn(), concurrency: 8 },
  );
  recipient.on('failed', (job, err) => {
    // Logged and dropped: a recipient's provider never affects delivery.
    log.warn({ msgid: job?.data.msgid, wallet: job?.data.wallet, err: err.message }, 'recipient pin failed');
    opts.metrics?.recipientPinFailed();
  });
  deliver.on('completed', () => opts.metrics?.delivery('delivered'));
  deliver.on('failed', (job, err) => {
    // Counted once, when the job is given up (bounced), not on every retried attempt.
    if (err instanceof UnrecoverableError || (job && job.attemptsMade >= (job.opts.attempts ?? 1)))
      opts.metrics?.delivery('failed');
  });
  const unpin = new Worker<UnpinJobData>(
    QUEUE_UNPIN,
    (job) => releaseOperatorPin(opts.operatorPin, job.data),
    {
      ...common,
      connection: conn(),
      concurrency: 4,
    },
  );
  const deleteMail = new Worker<DeleteMailJobData>(
    QUEUE_DELETE_MAIL,
    async (job) => {
      const outcome = await closeEmailAccount(
        {
          connection: opts.connection,
          programId: opts.programId,
          authority: opts.authority,
          watch,
          priorityFee: opts.priorityFee,
        },
        job.data,
        (sent) => job.updateData({ ...job.data, sent }),
      );
      // Rent recovery's jobs: the copy's row records the close (delivery/rent-recovery.ts).
      await settleRentRecovery(
        { messages: opts.messages, metrics: opts.rentRecoveryMetrics },
        job.data,
        outcome,
      );
      return outcome;
    },
    { ...common, connection: conn(), concurrency: 4 },
  );
  const workers = [deliver, spool, recipient, unpin, deleteMail];
  for (const w of workers) {
    w.on('error', (err) => log.warn({ queue: w.name, err: err.message }, 'worker error'));
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const rentRecovery: RentRecoveryRunner | undefined = opts.rentRecovery
    ? await startRentRecovery({
        redis: opts.redis,
        prefix: opts.prefix,
        messages: opts.messages,
        connection: opts.connection,
        programId: opts.programId,
        authority: opts.authority.publicKey,
        policy: opts.rentRecovery,
        logger: log,
        metrics: opts.rentRecoveryMetrics,
      })
    : undefined;

  return {
    deliver,
    async close() {
      await rentRecovery?.close();
      await Promise.all(workers.map((w) => w.close()));
      batcher?.close();
      watch.close();
      await recipientPins.close();
      await outbound.close();
      await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
