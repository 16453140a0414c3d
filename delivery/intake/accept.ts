// The acceptance step behind the 250: the raw message is fsynced into the
// spool, then one delivery job per recipient is added to Redis in a single
// atomic step: with several recipients, as children of one spool-cleanup
// parent that removes the spool file once all are done; with one, as a
// plain job that removes the file itself (no second job per message). Only
// then does the MX answer 250; any failure before that removes the spool
// file and answers 4xx.
// The fsyncs and the MULTI are shared with the other messages committed at
// the same moment (./group-commit.ts): a small message is written into a
// segment file with them, and its spool key names its bytes there.
// The spool file also carries the message's manifest (envelope, recipients
// as resolved, the trace, receivedAt, size, remote IP) in the same write, so
// whatever Redis loses, its jobs can be rebuilt from the spool alone
// (delivery/reconcile.ts, with deliverFlows below: the same ids, the same data).

import type { FlowJob, FlowProducer } from 'bullmq';
import {
  type DeliverJobData,
  type Envelope,
  QUEUE_DELIVER,
  QUEUE_SPOOL,
  type SpoolJobData,
} from '../../src/contracts/inbound-jobs.ts';
import { type BlobStore, BlobTooLargeError, type SpoolDraft } from '../../src/core/blobs/blob-store.ts';
import type { SpoolManifest } from '../../src/core/blobs/spool-manifest.ts';
import type { ResolvedRecipient } from '../../src/mail/recipients.ts';
import { replies, SmtpReply } from '../../src/mail/smtp-error.ts';
import type { MxTrace } from '../../src/mail/trace.ts';
import { DELIVERY_BACKOFF } from '../backoff.ts';
import { GroupCommit, GroupCommitError } from './group-commit.ts';
import type { Replication } from './replication.ts';

export interface AcceptInput {
  msgid: string;
  from: string;
  recipients: ResolvedRecipient[];
  remoteIp: string;
  receivedAt: number;
  source: AsyncIterable<Uint8Array>;
  maxBytes: number;
  /** Checks the spooled message before anything is queued; throws an SmtpReply to refuse it. */
  verify?: (message: Buffer) => Promise<void>;
  /** MX only: the session's trace facts, asked for after `verify`, carried by every delivery job. */
  trace?: () => Promise<MxTrace>;
  /** Further jobs added in the same atomic step (submission: the outbound job for remote recipients). */
  alsoQueue?: FlowJob[];
}

export interface AcceptDeps {
  blobs: BlobStore;
  flow: FlowProducer;
  /** Attempts per delivery job before it is given up (and bounced). */
  attempts: number;
  backoffMs: number;
  /** The group commit to join; absent: the one shared by every acceptance through `flow`. */
  commit?: GroupCommit;
  /** Redis replicas to wait for before the 250 (./replication.ts); used when the shared commit is made. */
  replication?: Replication;
}

/**
 * The client's data stream failed before the end of DATA (the connection
 * went away mid-message): there is nobody to answer and nothing was kept.
 * Not a storage failure, and never logged as one.
 */
export class ClientGoneError extends Error {
  constructor(cause: unknown) {
    super(`the client's data stream ended early: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'ClientGoneError';
  }
}

/**
 * A 452 for a spool write that failed, keeping the filesystem's error (its
 * errno code, e.g. ENOSPC or EIO, and the call) for the log line.
 */
export class StorageFailedReply extends SmtpReply {
  readonly code: string | undefined;
  readonly syscall: string | undefined;
  constructor(readonly failure: unknown) {
    const r = replies.storageFailed();
    super(r.responseCode, r.enhanced, r.message.slice(r.enhanced.length + 1), r.reason);
    let e = failure as NodeJS.ErrnoException | undefined;
    // A group commit failure wraps the filesystem's error.
    if (e && !e.code && e.cause instanceof Error) e = e.cause as NodeJS.ErrnoException;
    this.code = e?.code;
    this.syscall = e?.syscall;
  }
}

/** Errors thrown while pulling the next chunk from `source` become ClientGoneError. */
async function* fromClient(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await it.next();
      } catch (err) {
        if (err instanceof SmtpReply) throw err;
        throw new ClientGoneError(err);
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await it.return?.();
  }
}

/** How a message's delivery jobs are queued (retries and back-off). */
export interface DeliverJobPolicy {
  attempts: number;
  backoffMs: number;
}

/**
 * The flows of one message, from its manifest: one `deliver` job per
 * recipient (id `${msgid}.${i}`); with several recipients, as children of a
 * `spool-cleanup` parent (id msgid) that removes the spool file once all are
 * done; with one, a plain job that removes it itself. `only` limits the
 * children to those recipient indices (the reconcile step re-queues only
 * unfinished copies; a message of several recipients keeps its parent).
 */
export function deliverFlows(
  manifest: SpoolManifest,
  spoolKey: string,
  policy: DeliverJobPolicy,
  opts: { only?: ReadonlySet<number>; alsoQueue?: FlowJob[] } = {},
): FlowJob[] {
  const single = manifest.recipients.length === 1;
  const children: FlowJob[] = [];
  manifest.recipients.forEach((r, i) => {
    if (opts.only && !opts.only.has(i)) return;
    const envelope: Envelope = { from: manifest.from, to: r.address };
    const data: DeliverJobData = {
      msgid: manifest.msgid,
      spoolKey,
      envelope,
      wallet: r.wallet,
      form: r.form,
      receivedAt: manifest.receivedAt,
      size: manifest.size,
      remoteIp: manifest.remoteIp,
      ...(manifest.trace ? { trace: manifest.trace } : {}),
      ...(single ? { removesSpool: true as const } : {}),
      stages: {},
    };
    children.push({
      name: 'deliver',
      queueName: QUEUE_DELIVER,
      data,
      opts: {
        jobId: `${manifest.msgid}.${i}`,
        attempts: policy.attempts,
        // Capped exponential (delivery/backoff.ts): a chain or pin outage of hours is ridden out.
        backoff: { type: DELIVERY_BACKOFF, delay: policy.backoffMs },
        // A recipient that finally fails (and is bounced) must not keep the spool file forever.
        ...(single ? {} : { ignoreDependencyOnFailure: true }),
        removeOnComplete: 1000,
        removeOnFail: 5000,
      },
    });
  });
  // One recipient: its job removes the spool file itself (delivery/pipeline.ts), so
  // no parent is added, fetched and completed for it.
  if (single) return [...children, ...(opts.alsoQueue ?? [])];
  const parent: SpoolJobData = { msgid: manifest.msgid, spoolKey };
  const spoolFlow: FlowJob = {
    name: 'spool-cleanup',
    queueName: QUEUE_SPOOL,
    data: parent,
    opts: { jobId: manifest.msgid, removeOnComplete: 1000, removeOnFail: 5000 },
    children,
  };
  return [spoolFlow, ...(opts.alsoQueue ?? [])];
}

const sharedCommits = new WeakMap<FlowProducer, GroupCommit>();

/** One group commit per FlowProducer: the MX and submission listeners of a process share it. */
function groupCommitOf(deps: AcceptDeps): GroupCommit {
  if (deps.commit) return deps.commit;
  let commit = sharedCommits.get(deps.flow);
  if (!commit) {
    commit = GroupCommit.forFlow(deps.flow, deps.replication);
    sharedCommits.set(deps.flow, commit);
  }
  return commit;
}

export async function acceptMessage(deps: AcceptDeps, input: AcceptInput): Promise<{ size: number }> {
  let draft: SpoolDraft;
  try {
    draft = await deps.blobs.receiveSpool(input.msgid, fromClient(input.source), input.maxBytes);
  } catch (err) {
    if (err instanceof BlobTooLargeError) throw replies.tooBig(input.maxBytes);
    if (err instanceof SmtpReply || err instanceof ClientGoneError) throw err;
    throw new StorageFailedReply(err);
  }
  // A large message already has its own spool file; a small one is only in memory until its batch.
  const dropDraft = async () => {
    await draft.discard().catch(() => {});
  };
  const size = draft.size;
  if (input.verify) {
    try {
      await input.verify(await draft.bytes());
    } catch (err) {
      await dropDraft();
      throw err;
    }
  }
  let trace: MxTrace | undefined;
  try {
    trace = input.trace ? await input.trace() : undefined;
  } catch {
    await dropDraft();
    throw replies.queueUnavailable();
  }
  const manifest: SpoolManifest = {
    v: 1,
    msgid: input.msgid,
    from: input.from,
    recipients: input.recipients.map((r) => ({ address: r.address, wallet: r.wallet, form: r.form })),
    receivedAt: input.receivedAt,
    size,
    remoteIp: input.remoteIp,
    ...(trace ? { trace } : {}),
  };
  const policy = { attempts: deps.attempts, backoffMs: deps.backoffMs };
  const flows = (spoolKey: string): FlowJob[] =>
    deliverFlows(manifest, spoolKey, policy, { alsoQueue: input.alsoQueue });
  try {
    // Bytes and spool name fsynced, then the flows queued in one MULTI, each
    // shared with the messages committed alongside: this message's jobs are
    // all queued or none, and on failure its spool name is already removed.
    await groupCommitOf(deps).commit({ blobs: deps.blobs, id: input.msgid, draft, manifest, flows });
  } catch (err) {
    // A PostgreSQL spool that failed is an outage, not a full disk: 451, like a Redis one.
    throw err instanceof GroupCommitError && err.step === 'spool' && deps.blobs.backend !== 'postgres'
      ? new StorageFailedReply(err)
      : replies.queueUnavailable();
  }
  return { size };
}
