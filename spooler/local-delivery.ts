// Mail the spooler is handed for one of our own local domains — in practice
// a DSN to a local sender (a bounce of its own submission, or of a message
// the pipeline could not deliver) — never leaves the server: no MX lookup
// of our own domain, no SMTP to ourselves. It is queued for the inbound
// pipeline exactly as the MX queues mail it accepts (`acceptMessage`: the
// spool file, then one deliver job per recipient in one atomic step). An
// address that names no mailbox here is dropped with a log line: these are
// the server's own messages, and bouncing them could only loop.
import type { FlowProducer } from 'bullmq';
import { acceptMessage } from '../delivery/intake/accept.ts';
import type { OutboundJobData } from '../src/contracts/inbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { Logger } from '../src/core/log.ts';
import type { ResolvedRecipient } from '../src/mail/recipients.ts';

export interface LocalDelivery {
  /** `[smtp] local_domains` (lowercase, ASCII). */
  domains: readonly string[];
  /** The mailbox an address names, or null for none; throws when the lookup itself fails (retried). */
  resolve(address: string): Promise<ResolvedRecipient | null>;
  /** The pipeline's deliver-job attempts and backoff (as the MX uses). */
  attempts: number;
  backoffMs: number;
}

export interface LocalDeliveryDeps {
  local: LocalDelivery;
  blobs: BlobStore;
  flow: FlowProducer;
  /** The pipeline's spool-cleanup queue: a message already handed over to several recipients has its parent there. */
  spool: { getJob(id: string): Promise<unknown> };
  /** The pipeline's deliver queue: one handed over to one recipient has its only job (`<msgid>.0`) there. */
  deliver: { getJob(id: string): Promise<unknown> };
  logger: Logger;
  now: () => number;
}

/** Hands the local recipients of one outbound message to the inbound pipeline; idempotent per msgid. */
export async function deliverLocally(
  deps: LocalDeliveryDeps,
  data: OutboundJobData,
  rcpts: readonly string[],
): Promise<{ queued: string[]; dropped: string[] }> {
  // A re-run after the hand-off (crash before the intake job completed): done already.
  if ((await deps.spool.getJob(data.msgid)) || (await deps.deliver.getJob(`${data.msgid}.0`)))
    return { queued: [...rcpts], dropped: [] };
  const resolved: ResolvedRecipient[] = [];
  const dropped: string[] = [];
  for (const rcpt of rcpts) {
    const r = await deps.local.resolve(rcpt);
    if (r) resolved.push(r);
    else dropped.push(rcpt);
  }
  for (const rcpt of dropped) {
    deps.logger.warn(
      { msgid: data.msgid, kind: data.kind, to: rcpt, from: data.from },
      `local recipient <${rcpt}> names no mailbox here; ${data.kind === 'dsn' ? 'DSN' : 'message'} dropped (never bounced)`,
    );
  }
  if (resolved.length === 0) return { queued: [], dropped };
  const raw = await deps.blobs.read(data.blobKey);
  await acceptMessage(
    { blobs: deps.blobs, flow: deps.flow, attempts: deps.local.attempts, backoffMs: deps.local.backoffMs },
    {
      msgid: data.msgid,
      from: data.from,
      recipients: resolved,
      remoteIp: '127.0.0.1',
      receivedAt: deps.now(),
      source: (async function* () {
        yield raw;
      })(),
      maxBytes: raw.length,
    },
  );
  const queued = resolved.map((r) => r.address);
  deps.logger.info(
    { msgid: data.msgid, kind: data.kind, to: queued },
    `${data.kind === 'dsn' ? 'DSN' : 'message'} for a local mailbox handed to the inbound pipeline`,
  );
  return { queued, dropped };
}
