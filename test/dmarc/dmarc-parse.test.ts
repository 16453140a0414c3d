// DMARC aggregate report parsing from real-world-shaped samples (Google zip,
// Microsoft gzip, a namespaced plain XML report) and every kind of bad
// input: bombs, oversized reports, damaged archives, malformed XML.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { parseDmarcReport } from '../../src/mail/dmarc/parse-report.ts';
import { DmarcReportError } from '../../src/mail/dmarc/report-error.ts';

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/dmarc/${name}`, import.meta.url)));
const GOOGLE_ZIP = 'google.com!example.org!1700006400!1700092799.zip';
const MICROSOFT_GZ = 'enterprise.protection.outlook.com!example.org!1700092800!1700179200.xml.gz';

function refusal(fn: () => unknown): DmarcReportError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DmarcReportError) return err;
    throw err;
  }
  throw new Error('the report was accepted');
}

describe('parseDmarcReport on real-world-shaped reports', () => {
  it('reads a Google-style zip report field by field', () => {
    const r = parseDmarcReport(fixture(GOOGLE_ZIP), { contentType: 'application/zip', filename: GOOGLE_ZIP });
    expect(r).toMatchObject({
      orgName: 'google.com',
      email: 'noreply-dmarc-support@google.com',
      extraContactInfo: 'https://support.google.com/a/answer/2466580',
      reportId: '14205638716358190422',
      dateRange: { begin: 1700006400, end: 1700092799 },
      errors: [],
      policy: { domain: 'example.org', adkim: 'r', aspf: 'r', p: 'none', sp: 'none', pct: 100, np: 'none' },
    });
    expect(r.records).toEqual([
      {
        sourceIp: '198.51.100.25',
        count: 12,
        disposition: 'none',
        dkim: 'pass',
        spf: 'pass',
        reasons: [],
        headerFrom: 'example.org',
        authResults: {
          dkim: [{ domain: 'example.org', selector: 's2025', result: 'pass' }],
          spf: [{ domain: 'example.org', result: 'pass' }],
        },
      },
      {
        sourceIp: '2001:db8:4860::1b',
        count: 2,
        disposition: 'none',
        dkim: 'fail',
        spf: 'fail',
        reasons: [{ type: 'forwarded', comment: 'looks forwarded' }],
        headerFrom: 'example.org',
        authResults: {
          dkim: [
            { domain: 'lists.example.net', selector: 'mail', result: 'pass' },
            { domain: 'example.org', selector: 's2025', result: 'fail' },
          ],
          spf: [{ domain: 'lists.example.net', result: 'pass' }],
        },
      },
    ]);
  });

  it('reads a Microsoft-style gzip report, whatever the attachment is labelled', () => {
    const bytes = fixture(MICROSOFT_GZ);
    const r = parseDmarcReport(bytes, { contentType: 'application/octet-stream' });
    expect(r.orgName).toBe('Enterprise Outlook');
    expect(r.reportId).toBe('6a1e3f2c9b8d4e7fa0c15b2d3e4f5a6b');
    expect(r.policy).toEqual({
      domain: 'example.org',
      adkim: 'r',
      aspf: 'r',
      p: 'quarantine',
      sp: 'quarantine',
      pct: 100,
      fo: '0',
    });
    expect(r.records).toEqual([
      {
        sourceIp: '203.0.113.7',
        count: 1,
        disposition: 'quarantine',
        dkim: 'fail',
        spf: 'fail',
        reasons: [],
        headerFrom: 'example.org',
        envelopeFrom: 'spoofer.example',
        envelopeTo: 'outlook.com',
        authResults: { dkim: [], spf: [{ domain: 'spoofer.example', scope: 'mfrom', result: 'softfail' }] },
      },
    ]);
    expect(parseDmarcReport(bytes, { contentType: 'application/gzip', filename: MICROSOFT_GZ })).toEqual(r);
  });

  it('reads a plain namespaced XML report and normalizes the policy domain', () => {
    const r = parseDmarcReport(fixture('namespaced-report.xml'), { contentType: 'text/xml' });
    expect(r.orgName).toBe('Mail Provider Example');
    expect(r.errors).toEqual(['record 3 skipped: unparseable source address']);
    expect(r.policy).toEqual({
      domain: 'example.org',
      p: 'reject',
      sp: 'reject',
      adkim: 's',
      aspf: 's',
      fo: '1',
    });
    expect(r.records[0]).toMatchObject({
      sourceIp: '192.0.2.44',
      count: 5,
      disposition: 'reject',
      reasons: [{ type: 'local_policy' }],
      envelopeFrom: 'bounce.example.org',
    });
  });
});

describe('parseDmarcReport refuses bad input with a clear error', () => {
  const xml = readFileSync(new URL('../fixtures/dmarc/google-report.xml', import.meta.url), 'utf8');
  const bytes = (s: string) => new TextEncoder().encode(s);

  it('stops a gzip bomb at the cap', () => {
    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const err = refusal(() => parseDmarcReport(bomb, { maxBytes: 1024 * 1024 }));
    expect(err.code).toBe('too_large');
    expect(err.message).toContain('1048576');
  });

  it('stops a zip bomb whether or not its header tells the truth', () => {
    const honest = zipSync({ 'report.xml': new Uint8Array(5 * 1024 * 1024).fill(0x20) });
    expect(refusal(() => parseDmarcReport(honest, { maxBytes: 1024 * 1024 })).code).toBe('too_large');
    // Rewrite the local header's uncompressed size (offset 22) to claim 100 bytes.
    const lying = honest.slice();
    new DataView(lying.buffer).setUint32(22, 100, true);
    const err = refusal(() => parseDmarcReport(lying, { maxBytes: 1024 * 1024 }));
    expect(err.code).toBe('too_large');
    expect(err.message).toContain('expands beyond');
  });

  it('refuses an oversized plain XML report', () => {
    expect(refusal(() => parseDmarcReport(bytes(xml), { maxBytes: 100 })).code).toBe('too_large');
  });

  it('refuses damaged archives', () => {
    const gz = gzipSync(Buffer.from(xml));
    expect(refusal(() => parseDmarcReport(gz.subarray(0, gz.length - 20))).code).toBe('malformed_archive');
    const zip = zipSync({ 'r.xml': bytes(xml) });
    expect(refusal(() => parseDmarcReport(zip.subarray(0, 60))).code).toBe('malformed_archive');
    expect(refusal(() => parseDmarcReport(zipSync({ 'readme.txt': bytes('hi') }))).code).toBe('not_a_report');
  });

  it('refuses malformed XML, DTDs and documents that are not reports', () => {
    expect(
      refusal(() => parseDmarcReport(bytes(xml.replace('</feedback>', '')), { contentType: 'text/xml' }))
        .code,
    ).toBe('malformed_xml');
    const dtd = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><feedback>&lol;</feedback>`;
    expect(refusal(() => parseDmarcReport(bytes(dtd), { contentType: 'text/xml' })).code).toBe(
      'malformed_xml',
    );
    expect(
      refusal(() => parseDmarcReport(bytes('<html><body>hi</body></html>'), { contentType: 'text/xml' }))
        .code,
    ).toBe('not_a_report');
    expect(refusal(() => parseDmarcReport(bytes('just text'), { contentType: 'text/plain' })).code).toBe(
      'unsupported_format',
    );
    expect(
      refusal(() => parseDmarcReport(new Uint8Array([0x3c, 0xff, 0xfe, 0x3e]), { filename: 'r.xml' })).code,
    ).toBe('malformed_xml');
  });

  it('names the missing or invalid field', () => {
    const cases: [string, string][] = [
      [xml.replace('<org_name>google.com</org_name>', ''), 'report_metadata.org_name'],
      [xml.replace(/<report_id>\d+<\/report_id>/, ''), 'report_metadata.report_id'],
      [xml.replace('<begin>1700006400</begin>', '<begin>yesterday</begin>'), 'date_range.begin'],
      [
        xml.replace('<source_ip>198.51.100.25</source_ip>', '<source_ip>not-an-ip</source_ip>'),
        'record[0].row.source_ip',
      ],
      [xml.replace('<count>12</count>', '<count>-3</count>'), 'record[0].row.count'],
      [xml.replace(/<record>[\s\S]*<\/record>/, ''), 'no <record>'],
      [xml.replace('<domain>example.org</domain>\n    <adkim>', '<adkim>'), 'policy_published.domain'],
    ];
    for (const [text, where] of cases) {
      const err = refusal(() => parseDmarcReport(bytes(text), { contentType: 'text/xml' }));
      expect(err.code).toBe('invalid_report');
      expect(err.message).toContain(where);
    }
  });
});
