// GET /v1/admin/dmarc-reports over real HTTP: admin check, filters by domain
// and period, keyset pagination, one report with its records, bad queries.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { openStore } from '../../src/core/store/index.ts';
import { dmarcAdminRoutes } from '../../src/mail/dmarc/admin-route.ts';
import { ingestDmarcMessage } from '../../src/mail/dmarc/ingest.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOKEN = 'admin-token-for-dmarc-tests';
const xml = readFileSync(new URL('../fixtures/dmarc/google-report.xml', import.meta.url), 'utf8');
const DAY = 86_400;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function mail(domain: string, reportId: string, beginSecs: number): Promise<Uint8Array> {
  const content = Buffer.from(
    xml
      .replace('14205638716358190422', reportId)
      .replace('<domain>example.org</domain>\n    <adkim>', `<domain>${domain}</domain>\n    <adkim>`)
      .replace('<begin>1700006400</begin>', `<begin>${beginSecs}</begin>`)
      .replace('<end>1700092799</end>', `<end>${beginSecs + DAY - 1}</end>`),
  );
  return new Promise((resolve, reject) => {
    new MailComposer({
      from: 'noreply-dmarc-support@google.com',
      to: 'dmarc@example.org',
      subject: `Report domain: ${domain} Report-ID: ${reportId}`,
      text: 'report',
      attachments: [{ filename: 'r.xml', content, contentType: 'text/xml' }],
    })
      .compile()
      .build((err, m) => (err ? reject(err) : resolve(new Uint8Array(m))));
  });
}

async function server() {
  const store = await openStore({ url: 'sqlite:admin.sqlite', dataDir: tempDir() });
  const blobs = new BlobStore(join(tempDir(), 'blobs'));
  const app = Fastify();
  await app.register(
    dmarcAdminRoutes({
      db: store.db,
      blobs,
      isAdmin: (req) => req.headers.authorization === `Bearer ${TOKEN}`,
    }),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    await app.close();
    await store.close();
  });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const deps = { db: store.db, blobs, localDomains: ['example.org', 'example.net'] };
  const get = async (path: string, token: string | null = TOKEN) => {
    const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { deps, get };
}

const START = 1_700_006_400; // 2023-11-15T00:00:00Z

describe('GET /v1/admin/dmarc-reports', () => {
  it('refuses callers without the admin token', async () => {
    const { get } = await server();
    expect(await get('/v1/admin/dmarc-reports', null)).toEqual({
      status: 401,
      body: { error: 'admin_auth_required', message: expect.any(String) },
    });
    expect((await get('/v1/admin/dmarc-reports', 'wrong-token')).status).toBe(401);
  });

  it('lists newest first, filters by domain and period, and pages by cursor', async () => {
    const { deps, get } = await server();
    const ids: Record<string, string> = {};
    for (let day = 0; day < 5; day++) {
      for (const domain of ['example.org', 'example.net']) {
        const tag = `${domain}-${day}`;
        const r = await ingestDmarcMessage(deps, await mail(domain, tag, START + day * DAY));
        ids[tag] = r.reports[0]?.id ?? '';
      }
    }

    const all = await get('/v1/admin/dmarc-reports');
    expect(all.status).toBe(200);
    const reports = all.body.reports as Record<string, unknown>[];
    expect(reports).toHaveLength(10);
    expect(all.body.next_cursor).toBeNull();
    expect(reports[0]).toEqual({
      id: expect.any(String),
      org_name: 'google.com',
      report_id: expect.stringMatching(/-4$/),
      domain: expect.any(String),
      date_begin: '2023-11-19T00:00:00.000Z',
      date_end: '2023-11-19T23:59:59.000Z',
      reporter_email: 'noreply-dmarc-support@google.com',
      policy: {
        domain: reports[0]?.domain,
        p: 'none',
        sp: 'none',
        adkim: 'r',
        aspf: 'r',
        pct: 100,
        fo: null,
        np: 'none',
      },
      record_count: 2,
      message_count: 14,
      received_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      blob_key: expect.stringMatching(/^dmarc_rua\//),
    });

    const org = await get(
      '/v1/admin/dmarc-reports?domain=Example.ORG.&from=2023-11-16&to=2023-11-18T00:00:00Z',
    );
    expect((org.body.reports as { report_id: string }[]).map((r) => r.report_id)).toEqual([
      'example.org-2',
      'example.org-1',
    ]);
    const bySeconds = await get(
      `/v1/admin/dmarc-reports?domain=example.org&from=${START + DAY}&to=${START + 3 * DAY}`,
    );
    expect(bySeconds.body.reports).toEqual(org.body.reports);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await get(
        `/v1/admin/dmarc-reports?domain=example.net&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...(page.body.reports as { report_id: string }[]).map((r) => r.report_id));
      cursor = page.body.next_cursor as string | null;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([
      'example.net-4',
      'example.net-3',
      'example.net-2',
      'example.net-1',
      'example.net-0',
    ]);

    const one = await get(`/v1/admin/dmarc-reports/${ids['example.org-3']}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      id: ids['example.org-3'],
      report_id: 'example.org-3',
      domain: 'example.org',
    });
    expect(one.body.records).toEqual([
      {
        source_ip: '198.51.100.25',
        count: 12,
        disposition: 'none',
        dkim: 'pass',
        spf: 'pass',
        header_from: 'example.org',
        envelope_from: null,
        auth_results: {
          dkim: [{ domain: 'example.org', selector: 's2025', result: 'pass' }],
          spf: [{ domain: 'example.org', result: 'pass' }],
        },
      },
      expect.objectContaining({ source_ip: '2001:db8:4860::1b', count: 2 }),
    ]);
    expect(one.body.report).toMatchObject({
      format: 'sealpost-dmarc-aggregate/1',
      report_id: 'example.org-3',
    });
  });

  it('answers bad queries with 400 and unknown ids with 404', async () => {
    const { get } = await server();
    for (const q of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'from=yesterday',
      'from=2024-01-02&to=2024-01-01',
      'cursor=%%%',
      'cursor=Zm9v',
    ]) {
      const r = await get(`/v1/admin/dmarc-reports?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body).toEqual({ error: 'invalid_query', message: expect.any(String) });
    }
    expect(await get('/v1/admin/dmarc-reports/01HNOSUCHREPORT')).toEqual({
      status: 404,
      body: { error: 'report_not_found', message: expect.stringContaining('01HNOSUCHREPORT') },
    });
  });
});
