// The orphan blob sweep on a real SQLite store and a real blob directory:
// only old, unreferenced sealed blobs and old temp files go; anything a
// message row names, anything young, anything stored again and any spool
// entry without a finished record (here one written without an index, as
// before the spool manifest: test/delivery/spool-sweep.test.ts has the indexed ones) stays.
import { randomBytes } from 'node:crypto';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore, type FsBlobStore } from '../../src/core/blobs/blob-store.ts';
import { blobSweepGraceMs, sweepOrphanBlobs } from '../../src/core/blobs/orphan-sweep.ts';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { AccountsRepo, MessagesRepo, openStore, type Store } from '../../src/core/store/index.ts';
import { BLOB_SWEEP_JOB, QUEUE_MAINTENANCE, startMaintenance } from '../../src/run/serve/maintenance.ts';
import { tempDir } from '../support/temp-dir.ts';

const DAY = 86_400_000;
const stores: Store[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  for (const s of stores.splice(0)) await s.close();
});

async function* chunks(text: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(text);
}

/** A message spooled as the MX spools it: received, written into a segment, the directory fsynced. */
async function spoolMessage(blobs: FsBlobStore, id: string): Promise<{ key: string }> {
  const draft = await blobs.receiveSpool(id, chunks('raw'));
  const key =
    draft.key ?? (await blobs.writeSegment([{ id, chunks: draft.chunks ?? [], size: draft.size }]))[0];
  if (!key) throw new Error(`no spool key for ${id}`);
  await blobs.syncSpool();
  return { key };
}

function age(blobs: FsBlobStore, key: string, days: number): void {
  const at = new Date(Date.now() - days * DAY);
  // A spool segment key names a range of its file: the file is what ages.
  utimesSync(join(blobs.root, key.split('@')[0] as string), at, at);
}

describe('orphan blob sweep', () => {
  it('removes old unreferenced sealed blobs and temp files, keeps unfinished spool entries', async () => {
    const dir = tempDir();
    const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, dataDir: dir });
    stores.push(store);
    const blobs = new BlobStore(join(dir, 'blobs'));
    const wallet = generateKeypair().address;
    await new AccountsRepo(store.db).create(wallet, { source: 'self' });
    const messages = new MessagesRepo(store.db);

    const referenced = await blobs.putContent(randomBytes(300));
    const orphan = await blobs.putContent(randomBytes(700));
    const young = await blobs.putContent(randomBytes(100));
    const reused = await blobs.putContent(Buffer.from('stored twice'));
    await messages.storeDelivered({
      id: 'm1',
      wallet,
      blobKey: referenced.key,
      size: 300,
      receivedAt: Date.now(),
      cid: null,
      pinnedByOperator: false,
      chainIndex: null,
      emailAddress: null,
      txSignature: null,
      publishedByUs: true,
    });
    const oldSpool = await spoolMessage(blobs, 'old-msgid');
    const newSpool = await spoolMessage(blobs, 'new-msgid');
    for (const key of [referenced.key, orphan.key, reused.key, oldSpool.key]) age(blobs, key, 10);
    // An unfinished write left behind by a crash.
    const tempKey = `${orphan.key.slice(0, 'sha256/xx'.length)}/.tmp-0123456789abcdef`;
    mkdirSync(join(blobs.root, orphan.key.slice(0, 'sha256/xx'.length)), { recursive: true });
    writeFileSync(join(blobs.root, tempKey), 'partial');
    age(blobs, tempKey, 10);
    // Stored again now: young again, kept.
    await blobs.putContent(Buffer.from('stored twice'));

    const summary = await sweepOrphanBlobs({ db: store.db, blobs, graceMs: 7 * DAY }, Date.now());
    expect(summary).toMatchObject({
      removed: 1,
      removedBytes: 700,
      spoolRemoved: 0,
      spoolKept: 1,
      tempRemoved: 1,
    });
    expect(await blobs.exists(orphan.key)).toBe(false);
    // No finished record says its mail is done: the spool entry stays, however old.
    expect(await blobs.exists(oldSpool.key)).toBe(true);
    expect(await blobs.mtime(tempKey).catch(() => 'gone')).toBe('gone');
    for (const key of [referenced.key, young.key, reused.key, newSpool.key]) {
      expect(await blobs.exists(key)).toBe(true);
    }
    // A second run finds nothing.
    const again = await sweepOrphanBlobs({ db: store.db, blobs, graceMs: 7 * DAY }, Date.now());
    expect(again).toMatchObject({ removed: 0, spoolRemoved: 0, tempRemoved: 0 });
  });

  it('waits at least a week, and two days past the outbound lifetime', () => {
    expect(blobSweepGraceMs(5 * 86_400)).toBe(7 * DAY);
    expect(blobSweepGraceMs(10 * 86_400)).toBe(12 * DAY);
  });

  it('runs daily from the workers: startMaintenance schedules it and a worker runs the job', async () => {
    const dir = tempDir();
    const store = await openStore({ url: `sqlite:${join(dir, 'store.sqlite')}`, dataDir: dir });
    stores.push(store);
    const blobs = new BlobStore(join(dir, 'blobs'));
    const orphan = await blobs.putContent(randomBytes(64));
    age(blobs, orphan.key, 30);
    const prefix = `sptest-sweep-${randomBytes(6).toString('hex')}`;
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    const maintenance = await startMaintenance({
      redis: () => new Redis(url, { maxRetriesPerRequest: null }),
      prefix,
      prune: { db: store.db, blobs, retention: { dmarc_retention_days: 90, report_retention_days: 90 } },
      sweep: { db: store.db, blobs, graceMs: 7 * DAY },
      logger: pino({ level: 'silent' }),
    });
    const redis = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE_MAINTENANCE, { connection: redis, prefix });
    const events = new QueueEvents(QUEUE_MAINTENANCE, { connection: redis.duplicate(), prefix });
    cleanups.push(async () => {
      await maintenance.close();
      await events.close();
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const schedulers = (await queue.getJobSchedulers()).map((j) => j.name).sort();
    expect(schedulers).toEqual(['blob-sweep', 'dmarc-prune']);
    await events.waitUntilReady();
    const job = await queue.add(BLOB_SWEEP_JOB, {});
    expect(await job.waitUntilFinished(events, 15_000)).toMatchObject({ removed: 1, removedBytes: 64 });
    expect(await blobs.exists(orphan.key)).toBe(false);
  });
});
