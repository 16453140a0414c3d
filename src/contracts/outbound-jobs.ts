// Queues and job payloads of the outbound spooler. Intake (QUEUE_OUTBOUND,
// src/contracts/inbound-jobs.ts) holds whole messages; the spooler splits each into one
// job per destination domain on QUEUE_SPOOLER_DELIVER. A domain job carries
// every decision made so far, written into its own data as it happens, so a
// retried or re-run job never repeats one (docs/spooler.md).
import type { OutboundJobData } from './inbound-jobs.ts';

export const QUEUE_SPOOLER_DELIVER = 'spooler-deliver';
/** Daily TLS-RPT reports and the prune of their pending rows. */
export const QUEUE_SPOOLER_MAINT = 'spooler-maint';
export const TLSRPT_REPORT_JOB = 'tlsrpt-report';
export const TLSRPT_SCHEDULER_ID = 'tlsrpt-daily';

export interface FinalOutcome {
  state: 'delivered' | 'failed';
  at: number;
  /** RFC 3463 status. */
  status: string;
  diagnostic: string;
  remoteMta?: string;
  /** Delivered to a next hop that offered DSN: NOTIFY went with it, success is theirs to report. */
  dsnPassedOn?: boolean;
}

export interface DomainJobData {
  msgid: string;
  /** Envelope sender; '' is the null sender (never gets a DSN). */
  from: string;
  domain: string;
  /** Every recipient at this domain, as given. */
  rcpts: string[];
  blobKey: string;
  kind: OutboundJobData['kind'];
  /** When the message entered the spooler (start of its lifetime). */
  createdAt: number;
  /** Attempts made so far. */
  attempts: number;
  /** Per recipient, once decided: written right after the remote's answer. */
  final: Record<string, FinalOutcome>;
  /** Per still-pending recipient, the last temporary failure. */
  lastTemporary: Record<string, { status: string; diagnostic: string; remoteMta?: string }>;
  /** Failed recipients whose failure DSN is queued. */
  bounced: string[];
  /** The delayed-delivery DSN is queued. */
  delayNotified: boolean;
  /** Delivered recipients whose NOTIFY=SUCCESS is settled (a "relayed" DSN queued, or passed on). */
  successNotified?: string[];
  /** When the next attempt is due (for operators; the job's delay decides). */
  nextAttemptAt?: number;
  dsn?: OutboundJobData['dsn'];
  /** Blobs this job removes once done (single-domain messages; others have a cleanup parent). */
  removeBlobs?: string[];
}

/** BullMQ job ids may not contain ':'. */
export function domainJobId(msgid: string, domain: string): string {
  return `${msgid.replace(/:/g, '_')}~${domain}`;
}
