// The daily sweep of blobs nothing will read again. Sealed bodies
// (`sha256/`) are referenced by message rows while mail lives and by queued
// jobs while it is in flight; a blob stays unreferenced when a worker dies
// between sealing and its checkpoint (the retry seals again), when the last
// copy of a message is expunged, and a spool file stays when the MX fails
// between writing it and queuing its jobs (no 250 was given).
//
// Rule: a blob older than the grace period that no message row references
// is removed. The grace period outlives every job that may still name a
// blob (deliveries give up within hours, outbound mail after [spooler]
// lifetime_secs), and storing the same bytes again refreshes a blob's age
// (BlobStore.putContent), so the only blobs that qualify are ones no job and
// no row can reach. A sealed blob an unfinished SendMail intent names
// (delivery_intents) is kept too: a rebuilt job reuses it, and so is the
// content of a message the outbound ledger still owes (outbound_ledger).
// Spool entries are the durable truth of acknowledged mail
// (delivery/reconcile.ts): one is removed only when its index lists every
// recipient as finished (a message row stored for the copy, or its intent
// marked finished). An entry without a finished record is never removed,
// whatever its age: one without an index (written before it existed) or one
// that cannot be parsed is left for the reconcile step, which moves it to
// spool-corrupt/. Leftover temp files older than the grace period are
// removed. DMARC report blobs have their own retention.
import type { Kysely } from 'kysely';
import type { Logger } from '../log.ts';
import { IntentsRepo } from '../store/intents-repo.ts';
import { OutboundLedger } from '../store/outbound-ledger.ts';
import type { Database } from '../store/types.ts';
import type { BlobStore } from './blob-store.ts';

const DAY_MS = 86_400_000;
const BATCH = 500;

export interface BlobSweepDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** Blobs younger than this are never removed. */
  graceMs: number;
  logger?: Logger;
}

export interface BlobSweepSummary {
  /** Sealed blobs looked at. */
  scanned: number;
  /** Unreferenced sealed blobs removed, and their bytes. */
  removed: number;
  removedBytes: number;
  spoolRemoved: number;
  /** Spool entries older than the grace period kept: a recipient not finished, no index, or unreadable. */
  spoolKept: number;
  tempRemoved: number;
  /** Unix ms: only blobs last written before this were candidates. */
  olderThan: number;
}

/** The grace period for a deployment: outbound lifetime plus two days, at least a week. */
export function blobSweepGraceMs(spoolerLifetimeSecs: number): number {
  return Math.max(7 * DAY_MS, spoolerLifetimeSecs * 1000 + 2 * DAY_MS);
}

const isTemp = (key: string) => key.slice(key.lastIndexOf('/') + 1).startsWith('.tmp-');

export async function sweepOrphanBlobs(deps: BlobSweepDeps, now: number): Promise<BlobSweepSummary> {
  const olderThan = now - deps.graceMs;
  const summary: BlobSweepSummary = {
    scanned: 0,
    removed: 0,
    removedBytes: 0,
    spoolRemoved: 0,
    spoolKept: 0,
    tempRemoved: 0,
    olderThan,
  };
  const intents = new IntentsRepo(deps.db);
  const ledger = new OutboundLedger(deps.db);
  const removeTemp = async (key: string) => {
    await deps.blobs.deleteTemp(key);
    summary.tempRemoved++;
  };

  let batch: { key: string; size: number }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const keys = batch.map((b) => b.key);
    const rows = await deps.db
      .selectFrom('messages')
      .select('blob_key')
      .where('blob_key', 'in', keys)
      .execute();
    const referenced = new Set(rows.map((r) => r.blob_key));
    for (const key of await intents.openBlobKeys(keys)) referenced.add(key);
    for (const key of await ledger.openBlobKeys(keys)) referenced.add(key);
    for (const b of batch) {
      if (referenced.has(b.key)) continue;
      // Stored again since it was listed: young again, keep it.
      const mtimeMs = await deps.blobs.mtime(b.key);
      if (mtimeMs === null || mtimeMs >= olderThan) continue;
      await deps.blobs.delete(b.key);
      summary.removed++;
      summary.removedBytes += b.size;
    }
    batch = [];
  };

  for await (const blob of deps.blobs.list('sha256')) {
    if (blob.mtimeMs >= olderThan) continue;
    if (isTemp(blob.key)) {
      await removeTemp(blob.key);
      continue;
    }
    summary.scanned++;
    batch.push({ key: blob.key, size: blob.size });
    if (batch.length >= BATCH) await flush();
  }
  await flush();

  for await (const blob of deps.blobs.list('spool')) {
    if (blob.mtimeMs >= olderThan) continue;
    if (isTemp(blob.key)) {
      await removeTemp(blob.key);
      continue;
    }
    const id = blob.key.slice('spool/'.length);
    const entry = await deps.blobs.readSpoolEntry(id).catch(() => null);
    if (entry?.kind !== 'indexed') {
      summary.spoolKept++;
      continue;
    }
    const copies = entry.manifest.recipients.map((_, i) => `${id}.${i}`);
    const finished = await intents.finished(copies);
    if (copies.every((c) => finished.has(c))) {
      await deps.blobs.delete(blob.key);
      summary.spoolRemoved++;
    } else summary.spoolKept++;
  }
  if (summary.removed + summary.spoolRemoved + summary.tempRemoved > 0) {
    deps.logger?.info(summary, 'orphan blob sweep removed unreferenced blobs');
  } else deps.logger?.debug(summary, 'orphan blob sweep found nothing to remove');
  return summary;
}
