// Intake of QUEUE_OUTBOUND: one message for any number of recipients
// becomes one domain job per destination domain (so every domain has its
// own retries, TLS policy and concurrency), all children of one cleanup job
// that removes the message blob once every domain job has finished (a
// message for one domain needs no parent: its job removes the blob). DSNs
// and TLS-RPT reports are the server's own mail and are DKIM-signed here;
// submitted mail arrives already signed by the submission path.
import { DelayedError, type FlowJob, type FlowProducer, type Job, type Queue } from 'bullmq';
import type { OutboundJobData } from '../src/contracts/inbound-jobs.ts';
import { type DomainJobData, domainJobId, QUEUE_SPOOLER_DELIVER } from '../src/contracts/outbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import { DomainNameError, normalizeDomainName } from '../src/core/dns/name.ts';
import type { Logger } from '../src/core/log.ts';
import type { OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import type { DkimSigner } from '../src/mail/dkim-sign.ts';
import { headerSection } from '../src/mail/dsn.ts';
import { deliverLocally, type LocalDeliveryDeps } from './local-delivery.ts';

export const QUEUE_SPOOLER_CLEANUP = 'spooler-cleanup';

export interface CleanupJobData {
  msgid: string;
  blobKeys: string[];
}

export interface IntakeDeps {
  flow: FlowProducer;
  deliver: Queue<DomainJobData>;
  cleanup: { getJob(id: string): Promise<unknown> };
  blobs: BlobStore;
  dkim: DkimSigner | null;
  logger: Logger;
  now: () => number;
  /** Recipients at our own local domains go to the inbound pipeline (local-delivery.ts); absent: out by SMTP. */
  local?: Omit<LocalDeliveryDeps, 'blobs' | 'logger' | 'now'>;
  /** The outbound ledger: domains handed over and messages finished are recorded there. */
  ledger?: OutboundLedger | null;
}

/** Bad recipients are grouped under this pseudo-domain and failed at once. */
export const INVALID_DOMAIN = 'invalid.';

/** The domain a recipient's domain job is for, as the ledger records it (`invalid.` for bad addresses). */
export function recipientDomain(rcpt: string): string {
  return domainOf(rcpt) ?? INVALID_DOMAIN;
}

/** The domain job id of a recipient domain (invalid addresses share one job). */
export function domainJobIdOf(msgid: string, domain: string): string {
  return domainJobId(msgid, domain === INVALID_DOMAIN ? 'invalid' : domain);
}

function domainOf(rcpt: string): string | null {
  const at = rcpt.lastIndexOf('@');
  if (at <= 0 || at === rcpt.length - 1) return null;
  try {
    return normalizeDomainName(rcpt.slice(at + 1)).ascii;
  } catch (err) {
    if (err instanceof DomainNameError) return null;
    throw err;
  }
}

function fromHeaderDomain(raw: Buffer): string | null {
  const text = Buffer.from(headerSection(raw))
    .toString('latin1')
    .replace(/\r?\n[ \t]+/g, ' ');
  const from = /^from:(.*)$/im.exec(text)?.[1] ?? '';
  const addr = /<([^>]+)>/.exec(from)?.[1] ?? from.trim();
  return domainOf(addr);
}

/** Wait before an intake job that hit a transient error runs again. */
const INTAKE_RETRY_MS = 5_000;

/**
 * Splits one queued message. The producers' job options are not ours, so
 * transient failures are retried here (the job goes back to the delayed
 * set) instead of failing the job and losing the message; a message whose
 * content is gone is dropped with an error in the log.
 */
export async function processIntakeJob(
  deps: IntakeDeps,
  job: Job<OutboundJobData>,
  token?: string,
): Promise<{ domains: string[] }> {
  try {
    return await splitMessage(deps, job);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      deps.logger.error(
        { msgid: job.data.msgid, blobKey: job.data.blobKey },
        'outbound message content is missing; dropped',
      );
      await deps.ledger?.finish([job.data.msgid]);
      return { domains: [] };
    }
    deps.logger.warn(
      { msgid: job.data.msgid, err: (err as Error).message },
      'outbound intake failed; retrying',
    );
    await job.moveToDelayed(Date.now() + INTAKE_RETRY_MS, token);
    throw new DelayedError();
  }
}

async function splitMessage(deps: IntakeDeps, job: Job<OutboundJobData>): Promise<{ domains: string[] }> {
  const data = job.data;
  const parentId = `out-${data.msgid.replace(/:/g, '_')}`;

  // Our own domains first: never an MX lookup of ourselves, never SMTP to ourselves.
  let recipients = [...new Set(data.to)];
  if (deps.local) {
    const domains = deps.local.local.domains;
    const local = recipients.filter((r) => {
      const d = domainOf(r);
      return d !== null && domains.includes(d);
    });
    if (local.length > 0) {
      await deliverLocally(
        { ...deps.local, blobs: deps.blobs, logger: deps.logger, now: deps.now },
        data,
        local,
      );
      recipients = recipients.filter((r) => !local.includes(r));
      // Handed to the inbound pipeline (its spool is their durable record now): never again from the ledger.
      await deps.ledger?.domainsDone(data.msgid, local.map(recipientDomain), 'local');
      if (recipients.length === 0) {
        await deps.ledger?.finish([data.msgid]);
        await deps.blobs.delete(data.blobKey);
        return { domains: [] };
      }
    }
  }

  let blobKey = data.blobKey;
  const blobKeys = [data.blobKey];
  if ((data.kind === 'dsn' || data.kind === 'report') && deps.dkim) {
    const raw = await deps.blobs.read(data.blobKey);
    const domain = fromHeaderDomain(raw);
    if (domain && deps.dkim.signingDomain(domain)) {
      const signed = await deps.dkim.sign(raw, domain);
      blobKey = (await deps.blobs.putContent(signed)).key;
      blobKeys.push(blobKey);
    }
  }

  const byDomain = new Map<string, string[]>();
  for (const rcpt of recipients) {
    const domain = recipientDomain(rcpt);
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), rcpt]);
  }
  const at = deps.now();
  const children: FlowJob[] = [...byDomain].map(([domain, rcpts]) => {
    const invalid = domain === INVALID_DOMAIN;
    const child: DomainJobData = {
      msgid: data.msgid,
      from: data.from,
      domain,
      rcpts,
      blobKey,
      kind: data.kind,
      createdAt: data.createdAt,
      attempts: 0,
      final: invalid
        ? Object.fromEntries(
            rcpts.map((r) => [
              r,
              {
                state: 'failed' as const,
                at,
                status: '5.1.3',
                diagnostic: `recipient address ${JSON.stringify(r)} is not valid`,
              },
            ]),
          )
        : {},
      lastTemporary: {},
      bounced: [],
      delayNotified: false,
      ...(data.dsn ? { dsn: data.dsn } : {}),
    };
    return {
      name: 'deliver',
      queueName: QUEUE_SPOOLER_DELIVER,
      data: child,
      opts: {
        jobId: domainJobIdOf(data.msgid, domain),
        // Only unexpected errors use these; SMTP retries are the spooler's own schedule.
        attempts: 10,
        backoff: { type: 'exponential', delay: 30_000 },
        ignoreDependencyOnFailure: true,
        removeOnComplete: { age: 7 * 86_400 },
        removeOnFail: { age: 30 * 86_400 },
      },
    };
  });
  const domains = [...byDomain.keys()];
  const [only] = children;
  if (children.length === 1 && only) {
    // One domain (the common case): no cleanup parent; the domain job removes the blob when done.
    const opts = { ...only.opts, ignoreDependencyOnFailure: undefined };
    // Re-run after the job was added (a crash before this one completed): BullMQ
    // adds nothing for a job id it still holds (domain jobs are kept 7 days).
    await deps.deliver.add('deliver', { ...(only.data as DomainJobData), removeBlobs: blobKeys }, opts);
    return { domains };
  }
  if (await deps.cleanup.getJob(parentId)) return { domains };
  const parent: CleanupJobData = { msgid: data.msgid, blobKeys };
  await deps.flow.add({
    name: 'remove-blob',
    queueName: QUEUE_SPOOLER_CLEANUP,
    data: parent,
    opts: { jobId: parentId, removeOnComplete: { age: 86_400 }, removeOnFail: 5000 },
    children,
  });
  deps.logger.debug({ msgid: data.msgid, domains }, 'outbound message split by domain');
  return { domains };
}

export async function processCleanupJob(
  blobs: BlobStore,
  job: Job<CleanupJobData>,
  ledger?: OutboundLedger | null,
): Promise<void> {
  // The ledger first: a message it still owed is never rebuilt after its content is gone.
  await ledger?.finish([job.data.msgid]);
  for (const key of job.data.blobKeys) await blobs.delete(key);
}
