// One delivery job, stage by stage. A finished stage is written into the
// job's data before anything that depends on it being done once happens, so
// a retried (or crashed and re-run) job resumes after the last written stage
// and never redoes what must not be redone. Stages: resolve → seal → pin →
// submit (SendMail) → store → queue the recipient's own pin (best effort).
// Stages whose rerun is harmless are written together with the next one,
// saving a Redis write each (docs/inbound.md "The pipeline"): resolve (a
// fresh read) with seal; pin (the same sealed bytes give the same CID) with
// submit's record before sending; submit's confirmation (a retry asks the
// chain about the recorded signature), store (idempotent per copy id) and
// the recipient pin (queued under a job id of its own) with the job's
// completion. So a delivery writes its job twice: after seal, and with
// SendMail's record before the transaction goes out.
// With SendMail's record the same stages go to the store too (the copy's
// intent, src/core/store/intents-repo.ts), before the transaction goes out: a job
// that starts without a confirmed record (rebuilt from the spool after Redis
// lost it, or rolled back with Redis's AOF) loads it and settles that
// transaction (the exactly-once proof in ./stages/submit.ts) with the SAME
// sealed body and CID before anything is signed again.
import type { Connection, Keypair } from '@solana/web3.js';
import type { Queue } from 'bullmq';
import { DelayedError, type Job, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import type { PriorityFeePolicy } from '../chain/client/compute-budget.ts';
import type {
  DeliverJobData,
  OutboundJobData,
  RecipientPinJobData,
  StageResults,
} from '../src/contracts/inbound-jobs.ts';
import type { Pinner } from '../src/contracts/pinner.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { Logger } from '../src/core/log.ts';
import { type PipelineMetrics, timeStage } from '../src/core/metrics/types.ts';
import { rpcUnavailableIn } from '../src/core/net/rpc-discipline.ts';
import type { AccountsRepo, IntentsRepo, MessagesRepo } from '../src/core/store/index.ts';
import type { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import { bounce } from './bounce.ts';
import { PendingError, PermanentDeliveryError, UnprovenExpiryError } from './errors.ts';
import type { Gate } from './gate.ts';
import { RpcOutage } from './rpc-outage.ts';
import type { SendMailBatcher } from './sendmail/batch.ts';
import type { SignatureWatch } from './sendmail/signature-watch.ts';
import { attestedSenderOf } from './stages/attest.ts';
import { pinStage } from './stages/pin.ts';
import { resolveStage } from './stages/resolve.ts';
import { type ReaderKey, sealStage } from './stages/seal.ts';
import { storeStage } from './stages/store.ts';
import { finalOutcome, submitSendMail } from './stages/submit.ts';

export interface PipelineDeps {
  connection: Connection;
  programId: string;
  authority: Keypair;
  redis: Redis;
  /** Redis key prefix for the pipeline's own keys (locks). */
  prefix: string;
  blobs: BlobStore;
  operatorPin: Pinner;
  messages: MessagesRepo;
  accounts: AccountsRepo;
  recipientPins: Queue<RecipientPinJobData>;
  outbound: Queue<OutboundJobData>;
  localDomains: string[];
  hostname: string;
  logger: Logger;
  readerKeys?: (wallet: string) => Promise<ReaderKey[]>;
  /** Called after a copy is stored (e.g. DMARC report ingest); its errors are logged, never fail delivery. */
  afterStore?: (data: DeliverJobData, stages: StageResults) => Promise<void>;
  pinTimeoutMs?: number;
  confirmTimeoutMs?: number;
  /** `[chain] pipeline_sendmail` (delivery/stages/submit.ts). */
  pipelineSendMail?: boolean;
  /** The process's SendMail batcher and status poller (delivery/sendmail/batch.ts). */
  sendMailBatcher?: SendMailBatcher;
  signatureWatch?: SignatureWatch;
  /** Bounds how many deliveries seal at once (each holds its message in memory meanwhile). */
  sealGate?: Gate;
  /** Stage latencies and failures for /metrics (src/core/metrics). */
  metrics?: PipelineMetrics;
  /** `[chain] priority_fee` & co. for every SendMail (delivery/priority-fee.ts). */
  priorityFee?: PriorityFeePolicy;
  /** The gap between the two "expired" observations of a proof (submit.ts; default 3 s). */
  expiryGapMs?: number;
  /** Re-signs within one attempt (submit.ts; default 3). */
  maxResigns?: number;
  /** How soon a failed job whose SendMail's expiry is not proven looks again (default 5 s). */
  proofRetryMs?: number;
  /** Where final failures with an unconfirmed SendMail are logged (`component=delivery`); default `logger`. */
  deliveryLogger?: Logger;
  /** SendMail intents in the store (see the header); absent: Redis's job data is the only record. */
  intents?: IntentsRepo;
  /** The outbound ledger: a bounce's DSN is recorded there before it is queued (./bounce.ts). */
  outboundLedger?: OutboundLedger;
  /** The process's view of a chain RPC outage (./rpc-outage.ts); default: one shared by the module. */
  rpcOutage?: RpcOutage;
}

const sharedOutage = new RpcOutage();

export interface DeliverResult {
  emailAddress: string;
  cid: string;
  signature: string;
}

export async function runDelivery(
  deps: PipelineDeps,
  copyId: string,
  data: DeliverJobData,
  save: (data: DeliverJobData) => Promise<void>,
): Promise<DeliverResult> {
  const stages = data.stages;
  // Finished stages not written yet (written with the next one, or when the job fails),
  // and the SendMail record a failed job may keep (never one whose own write failed).
  let unsaved = false;
  let keptSubmit = stages.submit;
  const checkpoint = async () => {
    await save({ ...data, stages });
    unsaved = false;
  };
  const log = deps.logger.child({ msgid: data.msgid, copy: copyId });
  try {
    return await runStages();
  } catch (err) {
    // A failure (as opposed to a crash) keeps its progress, as if every stage had been written.
    if (unsaved) await save({ ...data, stages: { ...stages, submit: keptSubmit } }).catch(() => undefined);
    throw err;
  }

  /**
   * The copy's intent from the store, when it is newer than what the job
   * holds (no SendMail record, or one of an earlier signing round): its
   * stages replace the job's, so the recorded transaction is settled and its
   * sealed body reused.
   */
  async function adoptIntent(intents: IntentsRepo): Promise<void> {
    const intent = await intents.get(copyId);
    const rec = intent?.record;
    if (!rec?.submit || !rec.seal || !rec.pin) return;
    const recorded = rec.submit as unknown as NonNullable<StageResults['submit']>;
    const mine = stages.submit;
    if (mine && (mine.signature === recorded.signature || (recorded.round ?? 1) < (mine.round ?? 1))) return;
    if (rec.resolve) stages.resolve = rec.resolve as StageResults['resolve'];
    stages.seal = rec.seal;
    stages.pin = rec.pin;
    stages.submit = recorded;
    keptSubmit = recorded;
    unsaved = true;
    log.warn(
      {
        wallet: data.wallet,
        cid: rec.pin.cid,
        sig: recorded.signature,
        since: recorded.since ?? recorded.index,
      },
      `SendMail record of ${copyId} recovered from the store (the job had ${mine ? 'an older one' : 'none'}); settling it before any new signing`,
    );
  }

  /** The Junk copy kept off chain: a store row with no CID, Email account or signature. */
  async function storeOffChain(seal: NonNullable<StageResults['seal']>): Promise<DeliverResult> {
    if (!stages.store) {
      stages.store = await timeStage(deps.metrics, 'store', async () => {
        const { message } = await deps.messages.storeDelivered({
          id: copyId,
          wallet: data.wallet,
          blobKey: seal.blobKey,
          size: seal.size,
          receivedAt: data.receivedAt,
          cid: null,
          pinnedByOperator: false,
          chainIndex: null,
          emailAddress: null,
          txSignature: null,
          publishedByUs: false,
          wraps: seal.wraps,
          folder: 'Junk',
        });
        return { messageId: message.id };
      });
      unsaved = true;
      if (deps.afterStore) {
        await deps
          .afterStore(data, stages)
          .catch((err: Error) => log.warn({ err: err.message }, 'after-store hook failed'));
      }
    }
    if (data.removesSpool) await removeOwnSpool(deps, data, log);
    log.info(
      {
        to: data.envelope.to,
        wallet: data.wallet,
        status: 'junk',
        spam: data.trace?.spam?.action,
        score: data.trace?.spam?.score,
      },
      `inbound delivery to=<${data.envelope.to}> status=junk (sealed, filed in Junk, not published on chain)`,
    );
    return { emailAddress: '', cid: '', signature: '' };
  }

  async function runStages(): Promise<DeliverResult> {
    if (deps.intents && !stages.submit?.confirmed) await adoptIntent(deps.intents);
    if (!stages.resolve) {
      // Written with seal's result.
      stages.resolve = await timeStage(deps.metrics, 'resolve', () => resolveStage(deps, data.wallet));
      unsaved = true;
    }
    if (!stages.seal) {
      const resolved = stages.resolve;
      const attested = await attestedSenderOf(deps, data.envelope.from, data.trace);
      const seal = () =>
        sealStage(deps, {
          attested,
          spoolKey: data.spoolKey,
          wallet: data.wallet,
          envelope: data.envelope,
          receivedAt: data.receivedAt,
          resolve: resolved,
          queueId: data.msgid,
          hostname: deps.hostname,
          mx: data.trace,
        });
      stages.seal = await timeStage(deps.metrics, 'seal', () =>
        deps.sealGate ? deps.sealGate.run(seal) : seal(),
      );
      await checkpoint();
    }
    // Flagged by rspamd with `[spam] publish_junk = false`: sealed and filed
    // in the recipient's Junk folder for server-mode readers, never pinned
    // nor sent on chain (docs/inbound.md "Spam").
    if (data.trace?.spam?.junk && !data.trace.spam.publish) return storeOffChain(stages.seal);
    if (!stages.pin) {
      const sealed = stages.seal;
      const noIpfs = stages.resolve.noIpfs;
      stages.pin = await timeStage(deps.metrics, 'pin', () =>
        pinStage(
          { blobs: deps.blobs, operatorPin: deps.operatorPin, timeoutMs: deps.pinTimeoutMs },
          sealed,
          noIpfs,
        ),
      );
      // Written with submit's record of the transaction (before it is sent), or with store's.
      unsaved = true;
    }
    if (!stages.submit?.confirmed) {
      const cid = stages.pin.cid;
      const intents = deps.intents;
      stages.submit = await timeStage(deps.metrics, 'submit', () =>
        submitSendMail(
          {
            connection: deps.connection,
            programId: deps.programId,
            authority: deps.authority,
            redis: deps.redis,
            lockPrefix: deps.prefix,
            confirmTimeoutMs: deps.confirmTimeoutMs,
            pipelined: deps.pipelineSendMail,
            batcher: deps.sendMailBatcher,
            watch: deps.signatureWatch,
            priorityFee: deps.priorityFee,
            expiryGapMs: deps.expiryGapMs,
            maxResigns: deps.maxResigns,
            batchRecorded: intents ? (signature) => intents.countWithSignature(signature) : undefined,
          },
          {
            wallet: data.wallet,
            envelopeFrom: data.envelope.from,
            // The mailbox's own domain among these, whichever local domain the address named.
            localDomains: deps.localDomains,
            cid,
            previous: stages.submit,
            checkpoint: async (submit) => {
              stages.submit = submit;
              // Redis's job and the store's intent, both before the transaction goes out.
              const intent = deps.intents?.record(copyId, data.wallet, {
                resolve: stages.resolve,
                seal: stages.seal,
                pin: stages.pin,
                submit,
              });
              await Promise.all([checkpoint(), intent]);
              keptSubmit = submit;
            },
          },
        ),
      );
      // The confirmation is kept with the job's completion.
      keptSubmit = stages.submit;
      unsaved = true;
    }
    if (!stages.store) {
      const done = { seal: stages.seal, pin: stages.pin, submit: stages.submit };
      stages.store = await timeStage(deps.metrics, 'store', () =>
        storeStage(deps.messages, {
          copyId,
          wallet: data.wallet,
          receivedAt: data.receivedAt,
          stages: done,
          folder: data.trace?.spam?.junk ? 'Junk' : undefined,
        }),
      );
      // Kept with the job's completion: a re-run finds the SendMail landed
      // (one status read), stores nothing twice (idempotent per copy id) and
      // the after-store hook skips what it already took (DMARC reports by id).
      unsaved = true;
      if (deps.afterStore) {
        await deps
          .afterStore(data, stages)
          .catch((err: Error) => log.warn({ err: err.message }, 'after-store hook failed'));
      }
    }
    if (!stages.recipientPin) {
      // Rule 4: no_ipfs wins over the recipient's provider. Rule 5: only mail
      // delivered while a provider is configured is pinned there.
      const provider = stages.resolve.noIpfs ? undefined : await deps.accounts.getPinProvider(data.wallet);
      if (provider) {
        await deps.recipientPins.add(
          'recipient-pin',
          { msgid: data.msgid, wallet: data.wallet, blobKey: stages.seal.blobKey, cid: stages.pin.cid },
          {
            jobId: `rp-${copyId}`,
            attempts: 3,
            backoff: { type: 'exponential', delay: 2000 },
            removeOnComplete: 1000,
            removeOnFail: 5000,
          },
        );
      }
      // Kept with the job's completion (a re-run queues the same job id again).
      stages.recipientPin = { queued: Boolean(provider) };
      unsaved = true;
    }
    // The only copy of a one-recipient message is stored (and the after-store
    // hook has read the raw message): nothing reads the spool file again. A
    // crash before this line re-runs the job, which gets here again; a failed
    // unlink is left to the orphan sweep (src/core/blobs/orphan-sweep.ts).
    if (data.removesSpool) await removeOwnSpool(deps, data, log);
    log.info(
      {
        to: data.envelope.to,
        wallet: data.wallet,
        delay: `${((Date.now() - data.receivedAt) / 1000).toFixed(1)}s`,
        status: 'sent',
        email: stages.submit.emailAddress,
        cid: stages.pin.cid,
        sig: stages.submit.signature,
      },
      `inbound delivery to=<${data.envelope.to}> status=sent (sealed, published on chain)`,
    );
    return {
      emailAddress: stages.submit.emailAddress,
      cid: stages.pin.cid,
      signature: stages.submit.signature,
    };
  }
}

/** The BullMQ processor: runs the stages and, when the job finally fails, bounces it. */
export async function processDeliverJob(
  deps: PipelineDeps,
  job: Job<DeliverJobData>,
  token?: string,
): Promise<DeliverResult> {
  const copyId = job.id ?? `${job.data.msgid}.?`;
  const wait = async (ms: number): Promise<never> => {
    if (!token) throw new PendingError('no worker token to wait with', ms);
    await job.moveToDelayed(Date.now() + ms, token);
    throw new DelayedError();
  };
  try {
    // Out of attempts and waiting for its SendMail's expiry proof: only the proof is read again, nothing re-run.
    if (job.data.exhausted) throw new Exhausted(job.data.exhausted.error);
    const result = await runDelivery(deps, copyId, job.data, (d) => job.updateData(d));
    deps.metrics?.awaitingProof?.(copyId, false);
    (deps.rpcOutage ?? sharedOutage).clear();
    return result;
  } catch (err) {
    if (err instanceof DelayedError) throw err;
    if (err instanceof PendingError && token) {
      // The transaction may still land: look again shortly without spending an attempt.
      deps.metrics?.awaitingProof?.(copyId, err instanceof UnprovenExpiryError);
      return wait(err.retryAfterMs);
    }
    const unavailable = rpcUnavailableIn(err);
    if (unavailable && token) {
      // The endpoint (a 429 storm past rpc_max_wait_secs, 5xx), not the message, failed: the job
      // comes back when the endpoint said to, spending no attempt. Stages resume as after any
      // retry (a recorded SendMail is settled, never signed again unproven). Logged once a minute.
      return wait((deps.rpcOutage ?? sharedOutage).defer(unavailable.retryAt, deps.logger));
    }
    deps.metrics?.awaitingProof?.(copyId, false);
    const permanent = err instanceof UnrecoverableError;
    const lastAttempt = err instanceof Exhausted || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const log = deps.logger.child({ msgid: job.data.msgid, copy: copyId });
    const message = err instanceof Error ? err.message : String(err);
    if (permanent || lastAttempt) {
      const submit = job.data.stages.submit;
      const unconfirmed = submit?.signature && !submit.confirmed ? submit : undefined;
      let status = permanent ? permanentStatus(err) : '5.4.7';
      let diagnostic = publicReason(err);
      if (unconfirmed && !permanent) {
        // A SendMail that may still land must not be bounced: its outcome decides (docs/inbound.md
        // "After the last attempt"). Read without sending; nothing is signed here.
        const outcome = await finalOutcome(
          {
            connection: deps.connection,
            programId: deps.programId,
            authority: deps.authority,
            watch: deps.signatureWatch,
            expiryGapMs: deps.expiryGapMs,
          },
          {
            wallet: job.data.wallet,
            cid: job.data.stages.pin?.cid ?? '',
            envelopeFrom: job.data.envelope.from,
          },
          unconfirmed,
        ).catch(() => 'unproven' as const);
        if (outcome === 'landed') {
          // Delivered after all: the next run records it (submit finds it landed) without an attempt.
          const { exhausted: _, ...rest } = job.data;
          await job.updateData(rest);
          return wait(500);
        }
        if (outcome === 'unproven') {
          // Not exhausted while it may still land: it waits for the proof, spending no attempt, no DSN
          // yet, and signs nothing more (the next run only reads the proof again).
          deps.metrics?.awaitingProof?.(copyId, true);
          const first = !job.data.exhausted;
          if (first) await job.updateData({ ...job.data, exhausted: { error: message, at: Date.now() } });
          if (first)
            log.warn(
              { wallet: job.data.wallet, sig: unconfirmed.signature, reason: message },
              `inbound delivery to=<${job.data.envelope.to}> status=deferred (attempts exhausted; waiting for the expiry proof of SendMail ${unconfirmed.signature})`,
            );
          return wait(deps.proofRetryMs ?? 5000);
        }
        // Proven not landed and no Email with this CID: the message was not recorded.
        status = '5.4.7';
        diagnostic = 'delivery time expired, the message was not recorded';
      }
      // An operator retry of a job that already bounced never sends a second DSN.
      const earlier = job.data.finalFailure?.dsn;
      const outcome =
        earlier === 'queued' || earlier === 'null-sender'
          ? earlier
          : await bounce(
              {
                blobs: deps.blobs,
                outbound: deps.outbound,
                hostname: deps.hostname,
                ledger: deps.outboundLedger,
              },
              copyId,
              job.data,
              { status, diagnostic },
            );
      if (unconfirmed) {
        const reason = permanent ? 'permanent' : 'expired';
        deps.metrics?.unconfirmedFailure?.(reason);
        const finalFailure: NonNullable<DeliverJobData['finalFailure']> = {
          reason,
          at: Date.now(),
          signature: unconfirmed.signature,
          error: message,
          dsn: outcome,
          status,
        };
        const { exhausted: _, ...rest } = job.data;
        await job.updateData({ ...rest, finalFailure }).catch(() => undefined);
        (deps.deliveryLogger ?? deps.logger).error(
          {
            component: 'delivery',
            job: copyId,
            msgid: job.data.msgid,
            wallet: job.data.wallet,
            sig: unconfirmed.signature,
            reason,
            err: message,
            dsn: status,
            bounce: outcome,
          },
          `delivery failed for good with an unconfirmed SendMail: job=${copyId} wallet=${job.data.wallet} sig=${unconfirmed.signature} reason=${reason} (${message}); sealpost queue retry ${copyId} requeues it`,
        );
      }
      log.error(
        {
          to: job.data.envelope.to,
          wallet: job.data.wallet,
          attempt: job.attemptsMade + 1,
          delay: `${((Date.now() - job.data.receivedAt) / 1000).toFixed(1)}s`,
          status: 'bounced',
          dsn: status,
          reason: message,
          bounce: outcome,
        },
        `inbound delivery to=<${job.data.envelope.to}> status=bounced (${message})`,
      );
      // Finished for good: the reconcile step never queues this copy again.
      await deps.intents
        ?.markFinished(copyId, 'bounced')
        .catch((e: Error) => log.warn({ err: e.message }, 'bounced copy not marked finished in the store'));
      // Its DSN has the header section it needed: the job's own spool file goes (a parent removes the others').
      if (job.data.removesSpool) await removeOwnSpool(deps, job.data, log);
      if (!permanent) throw new UnrecoverableError(message);
    } else {
      const attempt = job.attemptsMade + 1;
      const delay = `${((Date.now() - job.data.receivedAt) / 1000).toFixed(1)}s`;
      log.warn(
        {
          to: job.data.envelope.to,
          wallet: job.data.wallet,
          attempt,
          delay,
          status: 'deferred',
          reason: message,
        },
        `inbound delivery to=<${job.data.envelope.to}> status=deferred (${message})`,
      );
    }
    throw err;
  }
}

/** Replays the last error of a job out of attempts whose SendMail's expiry was not proven yet. */
class Exhausted extends Error {}

/** Removes the spool file of a job that owns it (DeliverJobData.removesSpool); a failure is only logged. */
async function removeOwnSpool(deps: PipelineDeps, data: DeliverJobData, log: Logger): Promise<void> {
  await deps.blobs
    .delete(data.spoolKey)
    .catch((err: Error) =>
      log.warn(
        { spoolKey: data.spoolKey, err: err.message },
        'spool file not removed; the orphan sweep will',
      ),
    );
}

function permanentStatus(err: unknown): string {
  if (err instanceof PermanentDeliveryError) {
    if (err.code === 'NoMailbox') return '5.1.1';
    if (err.code === 'PostageRequired') return '5.7.1';
    if (err.code === 'StampsNotRelayable') return '5.7.1';
    if (err.code === 'RelayNotAllowed') return '5.7.1';
    if (err.code === 'NoIpfs') return '5.3.0';
  }
  return '5.3.0';
}

/** What the sender may learn: the failure kind, never internal detail. */
function publicReason(err: unknown): string {
  if (err instanceof PermanentDeliveryError) {
    if (err.code === 'NoMailbox') return 'the recipient wallet has no mailbox';
    if (err.code === 'PostageRequired') return 'the recipient requires postage and no stamp was available';
    if (err.code === 'StampsNotRelayable')
      return (
        'the recipient requires postage and no stamp for relayed mail was available ' +
        "(stamps a wallet bought for itself pay only for that wallet's own direct sends)"
      );
    if (err.code === 'RelayNotAllowed')
      return (
        "the recipient's mailbox no longer belongs to this server's mail domain, so this server " +
        'cannot deliver to it; its mail must come through its own domain'
      );
    return `the chain refused the message (${err.code})`;
  }
  return 'the message could not be published in time';
}
