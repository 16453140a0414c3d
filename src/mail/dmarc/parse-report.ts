// Parses a DMARC aggregate report (RFC 7489 Appendix C, `<feedback>`) from
// an attachment's bytes: XML, gzip or zip. Accepts what the big reporters
// actually send (namespaced roots, missing optional fields, one record or
// many) and refuses anything without the fields a report needs, with a
// DmarcReportError saying which.
import { isIP } from 'node:net';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DmarcReportError } from './report-error.ts';
import { type AttachmentHint, unpackReport } from './unpack.ts';

export const DEFAULT_MAX_REPORT_BYTES = 20 * 1024 * 1024;

export interface DmarcAuthResult {
  domain: string;
  selector?: string;
  scope?: string;
  result: string;
}

export interface DmarcRecord {
  sourceIp: string;
  count: number;
  disposition: string;
  /** policy_evaluated results (aligned pass or fail). */
  dkim: string;
  spf: string;
  reasons: { type: string; comment?: string }[];
  headerFrom: string;
  envelopeFrom?: string;
  envelopeTo?: string;
  authResults: { dkim: DmarcAuthResult[]; spf: DmarcAuthResult[] };
}

export interface DmarcReport {
  orgName: string;
  email?: string;
  extraContactInfo?: string;
  reportId: string;
  /** Unix seconds, as in the report. */
  dateRange: { begin: number; end: number };
  errors: string[];
  policy: {
    domain: string;
    adkim?: string;
    aspf?: string;
    p: string;
    sp?: string;
    pct?: number;
    fo?: string;
    np?: string;
  };
  records: DmarcRecord[];
}

export interface ParseOptions extends AttachmentHint {
  /** Cap on the decompressed size (default 20 MiB). */
  maxBytes?: number;
}

const ARRAYS = new Set([
  'feedback.record',
  'feedback.record.auth_results.dkim',
  'feedback.record.auth_results.spf',
  'feedback.record.row.policy_evaluated.reason',
  'feedback.report_metadata.error',
]);

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (_name, jpath) => ARRAYS.has(String(jpath)),
});

type Node = Record<string, unknown>;

function obj(v: unknown): Node | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined;
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
  if (typeof v === 'number') return String(v);
  // `<comment/>` parses as '' and `<x><y/></x>` as an object: neither is text.
  return undefined;
}

function required(v: unknown, where: string): string {
  const t = text(v);
  if (t === undefined) throw new DmarcReportError('invalid_report', `the report has no ${where}`);
  return t;
}

function integer(v: unknown, where: string): number {
  const t = required(v, where);
  if (!/^\d{1,15}$/.test(t))
    throw new DmarcReportError(
      'invalid_report',
      `${where} is not a non-negative integer: ${JSON.stringify(t.slice(0, 40))}`,
    );
  return Number(t);
}

function optional<T extends object>(entries: [keyof T, string | number | undefined][]): Partial<T> {
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined)) as Partial<T>;
}

function authResults(list: unknown, where: string): DmarcAuthResult[] {
  if (!Array.isArray(list)) return [];
  return list.map((entry, i) => {
    const e = obj(entry) ?? {};
    return {
      domain: text(e.domain) ?? '',
      result: required(e.result, `${where}[${i}].result`).toLowerCase(),
      ...optional<DmarcAuthResult>([
        ['selector', text(e.selector)],
        ['scope', text(e.scope)],
      ]),
    };
  });
}

function parseRecord(entry: unknown, i: number): DmarcRecord {
  const r = obj(entry) ?? {};
  const row = obj(r.row) ?? {};
  const evaluated = obj(row.policy_evaluated) ?? {};
  const ids = obj(r.identifiers) ?? {};
  const auth = obj(r.auth_results) ?? {};
  const where = `record[${i}]`;
  const sourceIp = required(row.source_ip, `${where}.row.source_ip`);
  if (isIP(sourceIp) === 0)
    throw new DmarcReportError(
      'invalid_report',
      `${where}.row.source_ip is not an IP address: ${JSON.stringify(sourceIp.slice(0, 60))}`,
    );
  const reasons = Array.isArray(evaluated.reason)
    ? evaluated.reason.map((x) => {
        const o = obj(x) ?? {};
        return {
          type: text(o.type) ?? 'other',
          ...optional<{ comment: string }>([['comment', text(o.comment)]]),
        };
      })
    : [];
  return {
    sourceIp,
    count: integer(row.count, `${where}.row.count`),
    disposition: required(evaluated.disposition, `${where}.row.policy_evaluated.disposition`).toLowerCase(),
    dkim: (text(evaluated.dkim) ?? 'none').toLowerCase(),
    spf: (text(evaluated.spf) ?? 'none').toLowerCase(),
    reasons,
    headerFrom: required(ids.header_from, `${where}.identifiers.header_from`).toLowerCase(),
    ...optional<DmarcRecord>([
      ['envelopeFrom', text(ids.envelope_from)?.toLowerCase()],
      ['envelopeTo', text(ids.envelope_to)?.toLowerCase()],
    ]),
    authResults: {
      dkim: authResults(auth.dkim, `${where}.auth_results.dkim`),
      spf: authResults(auth.spf, `${where}.auth_results.spf`),
    },
  };
}

/** Parses the XML text of a report (already unpacked). */
export function parseReportXml(xml: string): DmarcReport {
  // DTDs are refused outright: a report never needs one, and entity
  // expansion is how XML bombs work.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml))
    throw new DmarcReportError('malformed_xml', 'the report declares a DOCTYPE; reports never need one');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw new DmarcReportError(
      'malformed_xml',
      `the report is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`,
    );
  }
  const doc = obj(parser.parse(xml)) ?? {};
  const feedback = obj(doc.feedback);
  if (!feedback) {
    const root = Object.keys(doc)[0];
    throw new DmarcReportError(
      'not_a_report',
      `expected a <feedback> aggregate report, found <${root ?? 'nothing'}>`,
    );
  }
  const meta = obj(feedback.report_metadata) ?? {};
  const range = obj(meta.date_range) ?? {};
  const published = obj(feedback.policy_published) ?? {};
  const begin = integer(range.begin, 'report_metadata.date_range.begin');
  const end = integer(range.end, 'report_metadata.date_range.end');
  if (end < begin)
    throw new DmarcReportError('invalid_report', 'report_metadata.date_range ends before it begins');
  const records = Array.isArray(feedback.record) ? feedback.record.map(parseRecord) : [];
  if (records.length === 0) throw new DmarcReportError('invalid_report', 'the report has no <record>');
  const pct = text(published.pct);
  return {
    orgName: required(meta.org_name, 'report_metadata.org_name'),
    reportId: required(meta.report_id, 'report_metadata.report_id'),
    ...optional<DmarcReport>([
      ['email', text(meta.email)],
      ['extraContactInfo', text(meta.extra_contact_info)],
    ]),
    dateRange: { begin, end },
    errors: Array.isArray(meta.error) ? meta.error.flatMap((e) => text(e) ?? []) : [],
    policy: {
      domain: required(published.domain, 'policy_published.domain').toLowerCase().replace(/\.$/, ''),
      p: (text(published.p) ?? 'none').toLowerCase(),
      ...optional<DmarcReport['policy']>([
        ['adkim', text(published.adkim)],
        ['aspf', text(published.aspf)],
        ['sp', text(published.sp)],
        ['pct', pct !== undefined && /^\d{1,3}$/.test(pct) ? Number(pct) : undefined],
        ['fo', text(published.fo)],
        ['np', text(published.np)],
      ]),
    },
    records,
  };
}

/** Unpacks (XML, gzip, zip; capped) and parses one report attachment. */
export function parseDmarcReport(bytes: Uint8Array, opts: ParseOptions = {}): DmarcReport {
  const xmlBytes = unpackReport(bytes, opts, opts.maxBytes ?? DEFAULT_MAX_REPORT_BYTES);
  let xml: string;
  try {
    xml = new TextDecoder('utf-8', { fatal: true }).decode(xmlBytes);
  } catch {
    throw new DmarcReportError('malformed_xml', 'the report is not valid UTF-8');
  }
  return parseReportXml(xml.replace(/^\uFEFF/, ''));
}
