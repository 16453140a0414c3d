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
  domain: dnsName().meta({ description: 'The `d=` domain.' }),
  selector: text()
    .regex(/^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/, {
      error: 'expected a DKIM selector label',
    })
    .meta({ description: 'The `s=` selector; the record is `<selector>._domainkey.<domain>`.' }),
  key_file: filePath().meta({ description: '2048-bit RSA private key, PEM PKCS#8 or PKCS#1.' }),
});

// A smarthost all outbound mail goes through instead of the recipients' MX
// hosts. MTA-STS and DANE never apply to it; its certificate is checked
// against `host` with the system CAs unless `tls = "opportunistic"`.
const relaySchema = z.strictObject({
  host: host().meta({ description: 'Host name or IP address.' }),
  port: port().optional().meta({ description: '', default: 'derived: 465 for `implicit`, else 25' }),
  tls: oneOf(['starttls', 'implicit', 'opportunistic']).default('starttls').meta({
    description:
      '`"starttls"` or `"implicit"`: TLS required and the certificate must be valid for `host` (system CAs); `"opportunistic"`: STARTTLS when offered, unchecked.',
  }),
  username: text().optional().meta({ description: 'AUTH user; set together with `password_file`.' }),
  password_file: filePath().optional().meta({ description: 'File holding the AUTH password (one line).' }),
});

export const spoolerSchema = z
  .strictObject({
    hostname: dnsName().optional().meta({
      description: 'EHLO name for outbound connections; the PTR of the outbound IP should match.',
      default: 'derived: `[smtp] hostname`',
    }),
    mta_sts: bool().default(true).meta({ description: "Enforce recipients' MTA-STS policies." }),
    dane: bool().default(true).meta({
      description: 'Use DANE TLSA (needs a DNSSEC-validating resolver in `[dns]`); preferred over MTA-STS.',
    }),
    max_attempts: positiveInt().default(14).meta({ description: 'Delivery attempts before a bounce (DSN).' }),
    retry_schedule_secs: z
      .array(positiveInt(), { error: 'expected an array of integers (seconds)' })
      .min(1, { error: 'expected at least one wait' })
      .default(DEFAULT_RETRY_SCHEDULE_SECS)
      .meta({
        description:
          'Wait before retry n; the last value repeats. With 14 attempts this gives up after about five days.',
      }),
    dkim: z.array(dkimSchema, { error: 'expected an array of tables ([[spooler.dkim]])' }).default([]),
    lifetime_secs: positiveInt()
      .default(5 * 86_400)
      .meta({
        description:
          'A message still undelivered this long after it was queued is bounced (failure DSN), whatever `max_attempts` says; the last retry is pulled in to this moment.',
        default: '`432000` (5 days)',
      }),
    delay_dsn_after_secs: nonNegativeInt()
      .default(4 * 3_600)
      .meta({
        description:
          'One "delayed" DSN (RFC 3464) goes to the sender once a message has waited this long. `0`: never.',
        default: '`14400` (4 h)',
      }),
    concurrency: positiveInt()
      .default(32)
      .meta({ description: 'Delivery sessions one spooler process runs at once.' }),
    per_domain_concurrency: positiveInt().default(8).meta({
      description:
        'Sessions to one destination domain at once, counted across every process (Redis), so a slow domain holds at most this many.',
    }),
    connect_timeout_secs: positiveInt()
      .default(60)
      .meta({ description: 'Connecting, the 220 greeting and the TLS handshake together.' }),
    command_timeout_secs: positiveInt()
      .default(300)
      .meta({ description: 'Longest silence after any command or the message data (RFC 5321 §4.5.3.2).' }),
    smtp_port: port().default(25).meta({
      description:
        "Port of the recipients' MX hosts. Only tests and special networks change it; the TLSA name follows it (`_<port>._tcp.<host>`).",
    }),
    trusted_resolvers: z
      .array(hostPort(53), { error: 'expected an array of "host[:port]" strings' })
      .default([])
      .meta({
        description:
          '`host[:port]` entries of `[dns] resolvers` whose DNSSEC AD bit is believed although they are not on loopback (for DANE).',
      }),
    // The DNSSEC self-test asks this name: a validating resolver sets AD on it.
    dane_probe_name: text()
      .refine((v) => v === '.' || isDnsName(v), { error: 'expected a DNS name or "." (the root)' })
      .default('.')
      .meta({
        description:
          'Name the DANE self-test asks every resolver at start and every 10 minutes; DANE is in effect only when each answers it with AD. A DNS name or `"."`. Point it at a signed name of your own when the resolver may not reach the root.',
        default: '`"."` (the root)',
      }),
    dane_probe_type: oneOf(DANE_PROBE_TYPES).default('DNSKEY').meta({
      description: 'Record type of that question: `"DNSKEY"`, `"NS"`, `"A"`, `"AAAA"`, `"MX"` or `"TXT"`.',
    }),
    mta_sts_timeout_secs: positiveInt().default(20).meta({
      description:
        'One deadline for the whole MTA-STS policy fetch (connect, TLS, request, body) of a recipient domain.',
    }),
    relay: relaySchema.optional(),
    tlsrpt: z
      .strictObject({
        enabled: bool().default(false).meta({ description: 'Collect results and send daily reports.' }),
        org_name: text()
          .optional()
          .meta({ description: '`organization-name` in reports.', default: 'derived: spooler hostname' }),
        contact: text().optional().meta({
          description: '`contact-info` in reports.',
          default: 'derived: `postmaster@<first local domain>`',
        }),
      })
      .prefault({}),
    dmarc_rua_ingest: z
      .strictObject({
        enabled: bool().default(false).meta({
          description:
            'Parse delivered DMARC aggregate reports (they are still delivered as ordinary mail) and store them for `GET /v1/admin/dmarc-reports`.',
        }),
        dmarc_retention_days: nonNegativeInt().default(90).meta({
          description:
            'Prune rows that carry a source_ip (inbound sender evaluations, records of ingested reports) older than this. `0` keeps forever. See `docs/dmarc.md`.',
        }),
        report_retention_days: nonNegativeInt().default(90).meta({
          description:
            'Prune ingested reports older than this; **also governs lingering TLS-RPT pending rows**. `0` keeps forever.',
        }),
        address: text()
          .regex(/^[^\s@]+@[^\s@]+$/, { error: 'expected an email address (local@domain)' })
          .optional()
          .meta({
            description:
              'The `rua=mailto:` mailbox printed in the `_dmarc` records; messages to it are ingested (and still delivered). Lowercased.',
            default: 'derived: `postmaster@<first local domain>`',
          }),
        max_report_bytes: positiveInt()
          .default(20 * 1024 * 1024)
          .meta({
            description:
              "Cap on one report's decompressed size; a larger (or bomb) attachment is refused, not stored.",
            default: '`20971520` (20 MiB)',
          }),
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
