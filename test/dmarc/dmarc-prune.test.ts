// Retention of DMARC data at the boundary days, on SQLite and PostgreSQL,
// and the daily BullMQ job that runs it (real Redis, random queue name).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, QueueEvents, Worker } from 'bullmq';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { ingestDmarcMessage } from '../../src/mail/dmarc/ingest.ts';
import {
  DAY_MS,
  DMARC_PRUNE_JOB,
  DMARC_PRUNE_SCHEDULER_ID,
  dmarcPruneProcessor,
  pruneDmarc,
  scheduleDmarcPrune,
} from '../../src/mail/dmarc/prune.ts';
import { DmarcRepo } from '../../src/mail/dmarc/repo.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const REDIS = { host: '127.0.0.1', port: 6379 };
const xml = readFileSync(new URL('../fixtures/dmarc/google-report.xml', import.meta.url), 'utf8');
const T0 = 1_710_000_000_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function mailWithReport(reportId: string): Promise<Uint8Array> {
  const content = Buffer.from(xml.replace('14205638716358190422', reportId));
  return new Promise((resolve, reject) => {
    new MailComposer({
      from: 'noreply-dmarc-support@google.com',
      to: 'dmarc@example.org',
      subject: `Report ${reportId}`,
      text: 'aggregate report',
      attachments: [{ filename: `${reportId}.xml`, content, contentType: 'text/xml' }],
    })
      .compile()
      .build((err, m) => (err ? reject(err) : resolve(new Uint8Array(m))));
  });
}

async function sqliteStore(): Promise<Store> {
  const store = await openStore({ url: 'sqlite:prune.sqlite', dataDir: tempDir() });
  cleanups.push(() => store.close());
  return store;
}

async function postgresStore(): Promise<Store> {
  const schema = uniqueSchemaName('dmarc_prune');
  const store = await openStore({ url: TEST_PG_URL, dataDir: tempDir(), searchPath: schema });
  cleanups.push(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return store;
}

async function seed(store: Store, blobs: BlobStore, at: number, tag: string): Promise<string> {
  const result = await ingestDmarcMessage(
    { db: store.db, blobs, localDomains: ['example.org'], now: () => at },
    await mailWithReport(tag),
  );
  expect(result.reports[0]?.status).toBe('stored');
  await store.db
    .insertInto('sender_evaluations')
    .values({
      id: `eval-${tag}`,
      at,
      source_ip: '192.0.2.1',
      helo: 'mx.example.net',
      mail_from: 'a@example.net',
      header_from: 'example.net',
      spf: 'pass',
      dkim: null,
      dmarc: null,
      dmarc_policy: null,
      disposition: 'accept',
    })
    .execute();
  await store.db
    .insertInto('tlsrpt_pending')
    .values({
      id: `tls-${tag}`,
      policy_domain: 'example.net',
      recorded_at: at,
      result_type: 'success',
      detail: null,
    })
    .execute();
  return result.reports[0]?.id ?? '';
}

async function remaining(store: Store) {
  const ids = async (table: 'dmarc_reports' | 'sender_evaluations' | 'tlsrpt_pending') =>
    (await store.db.selectFrom(table).select('id').orderBy('id').execute()).map((r) => r.id);
  const records = await store.db.selectFrom('dmarc_report_records').select(['report_row_id']).execute();
  return {
    reports: await ids('dmarc_reports'),
    records: records.length,
    evaluations: await ids('sender_evaluations'),
    tlsrpt: await ids('tlsrpt_pending'),
  };
}

describe.each([
  ['SQLite', sqliteStore],
  ['PostgreSQL', postgresStore],
])('pruneDmarc on %s', (_name, open) => {
  it('keeps rows exactly N days old and deletes rows older by one millisecond', async () => {
    const store = await open();
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    const now = T0 + 200 * DAY_MS;
    // Rows: 30 days (source_ip retention), 90 days (report retention).
    const atRowEdge = await seed(store, blobs, now - 30 * DAY_MS, 'row-edge');
    const pastRowEdge = await seed(store, blobs, now - 30 * DAY_MS - 1, 'past-row-edge');
    const atReportEdge = await seed(store, blobs, now - 90 * DAY_MS, 'report-edge');
    const pastReportEdge = await seed(store, blobs, now - 90 * DAY_MS - 1, 'past-report-edge');
    const repo = new DmarcRepo(store.db);
    const doomedBlob = (await repo.get(pastReportEdge))?.blob_key ?? '';
    expect(await blobs.exists(doomedBlob)).toBe(true);

    const summary = await pruneDmarc(
      { db: store.db, blobs, retention: { dmarc_retention_days: 30, report_retention_days: 90 } },
      now,
    );
    expect(summary).toEqual({
      reports: 1,
      records: 2 + 2 * 2, // the pruned report's 2, then 2 each of the two reports past 30 days
      senderEvaluations: 3,
      tlsrptPending: 1,
      blobs: 1,
      rowsBefore: now - 30 * DAY_MS,
      reportsBefore: now - 90 * DAY_MS,
    });
    const left = await remaining(store);
    expect(left.reports.sort()).toEqual([atRowEdge, pastRowEdge, atReportEdge].sort());
    expect(left.records).toBe(2); // only the report exactly 30 days old keeps its source_ip rows
    expect(left.evaluations).toEqual(['eval-row-edge']);
    expect(left.tlsrpt.sort()).toEqual(['tls-past-row-edge', 'tls-report-edge', 'tls-row-edge']);
    expect(await blobs.exists(doomedBlob)).toBe(false);
    expect(await repo.records(atRowEdge)).toHaveLength(2);
  });

  it('keeps everything forever when both retentions are 0', async () => {
    const store = await open();
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    await seed(store, blobs, T0, 'ancient');
    const summary = await pruneDmarc(
      { db: store.db, blobs, retention: { dmarc_retention_days: 0, report_retention_days: 0 } },
      T0 + 10_000 * DAY_MS,
    );
    expect(summary).toMatchObject({
      reports: 0,
      records: 0,
      senderEvaluations: 0,
      tlsrptPending: 0,
      rowsBefore: null,
      reportsBefore: null,
    });
    expect(await remaining(store)).toEqual({
      reports: [expect.any(String)],
      records: 2,
      evaluations: ['eval-ancient'],
      tlsrpt: ['tls-ancient'],
    });
  });
});

describe('the daily prune job', () => {
  it('registers one daily scheduler and prunes when a worker runs the job', async () => {
    const store = await sqliteStore();
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    const now = T0 + 100 * DAY_MS;
    await seed(store, blobs, now - 91 * DAY_MS, 'old');
    await seed(store, blobs, now - DAY_MS, 'fresh');

    const name = `dmarc-prune-test-${randomUUID()}`;
    const queue = new Queue(name, { connection: REDIS });
    cleanups.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });
    await scheduleDmarcPrune(queue);
    await scheduleDmarcPrune(queue); // idempotent across restarts
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers).toHaveLength(1);
    expect(schedulers[0]).toMatchObject({
      key: DMARC_PRUNE_SCHEDULER_ID,
      name: DMARC_PRUNE_JOB,
      pattern: '17 3 * * *',
    });

    const processor = dmarcPruneProcessor(
      { db: store.db, blobs, retention: { dmarc_retention_days: 90, report_retention_days: 90 } },
      () => now,
    );
    const worker = new Worker(name, processor, { connection: REDIS });
    const events = new QueueEvents(name, { connection: REDIS });
    cleanups.push(async () => {
      await worker.close();
      await events.close();
    });
    await events.waitUntilReady();
    const job = await queue.add(DMARC_PRUNE_JOB, {});
    const result = await job.waitUntilFinished(events, 15_000);
    expect(result).toMatchObject({ reports: 1, senderEvaluations: 1, tlsrptPending: 1 });
    expect((await remaining(store)).evaluations).toEqual(['eval-fresh']);
  });
});
