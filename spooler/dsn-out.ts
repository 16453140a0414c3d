// Outbound DSNs (RFC 3464): "delayed" once after `delay_dsn_after_secs`,
// "failed" when recipients fail for good. Each is an ordinary outbound
// message from the null sender, queued on the intake queue under a job id
// derived from what it reports, so running this step twice queues it once.
// Never sent to the null sender, nor against the original's RFC 3461 NOTIFY.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { OutboundJobData } from '../delivery/jobs.ts';
import type { BlobStore } from '../src/blobs/blob-store.ts';
import { buildDsn, type DsnRecipient, headerSection } from '../src/mail/dsn.ts';
import type { DomainJobData } from './jobs.ts';

export interface DsnDeps {
  blobs: BlobStore;
  intake: Queue<OutboundJobData>;
  hostname: string;
  now: () => number;
}

export interface DsnEntry {
  rcpt: string;
  status: string;
  diagnostic: string;
  remoteMta?: string;
}

export function wantsDsn(job: Pick<DomainJobData, 'from' | 'dsn'>, what: 'FAILURE' | 'DELAY'): boolean {
  if (job.from === '') return false;
  const notify = job.dsn?.notify;
  if (notify === undefined) return true;
  return notify !== 'NEVER' && notify.includes(what);
}

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
  action: 'failed' | 'delayed',
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
  const jobId = `dsn-${action === 'failed' ? 'f' : 'd'}-${digest}`;
  const raw = await deps.blobs.read(job.blobKey).catch(() => Buffer.alloc(0));
  const headers = headerSection(raw);
  const recipients: DsnRecipient[] = entries.map((e) => ({
    finalRecipient: e.rcpt,
    action,
    status: action === 'delayed' && e.status.startsWith('5') ? `4${e.status.slice(1)}` : e.status,
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
  await deps.intake.add('dsn', data, { jobId, removeOnComplete: { age: 86_400 }, removeOnFail: 5000 });
  return jobId;
}
