// DMARC report ingestion from whole RFC 5322 messages, on SQLite and on
// PostgreSQL: reports stored once (blob JSON + one row per record), foreign
// domains and bad attachments refused without throwing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { parseConfig } from '../../src/core/config/index.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { ingestDmarcMessage, isDmarcReportRecipient } from '../../src/mail/dmarc/ingest.ts';
import { DmarcRepo } from '../../src/mail/dmarc/repo.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const FIXTURES = new URL('../fixtures/dmarc/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));
const GOOGLE_ZIP = 'google.com!example.org!1700006400!1700092799.zip';
const MICROSOFT_GZ = 'enterprise.protection.outlook.com!example.org!1700092800!1700179200.xml.gz';

interface Attachment {
  filename?: string;
  content: Buffer;
  contentType: string;
}

function reportMail(attachments: Attachment[], subject = 'Report domain: example.org'): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    new MailComposer({
      from: 'noreply-dmarc-support@google.com',
      to: 'dmarc@example.org',
      subject,
      messageId: `<${Math.random().toString(36).slice(2)}@google.com>`,
      text: 'This is an aggregate report from google.com.',
      attachments,
    })
      .compile()
      .build((err, message) => (err ? reject(err) : resolve(new Uint8Array(message))));
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function sqliteStore(): Promise<Store> {
  const dir = tempDir();
  const store = await openStore({ url: 'sqlite:dmarc.sqlite', dataDir: dir });
  cleanups.push(() => store.close());
  return store;
}

async function postgresStore(): Promise<Store> {
  const schema = uniqueSchemaName('dmarc_ingest');
  const store = await openStore({ url: TEST_PG_URL, dataDir: tempDir(), searchPath: schema });
  cleanups.push(async () => {
    await store.close();
    await dropSchema(schema);
  });
  return store;
}

describe.each([
  ['SQLite', sqliteStore],
  ['PostgreSQL', postgresStore],
])('ingestDmarcMessage on %s', (_name, open) => {
  async function rig(now = 1_700_200_000_000) {
    const store = await open();
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    const deps = { db: store.db, blobs, localDomains: ['example.org', 'Example.NET.'], now: () => now };
    return { store, blobs, deps, repo: new DmarcRepo(store.db) };
  }

  it('stores a zip report once: blob JSON, report row and one row per record', async () => {
    const { deps, repo, blobs } = await rig();
    const raw = await reportMail([
      { filename: GOOGLE_ZIP, content: fixture(GOOGLE_ZIP), contentType: 'application/zip' },
    ]);
    const result = await ingestDmarcMessage(deps, raw, { messageId: '01HTESTMSG' });
    expect(result.ok).toBe(true);
    expect(result.reports).toHaveLength(1);
    const [stored] = result.reports;
    expect(stored).toMatchObject({
      status: 'stored',
      attachment: GOOGLE_ZIP,
      orgName: 'google.com',
      reportId: '14205638716358190422',
      domain: 'example.org',
      records: 2,
    });

    const row = await repo.get(stored?.id ?? '');
    expect(row).toMatchObject({
      org_name: 'google.com',
      report_id: '14205638716358190422',
      domain: 'example.org',
      date_begin: 1_700_006_400_000,
      date_end: 1_700_092_799_000,
      reporter_email: 'noreply-dmarc-support@google.com',
      record_count: 2,
      message_count: 14,
      source_message_id: '01HTESTMSG',
      received_at: 1_700_200_000_000,
    });
    expect(JSON.parse(row?.policy ?? '')).toEqual({
      domain: 'example.org',
      p: 'none',
      sp: 'none',
      adkim: 'r',
      aspf: 'r',
      pct: 100,
      fo: null,
      np: 'none',
    });
    expect(row?.blob_key).toMatch(/^dmarc_rua\/[0-9a-f]{2}\/[0-9a-f]{64}$/);
    const json = JSON.parse((await blobs.read(row?.blob_key ?? '')).toString('utf8'));
    expect(json).toMatchObject({
      format: 'sealpost-dmarc-aggregate/1',
      org_name: 'google.com',
      report_id: '14205638716358190422',
    });
    expect(json.records.map((r: { source_ip: string }) => r.source_ip)).toEqual([
      '198.51.100.25',
      '2001:db8:4860::1b',
    ]);

    const records = await repo.records(row?.id ?? '');
    expect(
      records.map(({ report_row_id: _, auth_results, ...r }) => ({ ...r, auth: JSON.parse(auth_results) })),
    ).toEqual([
      {
        seq: 0,
        source_ip: '198.51.100.25',
        count: 12,
        disposition: 'none',
        dkim: 'pass',
        spf: 'pass',
        header_from: 'example.org',
        envelope_from: null,
        auth: {
          dkim: [{ domain: 'example.org', selector: 's2025', result: 'pass' }],
          spf: [{ domain: 'example.org', result: 'pass' }],
        },
        date_begin: 1_700_006_400_000,
        date_end: 1_700_092_799_000,
        ingested_at: 1_700_200_000_000,
      },
      {
        seq: 1,
        source_ip: '2001:db8:4860::1b',
        count: 2,
        disposition: 'none',
        dkim: 'fail',
        spf: 'fail',
        header_from: 'example.org',
        envelope_from: null,
        auth: {
          dkim: [
            { domain: 'lists.example.net', selector: 'mail', result: 'pass' },
            { domain: 'example.org', selector: 's2025', result: 'fail' },
          ],
          spf: [{ domain: 'lists.example.net', result: 'pass' }],
        },
        date_begin: 1_700_006_400_000,
        date_end: 1_700_092_799_000,
        ingested_at: 1_700_200_000_000,
      },
    ]);

    // The same report delivered again (another copy, another message) is not stored twice.
    const again = await ingestDmarcMessage(
      deps,
      await reportMail([
        { filename: 'again.zip', content: fixture(GOOGLE_ZIP), contentType: 'application/octet-stream' },
      ]),
    );
    expect(again.reports).toEqual([
      expect.objectContaining({
        status: 'duplicate',
        id: stored?.id,
        records: 2,
        reportId: '14205638716358190422',
      }),
    ]);
    expect(await repo.list({ limit: 10 })).toHaveLength(1);
  });

  it('stores gzip and plain XML attachments of one message, skipping other attachments', async () => {
    const { deps, repo } = await rig();
    const raw = await reportMail([
      { filename: MICROSOFT_GZ, content: fixture(MICROSOFT_GZ), contentType: 'application/gzip' },
      { filename: 'namespaced.xml', content: fixture('namespaced-report.xml'), contentType: 'text/xml' },
      {
        filename: 'logo.png',
        content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
        contentType: 'image/png',
      },
      {
        filename: 'summary.html',
        content: Buffer.from('<html><body>2 reports</body></html>'),
        contentType: 'text/html',
      },
    ]);
    const result = await ingestDmarcMessage(deps, raw);
    expect(result.ok).toBe(true);
    expect(result.reports.map((r) => [r.status, r.orgName, r.records])).toEqual([
      ['stored', 'Enterprise Outlook', 1],
      ['stored', 'Mail Provider Example', 1],
    ]);
    const listed = await repo.list({ limit: 10 });
    expect(listed.map((r) => r.org_name).sort()).toEqual(['Enterprise Outlook', 'Mail Provider Example']);
  });

  it('refuses a report about a domain this server does not serve, without throwing', async () => {
    const { deps, repo } = await rig();
    const raw = await reportMail([
      {
        filename: 'foreign.xml.gz',
        content: gzipSync(fixture('foreign-domain-report.xml')),
        contentType: 'application/gzip',
      },
    ]);
    const result = await ingestDmarcMessage(deps, raw);
    expect(result.ok).toBe(false);
    expect(result.reports).toEqual([
      expect.objectContaining({
        status: 'refused',
        domain: 'not-ours.example',
        error: { code: 'foreign_domain', message: expect.stringContaining('not-ours.example') },
      }),
    ]);
    expect(await repo.list({ limit: 10 })).toEqual([]);
  });

  it('answers bombs, broken reports and report-less mail with a result, storing nothing', async () => {
    const { deps, repo } = await rig();
    const bomb = gzipSync(Buffer.alloc(3 * 1024 * 1024, 0x20));
    const broken = Buffer.from(fixture('google-report.xml').toString('utf8').replace('</feedback>', ''));
    const result = await ingestDmarcMessage(
      { ...deps, maxReportBytes: 1024 * 1024 },
      await reportMail([
        { filename: 'bomb.xml.gz', content: bomb, contentType: 'application/gzip' },
        { filename: 'broken.xml', content: broken, contentType: 'text/xml' },
      ]),
    );
    expect(result.ok).toBe(false);
    expect(result.reports.map((r) => [r.attachment, r.status, r.error?.code])).toEqual([
      ['bomb.xml.gz', 'refused', 'too_large'],
      ['broken.xml', 'refused', 'malformed_xml'],
    ]);
    const none = await ingestDmarcMessage(deps, await reportMail([]));
    expect(none).toEqual({
      ok: false,
      reports: [],
      error: { code: 'no_report', message: expect.any(String) },
    });
    expect(await repo.list({ limit: 10 })).toEqual([]);
  });
});

describe('isDmarcReportRecipient', () => {
  it('matches the configured rua mailbox only when ingestion is on', () => {
    const on = parseConfig(
      '[smtp]\nlocal_domains = ["example.org"]\n[spooler.dmarc_rua_ingest]\nenabled = true\naddress = "DMARC@example.org"\n',
    );
    expect(on.spooler.dmarc_rua_ingest.address).toBe('dmarc@example.org');
    expect(isDmarcReportRecipient(on, 'Dmarc@Example.org')).toBe(true);
    expect(isDmarcReportRecipient(on, 'postmaster@example.org')).toBe(false);
    const off = parseConfig('[smtp]\nlocal_domains = ["example.org"]\n');
    expect(off.spooler.dmarc_rua_ingest.address).toBe('postmaster@example.org');
    expect(isDmarcReportRecipient(off, 'postmaster@example.org')).toBe(false);
  });
});
