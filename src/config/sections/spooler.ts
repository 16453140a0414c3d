// [spooler]: outbound delivery, DKIM signing, MTA-STS/DANE, TLS-RPT and
// DMARC report ingestion.
import * as z from 'zod';
import {
  bool,
  dnsName,
  filePath,
  host,
  hostPort,
  isDnsName,
  nonNegativeInt,
  oneOf,
  port,
  positiveInt,
  text,
} from '../fields.ts';

// Roughly five days in total before a bounce (RFC 5321 §4.5.4.1 suggests
// 4–5 days): these ten waits sum to ~2.2 days, then 86400 repeats.
/** Record types the DANE self-test may ask for (`[spooler] dane_probe_type`). */
export const DANE_PROBE_TYPES = ['DNSKEY', 'NS', 'A', 'AAAA', 'MX', 'TXT'] as const;

export const DEFAULT_RETRY_SCHEDULE_SECS = [60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400];

const dkimSchema = z.strictObject({
  domain: dnsName(),
  selector: text().regex(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/, {
    error: 'expected a DKIM selector label',
  }),
  key_file: filePath(),
});

// A smarthost all outbound mail goes through instead of the recipients' MX
// hosts. MTA-STS and DANE never apply to it; its certificate is checked
// against `host` with the system CAs unless `tls = "opportunistic"`.
const relaySchema = z.strictObject({
  host: host(),
  port: port().optional(),
  tls: oneOf(['starttls', 'implicit', 'opportunistic']).default('starttls'),
  username: text().optional(),
  password_file: filePath().optional(),
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
    lifetime_secs: positiveInt().default(5 * 86_400),
    delay_dsn_after_secs: nonNegativeInt().default(4 * 3_600),
    concurrency: positiveInt().default(32),
    per_domain_concurrency: positiveInt().default(8),
    connect_timeout_secs: positiveInt().default(60),
    command_timeout_secs: positiveInt().default(300),
    smtp_port: port().default(25),
    trusted_resolvers: z
      .array(hostPort(53), { error: 'expected an array of "host[:port]" strings' })
      .default([]),
    // The DNSSEC self-test asks this name: a validating resolver sets AD on it.
    dane_probe_name: text()
      .refine((v) => v === '.' || isDnsName(v), { error: 'expected a DNS name or "." (the root)' })
      .default('.'),
    dane_probe_type: oneOf(DANE_PROBE_TYPES).default('DNSKEY'),
    mta_sts_timeout_secs: positiveInt().default(20),
    relay: relaySchema.optional(),
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
        address: text()
          .regex(/^[^\s@]+@[^\s@]+$/, { error: 'expected an email address (local@domain)' })
          .optional(),
        max_report_bytes: positiveInt().default(20 * 1024 * 1024),
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
    if (s.relay && (s.relay.username === undefined) !== (s.relay.password_file === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['relay', s.relay.username === undefined ? 'username' : 'password_file'],
        message: 'spooler.relay.username and spooler.relay.password_file must be set together',
      });
    }
  });

export type SpoolerInput = z.output<typeof spoolerSchema>;
