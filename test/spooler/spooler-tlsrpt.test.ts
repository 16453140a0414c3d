// TLS-RPT (RFC 8460) end to end: results recorded by real deliveries, the
// daily job run through its BullMQ queue, the gzip JSON report checked
// against the RFC's schema (test/fixtures/spooler/tlsrpt-report.schema.json),
// delivered to an https rua endpoint and, DKIM-signed, to a mailto rua
// mailbox; nothing for domains without traffic or without a record; pending
// rows pruned by report_retention_days.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { Queue } from 'bullmq';
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import type { TlsrptReport } from '../../spooler/tlsrpt-report.ts';
import {
  QUEUE_SPOOLER_MAINT,
  TLSRPT_REPORT_JOB,
  TLSRPT_SCHEDULER_ID,
} from '../../src/contracts/outbound-jobs.ts';
import { dkimRecord, generateDkimKey } from '../../src/core/keys/dkim-key.ts';
import { newSortableId } from '../../src/core/log.ts';
import { renderMtaStsPolicy } from '../../src/edge/domaind/mta-sts.ts';
import { createDkimSigner } from '../../src/mail/dkim-sign.ts';
import { startMtaStsHost } from '../support/doubles/mta-sts-host.ts';
import { startRemoteMx } from '../support/doubles/remote-mx.ts';
import { startTlsrptReceiver } from '../support/doubles/tlsrpt-receiver.ts';
import { eventually, type SpoolerRig, startSpoolerRig } from '../support/spooler-rig.ts';
import { tempDir } from '../support/temp-dir.ts';
import { leafFrom, testCa } from '../support/test-pki.ts';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const DAY = 86_400_000;
const schema = JSON.parse(readFileSync('test/fixtures/spooler/tlsrpt-report.schema.json', 'utf8'));

function validateReport(report: unknown): string[] {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats.default(ajv);
  return ajv.validate(schema, report) ? [] : (ajv.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

function dkimverify(dns: { host: string; port: number }, message: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/usr/bin/python3',
      ['test/fixtures/spooler/dkimverify.py', dns.host, String(dns.port)],
      { stdio: ['pipe', 'ignore', 'ignore'] },
    );
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
    child.stdin.end(message);
  });
}

async function started<T extends { close(): Promise<void> }>(p: Promise<T>): Promise<T> {
  const v = await p;
  cleanup.push(() => v.close());
  return v;
}

async function sendAndWait(r: SpoolerRig, to: string) {
  const domain = to.slice(to.indexOf('@') + 1);
  await r.done(await r.send({ from: 'ann@sealpost.test', to: [to] }), domain);
}

describe('TLS-RPT reports', () => {
  it('a daily report per domain with traffic: gzip JSON valid per RFC 8460, posted to https and mailed DKIM-signed to mailto', async () => {
    const ca = await testCa();
    const receiver = await started(startTlsrptReceiver(await leafFrom(ca, ['127.0.0.1'])));
    const good = await leafFrom(ca, ['mx.rpt.test']);
    const wrong = await leafFrom(ca, ['other.example']);
    const mxGood = await started(
      startRemoteMx({ host: '127.0.0.90', tls: { key: good.key, cert: good.chain } }),
    );
    const mxWrong = await started(
      startRemoteMx({ host: '127.0.0.92', port: mxGood.port, tls: { key: wrong.key, cert: wrong.chain } }),
    );
    const reportsMx = await started(startRemoteMx({ host: '127.0.0.93', port: mxGood.port }));
    const norecordMx = await started(startRemoteMx({ host: '127.0.0.94', port: mxGood.port }));
    const policyHost = await started(startMtaStsHost(await leafFrom(ca, ['mta-sts.rpt.test'])));
    const policyText = renderMtaStsPolicy({ mode: 'testing', mx: ['mx.rpt.test'], maxAgeSecs: 86_400 });
    policyHost.serve('rpt.test', { kind: 'policy', text: policyText });

    const dir = tempDir();
    const key = await generateDkimKey();
    writeFileSync(join(dir, 'dkim.pem'), key.privateKeyPem);
    const dkimEntry = { domain: 'sealpost.test', selector: 'rpt', key_file: join(dir, 'dkim.pem') };
    const r = await startSpoolerRig({
      config: {
        smtp_port: mxGood.port,
        tlsrpt: { enabled: true, org_name: 'out.sealpost.test', contact: 'tlsrpt@sealpost.test' },
        dkim: [dkimEntry],
      },
      withStore: true,
      // Signed on the real clock: dkimpy refuses a t= in the future, and this test moves its clock a day ahead.
      extra: { extraCa: [ca.cert], mtaStsPort: policyHost.port, dkim: createDkimSigner([dkimEntry]) },
      zone: {
        'rpt.test': { MX: [{ preference: 10, exchange: 'mx.rpt.test' }] },
        'mx.rpt.test': { A: ['127.0.0.90'] },
        'mta-sts.rpt.test': { A: ['127.0.0.1'] },
        '_mta-sts.rpt.test': { TXT: ['v=STSv1; id=r1'] },
        '_smtp._tls.rpt.test': {
          TXT: [`v=TLSRPTv1; rua=mailto:tls-reports@reports.test,https://127.0.0.1:${receiver.port}/tlsrpt`],
        },
        'reports.test': { MX: [{ preference: 10, exchange: 'mx.reports.test' }] },
        'mx.reports.test': { A: ['127.0.0.93'] },
        'norecord.test': { MX: [{ preference: 10, exchange: 'mx.norecord.test' }] },
        'mx.norecord.test': { A: ['127.0.0.94'] },
        '_smtp._tls.quiet.test': { TXT: [`v=TLSRPTv1; rua=https://127.0.0.1:${receiver.port}/quiet`] },
        'rpt._domainkey.sealpost.test': {
          TXT: [dkimRecord('sealpost.test', 'rpt', key.publicKeySpki).strings],
        },
      },
    });
    cleanup.push(() => r.close());

    // Yesterday's traffic: two messages over one good TLS session (the second reuses the cached
    // connection, so it is one session for RFC 8460), then one session to a host whose certificate
    // names another host (testing mode: delivered, reported).
    const dayStart = Math.floor(r.clock.now() / DAY) * DAY;
    await sendAndWait(r, 'a@rpt.test');
    await sendAndWait(r, 'b@rpt.test');
    r.dns.set('mx.rpt.test', 'A', ['127.0.0.92']);
    r.spooler.dns.clearCache();
    await sendAndWait(r, 'c@rpt.test');
    await sendAndWait(r, 'd@norecord.test');
    expect(mxGood.accepted).toHaveLength(2);
    expect(mxGood.stats.connections).toBe(1);
    expect(mxWrong.accepted).toHaveLength(1);
    expect(norecordMx.accepted).toHaveLength(1);

    // The daily job, run the way the scheduler runs it, the next day.
    const maint = new Queue(QUEUE_SPOOLER_MAINT, { connection: r.redis, prefix: r.prefix });
    cleanup.push(() => maint.close());
    expect(await maint.getJobScheduler(TLSRPT_SCHEDULER_ID)).toMatchObject({
      pattern: '23 0 * * *',
      tz: 'UTC',
    });
    await r.spooler.settled();
    r.clock.advance(DAY);
    const job = await maint.add(TLSRPT_REPORT_JOB, {});
    // The state first, then the job: a copy read before it completed has no return value.
    const summary = await eventually(async () =>
      (await job.getState()) === 'completed'
        ? (await maint.getJob(job.id as string))?.returnvalue
        : undefined,
    );
    expect(summary).toMatchObject({
      reports: [
        {
          domain: 'rpt.test',
          mailto: ['tls-reports@reports.test'],
          https: [`https://127.0.0.1:${receiver.port}/tlsrpt`],
          failed: [],
        },
      ],
      noRecord: ['norecord.test'],
    });

    // https: exactly one report, for rpt.test; quiet.test had no traffic and gets nothing.
    expect(receiver.received.map((x) => x.path)).toEqual(['/tlsrpt']);
    const posted = receiver.received[0];
    expect(posted?.contentType).toBe('application/tlsrpt+gzip');
    const report = JSON.parse(gunzipSync(posted?.body as Buffer).toString('utf8')) as TlsrptReport;
    expect(validateReport(report)).toEqual([]);
    expect(report).toMatchObject({
      'organization-name': 'out.sealpost.test',
      'contact-info': 'tlsrpt@sealpost.test',
      'date-range': {
        'start-datetime': new Date(dayStart).toISOString().replace('.000Z', 'Z'),
        'end-datetime': new Date(dayStart + DAY - 1000).toISOString().replace('.000Z', 'Z'),
      },
      policies: [
        {
          policy: {
            'policy-type': 'sts',
            'policy-string': ['version: STSv1', 'mode: testing', 'mx: mx.rpt.test', 'max_age: 86400'],
            'policy-domain': 'rpt.test',
            'mx-host': ['mx.rpt.test'],
          },
          summary: { 'total-successful-session-count': 1, 'total-failure-session-count': 1 },
          'failure-details': [
            {
              'result-type': 'certificate-host-mismatch',
              'sending-mta-ip': '127.0.0.1',
              'receiving-mx-hostname': 'mx.rpt.test',
              'receiving-ip': '127.0.0.92',
              'failed-session-count': 1,
            },
          ],
        },
      ],
    });

    // mailto: the same report as a DKIM-signed multipart/report.
    const mail = await eventually(() => reportsMx.accepted[0]);
    expect(mail.to).toEqual(['tls-reports@reports.test']);
    expect(mail.from).toBe('tlsrpt@sealpost.test');
    expect(await dkimverify(r.dns, mail.raw)).toBe(0);
    const parsed = await simpleParser(mail.raw);
    expect(parsed.headers.get('content-type')).toMatchObject({
      value: 'multipart/report',
      params: { 'report-type': 'tlsrpt' },
    });
    expect(parsed.headers.get('tls-report-domain')).toBe('rpt.test');
    expect(parsed.headers.get('tls-report-submitter')).toBe('out.sealpost.test');
    expect(parsed.subject).toBe(
      `Report Domain: rpt.test Submitter: out.sealpost.test Report-ID: <${report['report-id']}>`,
    );
    const [attachment] = parsed.attachments;
    expect(attachment?.contentType).toBe('application/tlsrpt+gzip');
    expect(attachment?.filename).toMatch(/^out\.sealpost\.test!rpt\.test!\d+!\d+!.+\.json\.gz$/);
    const mailed = JSON.parse(gunzipSync(attachment?.content as Buffer).toString('utf8'));
    expect(mailed).toEqual(report);

    // Reported and dropped rows are gone; a second run sends nothing new.
    const left = await r.store?.db
      .selectFrom('tlsrpt_pending')
      .select(['policy_domain'])
      .where('recorded_at', '<', dayStart + DAY)
      .execute();
    expect(left).toEqual([]);
    const again = await r.spooler.runTlsrptReports();
    expect(again.reports).toEqual([]);
    expect(receiver.received).toHaveLength(1);
  });

  it('keeps rows it could not send (rua down, lookup failing) and prunes them after report_retention_days', async () => {
    const ca = await testCa();
    const receiver = await started(startTlsrptReceiver(await leafFrom(ca, ['127.0.0.1'])));
    receiver.status = 503;
    const r = await startSpoolerRig({
      config: {
        tlsrpt: { enabled: true, org_name: 'out.sealpost.test', contact: 'tlsrpt@sealpost.test' },
        dmarc_rua_ingest: {
          enabled: false,
          dmarc_retention_days: 90,
          report_retention_days: 30,
          address: 'postmaster@sealpost.test',
          max_report_bytes: 1024,
        },
      },
      withStore: true,
      extra: { extraCa: [ca.cert] },
      zone: { '_smtp._tls.down.test': { TXT: [`v=TLSRPTv1; rua=https://127.0.0.1:${receiver.port}/r`] } },
    });
    cleanup.push(() => r.close());
    r.dns.setFault('_smtp._tls.flaky.test', 'servfail');
    const db = r.store?.db;
    if (!db) throw new Error('no store');
    const now = r.clock.now();
    const row = (domain: string, at: number) => ({
      id: newSortableId(at),
      policy_domain: domain,
      recorded_at: at,
      result_type: 'success',
      detail: JSON.stringify({ policyType: 'no-policy-found', policyString: [], mxHost: [] }),
    });
    await db
      .insertInto('tlsrpt_pending')
      .values([
        row('down.test', now - 2 * DAY),
        row('flaky.test', now - 2 * DAY),
        row('flaky.test', now - 31 * DAY),
        row('down.test', now - 40 * DAY),
      ])
      .execute();
    const summary = await r.spooler.runTlsrptReports(now);
    // down.test: two days with traffic, both attempted and failed; flaky.test: lookup failed, nothing tried.
    expect(summary.reports.map((x) => [x.domain, x.failed.length])).toEqual([
      ['down.test', 1],
      ['down.test', 1],
    ]);
    expect(receiver.received).toHaveLength(2);
    expect(summary.pruned).toBe(2);
    const left = await db
      .selectFrom('tlsrpt_pending')
      .select(['policy_domain', 'recorded_at'])
      .orderBy('policy_domain')
      .execute();
    expect(left).toEqual([
      { policy_domain: 'down.test', recorded_at: now - 2 * DAY },
      { policy_domain: 'flaky.test', recorded_at: now - 2 * DAY },
    ]);
  });
});
