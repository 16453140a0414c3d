// A message that finally cannot be delivered to a recipient goes back to its
// envelope sender as a DSN, queued for the outbound spooler. The null sender
// never gets one (RFC 5321 6.1: no bounce loops).
import type { Queue } from 'bullmq';
import type { DeliverJobData, OutboundJobData } from '../src/contracts/inbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import { buildDsn, headerSection } from '../src/mail/dsn.ts';

export interface BounceDeps {
  blobs: BlobStore;
  outbound: Queue<OutboundJobData>;
  hostname: string;
  /** The outbound ledger: the DSN is recorded there before it is queued (src/core/store/outbound-ledger.ts). */
  ledger?: OutboundLedger;
  now?: () => number;
}

export async function bounce(
  deps: BounceDeps,
  copyId: string,
  data: DeliverJobData,
  reason: { status: string; diagnostic: string },
): Promise<'queued' | 'null-sender'> {
  if (data.envelope.from === '') return 'null-sender';
  const raw = await deps.blobs.read(data.spoolKey).catch(() => Buffer.alloc(0));
  const dsn = await buildDsn({
    reportingMta: deps.hostname,
    to: data.envelope.from,
    recipients: [
      {
        finalRecipient: data.envelope.to,
        action: 'failed',
        status: reason.status,
        diagnostic: reason.diagnostic,
      },
    ],
    arrivalDate: new Date(data.receivedAt),
    originalHeaders: headerSection(raw),
    queueId: data.msgid,
    date: new Date((deps.now ?? Date.now)()),
  });
  const stored = await deps.blobs.putContent(dsn);
  const job: OutboundJobData = {
    msgid: `dsn-${copyId}`,
    from: '',
    to: [data.envelope.from],
    blobKey: stored.key,
    kind: 'dsn',
    createdAt: (deps.now ?? Date.now)(),
  };
  // One DSN per failed copy, even if this step runs twice (the ledger keeps its first row too).
  await deps.ledger?.record([job]);
  await deps.outbound.add('dsn', job, { jobId: job.msgid, removeOnComplete: 1000, removeOnFail: 5000 });
  return 'queued';
}
