// [smtp]: the MX and submission listeners.
import * as z from 'zod';
import {
  dnsName,
  filePath,
  host,
  identifier,
  nonNegativeInt,
  oneOf,
  port,
  positiveInt,
  pubkey,
} from '../fields.ts';

export const LISTENER_MODES = ['mx', 'submission', 'submissions'] as const;
export const LISTENER_TLS = ['none', 'starttls', 'implicit'] as const;

/** Dev ports (DESIGN: MX 2525, 465→2465, 587→2587) used when a listener names no port. */
export const DEFAULT_LISTENER_PORTS = { mx: 2525, submission: 2587, submissions: 2465 } as const;

// Which TLS modes make sense per listener mode: RFC 8314 submissions is
// implicit TLS by definition; port 25 and 587 speak plaintext first.
const ALLOWED_TLS: Record<(typeof LISTENER_MODES)[number], readonly string[]> = {
  mx: ['none', 'starttls'],
  submission: ['none', 'starttls'],
  submissions: ['implicit'],
};

const listenerSchema = z
  .strictObject({
    name: identifier().optional(),
    mode: oneOf(LISTENER_MODES),
    host: host().default('127.0.0.1'),
    port: port().optional(),
    tls: oneOf(LISTENER_TLS).optional(),
  })
  .superRefine((l, ctx) => {
    if (l.tls && !ALLOWED_TLS[l.mode].includes(l.tls)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message: `mode "${l.mode}" allows tls ${ALLOWED_TLS[l.mode].map((t) => `"${t}"`).join(' or ')}, got "${l.tls}"`,
      });
    }
  });

export const smtpSchema = z
  .strictObject({
    hostname: dnsName().default('localhost'),
    local_domains: z
      .array(dnsName(), { error: 'expected an array of domain names' })
      .min(1, { error: 'expected at least one domain' })
      .default(['localhost']),
    listeners: z
      .array(listenerSchema, { error: 'expected an array of tables ([[smtp.listeners]])' })
      .optional(),
    tls_cert_file: filePath().optional(),
    tls_key_file: filePath().optional(),
    max_message_bytes: positiveInt().default(25 * 1024 * 1024),
    max_recipients: positiveInt().default(100),
    postmaster_wallet: pubkey().optional(),
    sender_auth: oneOf(['spf', 'dmarc-lite', 'none']).default('spf'),
    max_connections_per_ip: positiveInt().default(20),
    // Connections at once per listener across all addresses (421 beyond); 0 = no cap.
    max_connections: nonNegativeInt().default(1000),
    // Total length of one SMTP session, however active (421 4.4.2 at the end); 0 = unlimited.
    max_session_secs: nonNegativeInt().default(900),
    connections_per_ip_per_minute: nonNegativeInt().default(120),
    peer_ca_file: filePath().optional(),
    submission_max_per_hour: nonNegativeInt().default(100),
    submission_max_per_day: nonNegativeInt().default(1000),
    // Postfix's smtpd_soft_error_limit / smtpd_hard_error_limit / smtpd_error_sleep_time.
    soft_error_limit: nonNegativeInt().default(10),
    hard_error_limit: nonNegativeInt().default(20),
    error_sleep_ms: nonNegativeInt().default(1000),
    // The chain view's cache (src/smtp/chain-view.ts, docs/inbound.md "Chain lookups").
    chain_cache_secs: nonNegativeInt().default(30),
    chain_refusal_cache_secs: nonNegativeInt().default(5),
    chain_cache_entries: positiveInt().default(20_000),
    timeouts: z
      .strictObject({
        socket_timeout_secs: positiveInt().default(300),
        shutdown_drain_secs: nonNegativeInt().default(30),
      })
      .prefault({}),
  })
  .superRefine((s, ctx) => {
    if (s.hard_error_limit > 0 && s.soft_error_limit >= s.hard_error_limit) {
      ctx.addIssue({
        code: 'custom',
        path: ['soft_error_limit'],
        message: `must be less than hard_error_limit (${s.hard_error_limit}), or hard_error_limit = 0 turns the limit off`,
      });
    }
    const seen = new Set<string>();
    s.listeners?.forEach((l, i) => {
      if (l.name === undefined) return;
      if (seen.has(l.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['listeners', i, 'name'],
          message: `duplicate listener name "${l.name}"`,
        });
      }
      seen.add(l.name);
    });
  });

export type SmtpInput = z.output<typeof smtpSchema>;
export type SmtpListenerInput = z.output<typeof listenerSchema>;
