// RFC 8460 aggregate reports: the JSON document (§4.4) built from one
// domain's pending rows of one UTC day, its gzip form, the rua record
// parser (§3) and the report e-mail (§5.3: multipart/report with
// report-type="tlsrpt" and the gzipped JSON as application/tlsrpt+gzip).
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import MimeNode from 'nodemailer/lib/mime-node';
import type { PendingRow } from './tlsrpt-store.ts';

export interface TlsrptFailureDetail {
  'result-type': string;
  'sending-mta-ip'?: string;
  'receiving-mx-hostname'?: string;
  'receiving-ip'?: string;
  'failed-session-count': number;
  'failure-reason-code'?: string;
  'additional-information'?: string;
}

export interface TlsrptPolicyEntry {
  policy: {
    'policy-type': 'tlsa' | 'sts' | 'no-policy-found';
    'policy-string'?: string[];
    'policy-domain': string;
    'mx-host'?: string[];
  };
  summary: { 'total-successful-session-count': number; 'total-failure-session-count': number };
  'failure-details'?: TlsrptFailureDetail[];
}

export interface TlsrptReport {
  'organization-name': string;
  'date-range': { 'start-datetime': string; 'end-datetime': string };
  'contact-info': string;
  'report-id': string;
  policies: TlsrptPolicyEntry[];
}

export const DAY_MS = 86_400_000;

/** RFC 3339 UTC without fractions, as the RFC's examples write it. */
const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export function buildTlsrptReport(input: {
  orgName: string;
  contact: string;
  domain: string;
  dayStart: number;
  rows: readonly PendingRow[];
  reportId?: string;
}): TlsrptReport {
  const groups = new Map<string, { entry: TlsrptPolicyEntry; details: Map<string, TlsrptFailureDetail> }>();
  for (const row of input.rows) {
    const key = JSON.stringify([row.policyType, row.policyString, row.mxHost]);
    let g = groups.get(key);
    if (!g) {
      g = {
        entry: {
          policy: {
            'policy-type': row.policyType,
            'policy-string': row.policyString,
            'policy-domain': input.domain,
            ...(row.mxHost.length > 0 ? { 'mx-host': row.mxHost } : {}),
          },
          summary: { 'total-successful-session-count': 0, 'total-failure-session-count': 0 },
        },
        details: new Map(),
      };
      groups.set(key, g);
    }
    if (row.result === 'success') {
      g.entry.summary['total-successful-session-count']++;
      continue;
    }
    g.entry.summary['total-failure-session-count']++;
    const dkey = JSON.stringify([
      row.result,
      row.sendingMtaIp,
      row.receivingMxHostname,
      row.receivingIp,
      row.failureReasonCode,
    ]);
    const detail = g.details.get(dkey) ?? {
      'result-type': row.result,
      ...(row.sendingMtaIp ? { 'sending-mta-ip': row.sendingMtaIp } : {}),
      ...(row.receivingMxHostname ? { 'receiving-mx-hostname': row.receivingMxHostname } : {}),
      ...(row.receivingIp ? { 'receiving-ip': row.receivingIp } : {}),
      'failed-session-count': 0,
      ...(row.failureReasonCode ? { 'failure-reason-code': row.failureReasonCode } : {}),
      ...(row.additionalInformation ? { 'additional-information': row.additionalInformation } : {}),
    };
    detail['failed-session-count']++;
    g.details.set(dkey, detail);
  }
  const day = new Date(input.dayStart).toISOString().slice(0, 10);
  return {
    'organization-name': input.orgName,
    'date-range': {
      'start-datetime': stamp(input.dayStart),
      'end-datetime': stamp(input.dayStart + DAY_MS - 1000),
    },
    'contact-info': input.contact,
    'report-id': input.reportId ?? `${day}_${input.domain}_${randomBytes(6).toString('hex')}`,
    policies: [...groups.values()].map(({ entry, details }) =>
      details.size > 0 ? { ...entry, 'failure-details': [...details.values()] } : entry,
    ),
  };
}

export function gzipReport(report: TlsrptReport): Buffer {
  return gzipSync(Buffer.from(JSON.stringify(report), 'utf8'));
}

export interface RuaTargets {
  mailto: string[];
  https: string[];
}

/**
 * The rua targets of the `_smtp._tls.<domain>` TXT strings, or null when the
 * domain publishes no usable record (none, or more than one, `v=TLSRPTv1`).
 */
export function parseTlsrptRecord(txts: readonly string[]): RuaTargets | null {
  const records = txts.filter((t) => /^v=TLSRPTv1\s*(;|$)/.test(t));
  if (records.length !== 1) return null;
  const rua = (records[0] as string)
    .split(';')
    .map((p) => p.trim())
    .find((p) => p.startsWith('rua='));
  if (!rua) return null;
  const targets: RuaTargets = { mailto: [], https: [] };
  for (const uri of rua
    .slice(4)
    .split(',')
    .map((u) => u.trim())) {
    try {
      const url = new URL(uri);
      if (url.protocol === 'mailto:' && /^[^@\s]+@[^@\s]+$/.test(decodeURIComponent(url.pathname))) {
        targets.mailto.push(decodeURIComponent(url.pathname));
      } else if (url.protocol === 'https:') {
        targets.https.push(url.toString());
      }
    } catch {
      // an unparsable URI is skipped; the others still get the report
    }
  }
  return targets.mailto.length + targets.https.length > 0 ? targets : null;
}

/** RFC 8460 §5.3 file name: submitter!policy-domain!begin!end!id.json.gz (seconds). */
export function reportFileName(submitter: string, report: TlsrptReport, domain: string): string {
  const begin = Date.parse(report['date-range']['start-datetime']) / 1000;
  const end = Date.parse(report['date-range']['end-datetime']) / 1000;
  const unique = report['report-id'].replace(/[^A-Za-z0-9._-]/g, '_');
  return `${submitter}!${domain}!${begin}!${end}!${unique}.json.gz`;
}

export async function buildReportEmail(input: {
  from: string;
  to: string;
  orgName: string;
  hostname: string;
  domain: string;
  report: TlsrptReport;
  gz: Buffer;
  date: Date;
}): Promise<Buffer> {
  const root = new MimeNode('multipart/report; report-type="tlsrpt"', {
    hostname: input.hostname,
    newline: 'win',
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const id = input.report['report-id'];
  root.setHeader({
    From: input.from,
    To: input.to,
    Subject: `Report Domain: ${input.domain} Submitter: ${input.orgName} Report-ID: <${id}>`,
    Date: input.date,
    'TLS-Report-Domain': input.domain,
    'TLS-Report-Submitter': input.orgName,
    'Auto-Submitted': 'auto-generated',
    'Message-ID': `<tlsrpt.${id.replace(/[^A-Za-z0-9._-]/g, '_')}@${input.hostname}>`,
  });
  root
    .createChild('text/plain; charset=utf-8')
    .setContent(
      `This is an aggregate TLS report (RFC 8460) from ${input.orgName} for ${input.domain},\r\n` +
        `covering ${input.report['date-range']['start-datetime']} to ${input.report['date-range']['end-datetime']}.\r\n`,
    );
  const name = reportFileName(input.orgName, input.report, input.domain);
  root
    .createChild('application/tlsrpt+gzip', { filename: name })
    .setHeader('Content-Disposition', `attachment; filename="${name}"`)
    .setHeader('Content-Transfer-Encoding', 'base64')
    .setContent(input.gz);
  return root.build();
}
