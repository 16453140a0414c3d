// [spooler]: outbound delivery, DKIM signing, MTA-STS/DANE, TLS-RPT and
// DMARC report ingestion.
import * as z from 'zod';
import { bool, dnsName, filePath, nonNegativeInt, positiveInt, text } from '../fields.ts';

// Roughly five days in total before a bounce (RFC 5321 §4.5.4.1 suggests
// 4–5 days): these ten waits sum to ~2.2 days, then 86400 repeats.
export const DEFAULT_RETRY_SCHEDULE_SECS = [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400];

const dkimSchema = z.strictObject({
  domain: dnsName(),
  selector: text().regex(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/, {
    error: 'expected a DKIM selector label',
  }),
  key_file: filePath(),
});

export const spoolerSchema = z
  .strictObject({
    hostname: dnsName().optional(),
    mta_sts: bool().default(true),
    dane: bool().default(true),
    max_attempts: positiveInt().default(14),
    retry_schedule_secs: z
      .array(positiveInt(), { error: 'expected an array of integers (seconds)' })
      .min(1, { error: 'expected at least one wait' })
      .default(DEFAULT_RETRY_SCHEDULE_SECS),
    dkim: z.array(dkimSchema, { error: 'expected an array of tables ([[spooler.dkim]])' }).default([]),
    tlsrpt: z
      .strictObject({
        enabled: bool().default(false),
        org_name: text().optional(),
        contact: text().optional(),
      })
      .prefault({}),
    dmarc_rua_ingest: z
      .strictObject({
        enabled: bool().default(false),
        dmarc_retention_days: nonNegativeInt().default(90),
        report_retention_days: nonNegativeInt().default(90),
      })
      .prefault({}),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    s.dkim.forEach((d, i) => {
      const key = `${d.selector}._domainkey.${d.domain}`;
      if (seen.has(key))
        ctx.addIssue({ code: 'custom', path: ['dkim', i], message: `duplicate DKIM key ${key}` });
      seen.add(key);
    });
  });

export type SpoolerInput = z.output<typeof spoolerSchema>;
