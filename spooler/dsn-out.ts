// Outbound DSNs (RFC 3464): "delayed" once after `delay_dsn_after_secs`,
// "failed" when recipients fail for good, "relayed" when NOTIFY=SUCCESS
// asked for one and the next hop does not offer DSN (RFC 3461 §6.2.2.2).
// RET=FULL returns the whole message (up to FULL_RETURN_MAX_BYTES), else
// the headers; ENVID and ORCPT are echoed (Original-Envelope-Id,
// Original-Recipient). Each is an ordinary outbound
// message from the null sender, queued on the intake queue under a job id
// derived from what it reports, so running this step twice queues it once.
// Never sent to the null sender, nor against the original's RFC 3461 NOTIFY.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { OutboundJobData } from '../src/contracts/inbound-jobs.ts';
import type { DomainJobData } from '../src/contracts/outbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import { buildDsn, type DsnRecipient, headerSection } from '../src/mail/dsn.ts';

export interface DsnDeps {
  blobs: BlobStore;
  intake: Queue<OutboundJobData>;
  hostname: string;
  now: () => number;
  /** The outbound ledger: the DSN is recorded there before it is queued (src/core/store/outbound-ledger.ts). */
  ledger?: OutboundLedger | null;
}

export interface DsnEntry {
  rcpt: string;
  status: string;
  diagnostic: string;
  remoteMta?: string;
}

/** RFC 3461 §4.1: without NOTIFY, failures and delays are reported; success only when asked for. */
export function wantsDsn(
  job: Pick<DomainJobData, 'from' | 'dsn'>,
  what: 'FAILURE' | 'DELAY' | 'SUCCESS',
): boolean {
  if (job.from === '') return false;
  const notify = job.dsn?.notify;
  if (notify === undefined) return what !== 'SUCCESS';
  return notify !== 'NEVER' && notify.includes(what);
}

/** RET=FULL returns the message itself up to this size; a bigger one gets its headers only. */
export const FULL_RETURN_MAX_BYTES = 1024 * 1024;

const ACTION_TAG = { failed: 'f', delayed: 'd', relayed: 'r' } as const;

function messageIdOf(headers: Uint8Array): string | undefined {
  const text = Buffer.from(headers)
    .toString('latin1')
    .replace(/\r?\n[ \t]+/g, ' ');
  return /^message-id:\s*(<[^>\r\n]+>)/im.exec(text)?.[1];
}

/** Queues one DSN; returns its job id. */
export async function queueDsn(
  deps: DsnDeps,
  job: DomainJobData,
  action: 'failed' | 'delayed' | 'relayed',
  entries: DsnEntry[],
  extra: { willRetryUntil?: Date; lastAttempt?: Date } = {},
): Promise<string> {
  const digest = createHash('sha256')
    .update(
      `${job.msgid}\n${job.domain}\n${action}\n${entries
        .map((e) => e.rcpt)
        .sort()
        .join('\n')}`,
    )
    .digest('hex')
    .slice(0, 24);
  const jobId = `dsn-${ACTION_TAG[action]}-${digest}`;
  const raw = await deps.blobs.read(job.blobKey).catch(() => Buffer.alloc(0));
  const headers = headerSection(raw);
  const recipients: DsnRecipient[] = entries.map((e) => ({
    finalRecipient: e.rcpt,
    action,
    status:
      action === 'relayed'
        ? '2.0.0'
        : action === 'delayed' && e.status.startsWith('5')
          ? `4${e.status.slice(1)}`
          : e.status,
    ...(job.dsn?.orcpt ? { originalRecipient: job.dsn.orcpt } : {}),
    diagnostic: e.diagnostic,
    remoteMta: e.remoteMta,
    lastAttemptDate: extra.lastAttempt,
    willRetryUntil: action === 'delayed' ? extra.willRetryUntil : undefined,
  }));
  const now = deps.now();
  const dsn = await buildDsn({
    reportingMta: deps.hostname,
    to: job.from,
    recipients,
    arrivalDate: new Date(job.createdAt),
    originalHeaders: headers,
    ...(job.dsn?.ret === 'FULL' && raw.length > 0 && raw.length <= FULL_RETURN_MAX_BYTES
      ? { originalMessage: raw }
      : {}),
    originalMessageId: messageIdOf(headers),
    originalEnvelopeId: job.dsn?.envid,
    queueId: job.msgid,
    date: new Date(now),
  });
  const stored = await deps.blobs.putContent(dsn);
  const data: OutboundJobData = {
    msgid: jobId,
    from: '',
    to: [job.from],
    blobKey: stored.key,
    kind: 'dsn',
    createdAt: now,
  };
  await deps.ledger?.record([data]);
  await deps.intake.add('dsn', data, { jobId, removeOnComplete: { age: 86_400 }, removeOnFail: 5000 });
  return jobId;
}
