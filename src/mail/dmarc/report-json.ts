// The JSON form of a parsed report: what the dmarc_rua/ blob holds and what
// GET /v1/admin/dmarc-reports/{id} returns. Field names follow the report's
// own XML element names (snake_case); times stay Unix seconds as in the XML.
import type { DmarcAuthResult, DmarcReport } from './parse-report.ts';

export const REPORT_JSON_FORMAT = 'sealpost-dmarc-aggregate/1';

export interface DmarcReportJson {
  format: typeof REPORT_JSON_FORMAT;
  org_name: string;
  email: string | null;
  extra_contact_info: string | null;
  report_id: string;
  date_range: { begin: number; end: number };
  errors: string[];
  policy_published: {
    domain: string;
    p: string;
    sp: string | null;
    adkim: string | null;
    aspf: string | null;
    pct: number | null;
    fo: string | null;
    np: string | null;
  };
  records: {
    source_ip: string;
    count: number;
    disposition: string;
    dkim: string;
    spf: string;
    reasons: { type: string; comment: string | null }[];
    header_from: string;
    envelope_from: string | null;
    envelope_to: string | null;
    auth_results: { dkim: AuthJson[]; spf: AuthJson[] };
  }[];
}

interface AuthJson {
  domain: string;
  selector: string | null;
  scope: string | null;
  result: string;
}

const auth = (a: DmarcAuthResult): AuthJson => ({
  domain: a.domain,
  selector: a.selector ?? null,
  scope: a.scope ?? null,
  result: a.result,
});

export function reportToJson(r: DmarcReport): DmarcReportJson {
  return {
    format: REPORT_JSON_FORMAT,
    org_name: r.orgName,
    email: r.email ?? null,
    extra_contact_info: r.extraContactInfo ?? null,
    report_id: r.reportId,
    date_range: r.dateRange,
    errors: r.errors,
    policy_published: {
      domain: r.policy.domain,
      p: r.policy.p,
      sp: r.policy.sp ?? null,
      adkim: r.policy.adkim ?? null,
      aspf: r.policy.aspf ?? null,
      pct: r.policy.pct ?? null,
      fo: r.policy.fo ?? null,
      np: r.policy.np ?? null,
    },
    records: r.records.map((x) => ({
      source_ip: x.sourceIp,
      count: x.count,
      disposition: x.disposition,
      dkim: x.dkim,
      spf: x.spf,
      reasons: x.reasons.map((reason) => ({ type: reason.type, comment: reason.comment ?? null })),
      header_from: x.headerFrom,
      envelope_from: x.envelopeFrom ?? null,
      envelope_to: x.envelopeTo ?? null,
      auth_results: { dkim: x.authResults.dkim.map(auth), spf: x.authResults.spf.map(auth) },
    })),
  };
}
