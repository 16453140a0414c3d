// `[spooler.dmarc_rua_ingest]`: takes a delivered message (raw RFC 5322),
// finds its aggregate report attachments, and stores each report once:
// the parsed report as JSON under dmarc_rua/ in the blob store, one row per
// report plus one row per record. Runs after the message was delivered as
// ordinary mail, so it never throws: every outcome, including refusals and
// unexpected failures, comes back in the result.
import type { Kysely } from 'kysely';
import { simpleParser } from 'mailparser';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import type { Config } from '../../core/config/index.ts';
import { DomainNameError, normalizeDomainName } from '../../core/dns/name.ts';
import { type Logger, newSortableId } from '../../core/log.ts';
import type { Database } from '../../core/store/types.ts';
import { DEFAULT_MAX_REPORT_BYTES, type DmarcReport, parseDmarcReport } from './parse-report.ts';
import { type DmarcRecordRow, DmarcRepo } from './repo.ts';
import { DmarcReportError } from './report-error.ts';
import { reportToJson } from './report-json.ts';
import { detectFormat } from './unpack.ts';

export interface DmarcIngestDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** Domains this operator serves ([smtp] local_domains); reports for others are refused. */
  localDomains: readonly string[];
  /** Decompressed-size cap per report ([spooler.dmarc_rua_ingest] max_report_bytes). */
  maxReportBytes?: number;
  now?: () => number;
  logger?: Logger;
}

export interface IngestOptions {
  /** The delivery's message id, for logs and the report row. */
  messageId?: string;
}

export interface IngestedReport {
  status: 'stored' | 'duplicate' | 'refused';
  attachment: string;
  orgName?: string;
  reportId?: string;
  domain?: string;
  /** Row id (ULID) of the stored report, or of the earlier copy for a duplicate. */
  id?: string;
  records?: number;
  error?: { code: string; message: string };
}

export interface IngestResult {
  /** True when at least one report was found and none was refused. */
  ok: boolean;
  reports: IngestedReport[];
  /** Set when the message itself could not be handled (no report attachment, unreadable message, …). */
  error?: { code: string; message: string };
}

/** Whether ingestion is on and `recipient` is the configured rua mailbox. */
export function isDmarcReportRecipient(config: Config, recipient: string): boolean {
  const ingest = config.spooler.dmarc_rua_ingest;
  return ingest.enabled && recipient.trim().toLowerCase() === ingest.address;
}

function asciiDomain(name: string): string | null {
  try {
    return normalizeDomainName(name).ascii;
  } catch (err) {
    if (err instanceof DomainNameError) return null;
    throw err;
  }
}

async function storeReport(
  deps: DmarcIngestDeps,
  repo: DmarcRepo,
  report: DmarcReport,
  attachment: string,
  opts: IngestOptions,
): Promise<IngestedReport> {
  const base = {
    attachment,
    orgName: report.orgName,
    reportId: report.reportId,
    domain: report.policy.domain,
  };
  const local = deps.localDomains.map((d) => asciiDomain(d) ?? d);
  const domain = asciiDomain(report.policy.domain);
  if (!domain || !local.includes(domain)) {
    return {
      ...base,
      status: 'refused',
      error: {
        code: 'foreign_domain',
        message: `the report is about ${report.policy.domain}, which this server does not serve (local domains: ${local.join(', ')})`,
      },
    };
  }
  const earlier = await repo.findByReportId(report.orgName, report.reportId);
  if (earlier) return { ...base, domain, status: 'duplicate', id: earlier.id, records: earlier.record_count };

  const now = (deps.now ?? Date.now)();
  const id = newSortableId(now);
  const json = reportToJson(report);
  const blob = await deps.blobs.putContent(new TextEncoder().encode(JSON.stringify(json)), 'dmarc_rua');
  const dateBegin = report.dateRange.begin * 1000;
  const dateEnd = report.dateRange.end * 1000;
  const records: DmarcRecordRow[] = report.records.map((r, seq) => ({
    report_row_id: id,
    seq,
    source_ip: r.sourceIp,
    count: r.count,
    disposition: r.disposition,
    dkim: r.dkim,
    spf: r.spf,
    header_from: r.headerFrom,
    envelope_from: r.envelopeFrom ?? null,
    auth_results: JSON.stringify(r.authResults),
    date_begin: dateBegin,
    date_end: dateEnd,
    ingested_at: now,
  }));
  try {
    await repo.insert(
      {
        id,
        org_name: report.orgName,
        report_id: report.reportId,
        domain,
        date_begin: dateBegin,
        date_end: dateEnd,
        reporter_email: report.email ?? null,
        policy: JSON.stringify(json.policy_published),
        record_count: records.length,
        message_count: report.records.reduce((n, r) => n + r.count, 0),
        blob_key: blob.key,
        source_message_id: opts.messageId ?? null,
        received_at: now,
      },
      records,
    );
  } catch (err) {
    // A concurrent delivery of the same report won the unique (org, report id).
    const raced = await repo.findByReportId(report.orgName, report.reportId);
    if (raced) return { ...base, domain, status: 'duplicate', id: raced.id, records: raced.record_count };
    throw err;
  }
  return { ...base, domain, status: 'stored', id, records: records.length };
}

export async function ingestDmarcMessage(
  deps: DmarcIngestDeps,
  raw: Uint8Array,
  opts: IngestOptions = {},
): Promise<IngestResult> {
  const log = deps.logger?.child({ msgid: opts.messageId });
  const repo = new DmarcRepo(deps.db);
  const maxBytes = deps.maxReportBytes ?? DEFAULT_MAX_REPORT_BYTES;
  let attachments: { content: Buffer; contentType?: string; filename?: string }[];
  try {
    const parsed = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
    attachments = parsed.attachments;
  } catch (err) {
    const error = {
      code: 'unreadable_message',
      message: `the message could not be parsed: ${(err as Error).message}`,
    };
    log?.warn({ error }, 'DMARC ingest: message refused');
    return { ok: false, reports: [], error };
  }
  const candidates = attachments.filter((a) => detectFormat(a.content, a) !== null);
  if (candidates.length === 0) {
    const error = { code: 'no_report', message: 'the message carries no XML, gzip or zip attachment' };
    log?.info({ error }, 'DMARC ingest: nothing to ingest');
    return { ok: false, reports: [], error };
  }
  const reports: IngestedReport[] = [];
  for (const [i, a] of candidates.entries()) {
    const attachment = a.filename ?? `attachment ${i + 1}`;
    try {
      const report = parseDmarcReport(a.content, {
        contentType: a.contentType,
        filename: a.filename,
        maxBytes,
      });
      reports.push(await storeReport(deps, repo, report, attachment, opts));
    } catch (err) {
      const error =
        err instanceof DmarcReportError
          ? { code: err.code, message: err.message }
          : { code: 'internal', message: `ingest failed: ${(err as Error).message}` };
      if (!(err instanceof DmarcReportError)) log?.error({ err, attachment }, 'DMARC ingest failed');
      reports.push({ status: 'refused', attachment, error });
    }
  }
  for (const r of reports) log?.info({ ...r }, `DMARC report ${r.status}`);
  return { ok: reports.every((r) => r.status !== 'refused'), reports };
}
