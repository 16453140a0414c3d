import { describe, expect, it } from 'vitest';
import { buildTlsrptReport, parseTlsrptRecord, reportFileName } from './tlsrpt-report.ts';
import type { PendingRow } from './tlsrpt-store.ts';

describe('TLS-RPT record', () => {
  it('reads mailto and https rua targets of the one v=TLSRPTv1 record', () => {
    expect(
      parseTlsrptRecord(['v=TLSRPTv1; rua=mailto:tls@example.org,https://r.example.org/v1/report']),
    ).toEqual({
      mailto: ['tls@example.org'],
      https: ['https://r.example.org/v1/report'],
    });
    expect(parseTlsrptRecord(['v=TLSRPTv1;rua=mailto:a%2Bb@example.org'])).toEqual({
      mailto: ['a+b@example.org'],
      https: [],
    });
  });
  it('means "no reports" for none or several records, no rua, or only unusable targets', () => {
    expect(parseTlsrptRecord([])).toBeNull();
    expect(
      parseTlsrptRecord(['v=TLSRPTv1; rua=mailto:a@x.org', 'v=TLSRPTv1; rua=mailto:b@x.org']),
    ).toBeNull();
    expect(parseTlsrptRecord(['v=TLSRPTv1;'])).toBeNull();
    expect(parseTlsrptRecord(['v=TLSRPTv1; rua=http://plain.example.org/,ftp://x'])).toBeNull();
    expect(parseTlsrptRecord(['v=DMARC1; rua=mailto:a@x.org'])).toBeNull();
  });
});

describe('TLS-RPT report document', () => {
  const row = (over: Partial<PendingRow>): PendingRow => ({
    id: 'x',
    recordedAt: 0,
    policyDomain: 'example.org',
    policyType: 'sts',
    policyString: ['version: STSv1', 'mode: enforce', 'mx: mx.example.org', 'max_age: 86400'],
    mxHost: ['mx.example.org'],
    result: 'success',
    ...over,
  });
  it('groups sessions by policy and failures by their details', () => {
    const day = Date.UTC(2026, 0, 15);
    const fail = {
      result: 'certificate-expired' as const,
      sendingMtaIp: '192.0.2.1',
      receivingMxHostname: 'mx.example.org',
      receivingIp: '198.51.100.7',
    };
    const report = buildTlsrptReport({
      orgName: 'Sender Org',
      contact: 'tls@sender.example',
      domain: 'example.org',
      dayStart: day,
      reportId: 'r1',
      rows: [
        row({}),
        row({}),
        row(fail),
        row(fail),
        row({ ...fail, receivingIp: '198.51.100.8' }),
        row({ policyType: 'no-policy-found', policyString: [], mxHost: [] }),
      ],
    });
    expect(report).toEqual({
      'organization-name': 'Sender Org',
      'date-range': { 'start-datetime': '2026-01-15T00:00:00Z', 'end-datetime': '2026-01-15T23:59:59Z' },
      'contact-info': 'tls@sender.example',
      'report-id': 'r1',
      policies: [
        {
          policy: {
            'policy-type': 'sts',
            'policy-string': ['version: STSv1', 'mode: enforce', 'mx: mx.example.org', 'max_age: 86400'],
            'policy-domain': 'example.org',
            'mx-host': ['mx.example.org'],
          },
          summary: { 'total-successful-session-count': 2, 'total-failure-session-count': 3 },
          'failure-details': [
            {
              'result-type': 'certificate-expired',
              'sending-mta-ip': '192.0.2.1',
              'receiving-mx-hostname': 'mx.example.org',
              'receiving-ip': '198.51.100.7',
              'failed-session-count': 2,
            },
            {
              'result-type': 'certificate-expired',
              'sending-mta-ip': '192.0.2.1',
              'receiving-mx-hostname': 'mx.example.org',
              'receiving-ip': '198.51.100.8',
              'failed-session-count': 1,
            },
          ],
        },
        {
          policy: { 'policy-type': 'no-policy-found', 'policy-string': [], 'policy-domain': 'example.org' },
          summary: { 'total-successful-session-count': 1, 'total-failure-session-count': 0 },
        },
      ],
    });
    expect(reportFileName('sender.example', report, 'example.org')).toBe(
      'sender.example!example.org!1768435200!1768521599!r1.json.gz',
    );
  });
});
