// The daily TLS-RPT run: for every policy domain with results recorded
// before today (UTC), one report per day with traffic, sent to the rua
// targets of `_smtp._tls.<domain>` — mailto targets as DKIM-signed mail
// through the spooler's own queue, https targets by POST. Rows of a day
// are deleted once its report went out to at least one target (or the
// domain asks for none); rows that could not be sent stay for the next run
// and are pruned after report_retention_days. Domains without traffic get
// nothing because they have no rows.
import { request as httpsRequest } from 'node:https';
import type { Queue } from 'bullmq';
import type { Kysely } from 'kysely';
import type { OutboundJobData } from '../delivery/jobs.ts';
import type { BlobStore } from '../src/blobs/blob-store.ts';
import type { SpoolerConfig } from '../src/config/types.ts';
import type { Logger } from '../src/log.ts';
import type { Database } from '../src/store/types.ts';
import { trustedCa } from '../src/tls/extra-ca.ts';
import type { DkimSigner } from './dkim-sign.ts';
import type { SecureDns } from './secure-dns.ts';
import { txtStrings } from './secure-dns.ts';
import {
  buildReportEmail,
  buildTlsrptReport,
  DAY_MS,
  gzipReport,
  parseTlsrptRecord,
  type TlsrptReport,
} from './tlsrpt-report.ts';
import { deleteRows, pendingDomains, pendingRows, prunePending } from './tlsrpt-store.ts';

export interface TlsrptRunDeps {
  db: Kysely<Database>;
  dns: SecureDns;
  blobs: BlobStore;
  intake: Queue<OutboundJobData>;
  config: SpoolerConfig;
  dkim: DkimSigner | null;
  extraCa?: readonly string[];
  httpsTimeoutMs?: number;
  logger: Logger;
}

export interface TlsrptRunSummary {
  reports: { domain: string; day: string; mailto: string[]; https: string[]; failed: string[] }[];
  /** Domains whose rows were dropped because they publish no TLS-RPT record. */
  noRecord: string[];
  pruned: number;
}

export async function runTlsrptReports(deps: TlsrptRunDeps, now: number): Promise<TlsrptRunSummary> {
  const summary: TlsrptRunSummary = { reports: [], noRecord: [], pruned: 0 };
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const { org_name: orgName, contact } = deps.config.tlsrpt;
  const contactDomain = contact.slice(contact.lastIndexOf('@') + 1);
  const canMail = deps.dkim?.signingDomain(contactDomain) != null;

  for (const { domain, first } of await pendingDomains(deps.db, today)) {
    let targets: ReturnType<typeof parseTlsrptRecord>;
    try {
      targets = parseTlsrptRecord(txtStrings((await deps.dns.query(`_smtp._tls.${domain}`, 'TXT')).records));
    } catch (err) {
      deps.logger.warn(
        { domain, err: (err as Error).message },
        'TLS-RPT record lookup failed; keeping results',
      );
      continue;
    }
    if (!targets) {
      await deleteRows(deps.db, domain, 0, today);
      summary.noRecord.push(domain);
      continue;
    }
    for (let day = Math.floor(first / DAY_MS) * DAY_MS; day < today; day += DAY_MS) {
      const rows = await pendingRows(deps.db, domain, day, day + DAY_MS);
      if (rows.length === 0) continue;
      const report = buildTlsrptReport({ orgName, contact, domain, dayStart: day, rows });
      const gz = gzipReport(report);
      const sent = {
        domain,
        day: new Date(day).toISOString().slice(0, 10),
        mailto: [] as string[],
        https: [] as string[],
        failed: [] as string[],
      };
      for (const to of targets.mailto) {
        if (!canMail) {
          // RFC 8460 §5.3: a mailed report without a valid DKIM signature must be ignored.
          deps.logger.warn(
            { domain, to },
            `TLS-RPT mail not sent: no [[spooler.dkim]] key for ${contactDomain}`,
          );
          sent.failed.push(`mailto:${to}`);
          continue;
        }
        await queueReportMail(deps, { to, domain, report, gz, now });
        sent.mailto.push(to);
      }
      for (const url of targets.https) {
        try {
          await postReport(url, gz, deps.extraCa, deps.httpsTimeoutMs ?? 30_000);
          sent.https.push(url);
        } catch (err) {
          deps.logger.warn({ domain, url, err: (err as Error).message }, 'TLS-RPT https delivery failed');
          sent.failed.push(url);
        }
      }
      if (sent.mailto.length + sent.https.length > 0) await deleteRows(deps.db, domain, day, day + DAY_MS);
      summary.reports.push(sent);
    }
  }
  summary.pruned = await prunePending(deps.db, now, deps.config.dmarc_rua_ingest.report_retention_days);
  deps.logger.info(
    { reports: summary.reports.length, noRecord: summary.noRecord.length, pruned: summary.pruned },
    'TLS-RPT daily run done',
  );
  return summary;
}

async function queueReportMail(
  deps: TlsrptRunDeps,
  r: { to: string; domain: string; report: TlsrptReport; gz: Buffer; now: number },
): Promise<void> {
  const raw = await buildReportEmail({
    from: deps.config.tlsrpt.contact,
    to: r.to,
    orgName: deps.config.tlsrpt.org_name,
    hostname: deps.config.hostname,
    domain: r.domain,
    report: r.report,
    gz: r.gz,
    date: new Date(r.now),
  });
  const stored = await deps.blobs.putContent(raw);
  const id = `tlsrpt-${r.report['report-id'].replace(/[^A-Za-z0-9._-]/g, '_')}-${Buffer.from(r.to).toString('hex').slice(0, 32)}`;
  const data: OutboundJobData = {
    msgid: id,
    from: deps.config.tlsrpt.contact,
    to: [r.to],
    blobKey: stored.key,
    kind: 'report',
    createdAt: r.now,
    // A report that cannot be delivered is not worth a bounce to ourselves.
    dsn: { notify: 'NEVER' },
  };
  await deps.intake.add('report', data, { jobId: id, removeOnComplete: { age: 86_400 }, removeOnFail: 5000 });
}

function postReport(
  url: string,
  gz: Buffer,
  extraCa: readonly string[] | undefined,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/tlsrpt+gzip', 'content-length': gz.length },
        ca: trustedCa(extraCa),
        rejectUnauthorized: true,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`HTTP ${status}`));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(gz);
  });
}
