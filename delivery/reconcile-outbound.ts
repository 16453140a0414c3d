// The outbound half of the reconcile step (./reconcile.ts runs it after the
// spool walk, under the same lease). Every message the outbound spooler still
// owes (submitted mail for remote recipients, DSNs, TLS-RPT reports) has a
// row in the outbound ledger (src/core/store/outbound-ledger.ts) from before its
// intake job was queued until the spooler is done with it. For each row older
// than the grace period:
//   - some job of it exists in Redis (the intake job, the per-domain cleanup
//     parent, or a domain job, in any state): Redis knows it, nothing is done;
//   - none: the recipients whose domain job ended (recorded in the ledger:
//     delivered, failed, handed to the local pipeline, deleted by the
//     operator) are done; the others are queued again as one intake job with
//     the message's own id, so the spooler splits it exactly as the first
//     time and domain jobs keep their ids. When no recipient is left the row
//     is finished and the content removed.
// A recipient a domain job was working on when Redis lost it can be tried a
// second time (its remote may have said 250 to the first try): SMTP's own
// at-least-once, as after any crash between a remote's 250 and the record of
// it. A rebuilt job keeps the message's first createdAt, so the spooler's
// lifetime and its bounce still count from the original acceptance.
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { domainJobIdOf, QUEUE_SPOOLER_CLEANUP, recipientDomain } from '../spooler/intake.ts';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../src/contracts/inbound-jobs.ts';
import { QUEUE_SPOOLER_DELIVER } from '../src/contracts/outbound-jobs.ts';
import type { BlobStore } from '../src/core/blobs/blob-store.ts';
import type { Logger } from '../src/core/log.ts';
import { type LedgerEntry, OutboundLedger } from '../src/core/store/outbound-ledger.ts';
import type { Database } from '../src/core/store/types.ts';
import { anyKeyExists } from './redis-presence.ts';

const BATCH = 200;

export interface OutboundReconcileEntry {
  msgid: string;
  kind: OutboundJobData['kind'];
  action: 'recovered' | 'finished';
  /** recovered: the recipients queued again. */
  to?: string[];
}

export interface OutboundReconcileResult {
  /** Ledger rows older than the grace period. */
  scanned: number;
  /** Some job of theirs is in Redis. */
  withJobs: number;
  /** Queued again (one intake job each), and the recipients that took. */
  recovered: number;
  recoveredRecipients: number;
  /** Every domain already done: the row was finished. */
  finished: number;
  entries: OutboundReconcileEntry[];
}

export interface OutboundReconcileDeps {
  redis: Redis;
  prefix: string;
  db: Kysely<Database>;
  blobs: BlobStore;
  graceMs: number;
  dryRun: boolean;
  now: number;
  logger?: Logger;
  /** Called between batches: throws when the run's lease was lost. */
  check?: () => void;
}

export async function reconcileOutbound(deps: OutboundReconcileDeps): Promise<OutboundReconcileResult> {
  const result: OutboundReconcileResult = {
    scanned: 0,
    withJobs: 0,
    recovered: 0,
    recoveredRecipients: 0,
    finished: 0,
    entries: [],
  };
  const ledger = new OutboundLedger(deps.db);
  const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: deps.redis, prefix: deps.prefix });
  try {
    const before = deps.graceMs > 0 ? deps.now - deps.graceMs : Number.MAX_SAFE_INTEGER;
    let after: { createdAt: number; msgid: string } | undefined;
    for (;;) {
      const rows = await ledger.listBefore(before, BATCH, after);
      if (rows.length === 0) break;
      const last = rows[rows.length - 1] as LedgerEntry;
      after = { createdAt: last.createdAt, msgid: last.msgid };
      result.scanned += rows.length;
      await reconcileRows(deps, ledger, intake, rows, result);
      deps.check?.();
      if (rows.length < BATCH) break;
    }
  } finally {
    await intake.close().catch(() => undefined);
  }
  return result;
}

function keysOf(prefix: string, e: LedgerEntry): string[] {
  const id = e.msgid;
  const keys = [
    `${prefix}:${QUEUE_OUTBOUND}:${id}`,
    `${prefix}:${QUEUE_SPOOLER_CLEANUP}:out-${id.replace(/:/g, '_')}`,
  ];
  for (const domain of new Set(e.data.to.map(recipientDomain)))
    keys.push(`${prefix}:${QUEUE_SPOOLER_DELIVER}:${domainJobIdOf(id, domain)}`);
  return keys;
}

async function reconcileRows(
  deps: OutboundReconcileDeps,
  ledger: OutboundLedger,
  intake: Queue<OutboundJobData>,
  rows: LedgerEntry[],
  result: OutboundReconcileResult,
): Promise<void> {
  const present = await anyKeyExists(
    deps.redis,
    rows.map((e) => keysOf(deps.prefix, e)),
  );
  const orphans: LedgerEntry[] = [];
  for (const [j, e] of rows.entries()) {
    if (present[j]) result.withJobs++;
    else orphans.push(e);
  }
  if (orphans.length === 0) return;
  const done = await ledger.doneDomains(orphans.map((e) => e.msgid));
  for (const e of orphans) {
    const ended = done.get(e.msgid) ?? new Set<string>();
    const open = [...new Set(e.data.to)].filter((r) => !ended.has(recipientDomain(r)));
    if (open.length === 0) {
      result.finished++;
      result.entries.push({ msgid: e.msgid, kind: e.data.kind, action: 'finished' });
      if (!deps.dryRun) {
        await ledger.finish([e.msgid]);
        await deps.blobs.delete(e.data.blobKey).catch(() => undefined);
      }
      continue;
    }
    if (!deps.dryRun)
      // Named by its kind, as its producer named it.
      await intake.add(
        e.data.kind,
        { ...e.data, to: open },
        { jobId: e.msgid, removeOnComplete: { age: 86_400 }, removeOnFail: 5000 },
      );
    result.recovered++;
    result.recoveredRecipients += open.length;
    result.entries.push({ msgid: e.msgid, kind: e.data.kind, action: 'recovered', to: open });
  }
}
