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
    name: identifier().optional().meta({
      description: 'Unique label used in logs and by commands.',
      default: 'the mode (`mx-2`, … when repeated)',
    }),
    mode: oneOf(LISTENER_MODES).meta({
      description:
        '`"mx"` (port 25 role, never DKIM-signed), `"submission"` (587 role, AUTH required, plaintext then STARTTLS) or `"submissions"` (465 role, implicit TLS).',
    }),
    host: host().default('127.0.0.1').meta({ description: 'Bind address.' }),
    port: port().optional().meta({
      description: 'Bind port. Production sets 25 / 587 / 465.',
      default: 'dev ports: mx 2525, submission 2587, submissions 2465',
    }),
    tls: oneOf(LISTENER_TLS).optional().meta({
      description:
        '`"none"`, `"starttls"` or `"implicit"`. `submissions` allows only `implicit`; `mx` and `submission` allow `none` or `starttls`.',
      default: 'mx/submission `"starttls"`, submissions `"implicit"`',
    }),
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
    hostname: dnsName()
      .default('localhost')
      .meta({ description: 'The mail host name ({mail_host}): EHLO/banner name, MX target. Lowercased.' }),
    local_domains: z
      .array(dnsName(), { error: 'expected an array of domain names' })
      .min(1, { error: 'expected at least one domain' })
      .default(['localhost'])
      .meta({
        description:
          'Domains this server receives mail for (`<wallet>@domain`, `<alias>@domain`). At least one.',
      }),
    listeners: z
      .array(listenerSchema, { error: 'expected an array of tables ([[smtp.listeners]])' })
      .optional()
      .meta({ description: 'Array of tables `[[smtp.listeners]]`.', default: 'see below' }),
    tls_cert_file: filePath().optional().meta({
      description:
        'PEM certificate (chain) for STARTTLS and implicit TLS. `sealpost dev` generates a self-signed pair here.',
      default: '`<data_dir>/tls/cert.pem`',
    }),
    tls_key_file: filePath()
      .optional()
      .meta({ description: 'PEM private key for it.', default: '`<data_dir>/tls/key.pem`' }),
    max_message_bytes: positiveInt()
      .default(25 * 1024 * 1024)
      .meta({ description: 'SIZE limit announced and enforced.', default: '`26214400` (25 MiB)' }),
    max_recipients: positiveInt().default(100).meta({ description: 'RCPT TO limit per transaction.' }),
    postmaster_wallet: pubkey().optional().meta({
      description:
        'base58 wallet receiving `postmaster` and `postmaster@<local domain>`, exempt from the frombox/postage gate. Must decode to 32 bytes.',
      default: 'none (off)',
    }),
    sender_auth: oneOf(['spf', 'dmarc-lite', 'none'])
      .default('spf')
      .meta({ description: 'Inbound sender check: `"spf"`, `"dmarc-lite"` or `"none"`.' }),
    max_connections_per_ip: positiveInt()
      .default(20)
      .meta({ description: 'Concurrent connections per client IP.' }),
    // Connections at once per listener across all addresses (421 beyond); 0 = no cap.
    max_connections: nonNegativeInt().default(1000).meta({
      description:
        'Connections at once per MX or submission listener across all addresses, TLS handshakes included; beyond it a new connection gets `421` and is closed. `0`: no cap.',
    }),
    // Total length of one SMTP session, however active (421 4.4.2 at the end); 0 = unlimited.
    max_session_secs: nonNegativeInt().default(900).meta({
      description:
        'Total length of one SMTP session however active it keeps the line (a client trickling bytes under the idle timeout); at the end `421 4.4.2` and close. `0`: unlimited.',
    }),
    connections_per_ip_per_minute: nonNegativeInt().default(120).meta({
      description:
        'New MX connections one client IP may open per minute (a token bucket in Redis shared by every MX); over it the greeting is `421 4.7.0`. `0`: no limit.',
    }),
    peer_ca_file: filePath().optional().meta({
      description:
        'PEM CA certificate(s). A client certificate chaining to it lets a peer Sealpost server use SASL EXTERNAL on submission listeners; see docs/submission.md.',
      default: 'none (off)',
    }),
    submission_max_per_hour: nonNegativeInt().default(100).meta({
      description:
        'Messages one account may submit per fixed clock hour (SMTP and webmail together); then `451 4.7.1` with the seconds to wait. `0`: no hourly window.',
    }),
    submission_max_per_day: nonNegativeInt()
      .default(1000)
      .meta({ description: 'The same per fixed UTC day. `0`: no daily window.' }),
    // Postfix's smtpd_soft_error_limit / smtpd_hard_error_limit / smtpd_error_sleep_time.
    soft_error_limit: nonNegativeInt().default(10).meta({
      description:
        'Errors (4xx/5xx replies other than 421) one session may make before each further command waits `error_sleep_ms` (Postfix `smtpd_soft_error_limit`). A message accepted with 250 clears the count. `0`: never delay. MX and submission listeners.',
    }),
    hard_error_limit: nonNegativeInt().default(20).meta({
      description:
        'Errors after which the session gets `421 4.7.0 <hostname> Error: too many errors` and is closed (Postfix `smtpd_hard_error_limit`). `0`: never. Must be greater than `soft_error_limit` unless `0`.',
    }),
    error_sleep_ms: nonNegativeInt().default(1000).meta({
      description:
        'The wait, in milliseconds, of each command after the soft limit (Postfix `smtpd_error_sleep_time`). `0`: no wait.',
    }),
    // The chain view's cache (src/mail/chain-view.ts, docs/inbound.md "Chain lookups").
    chain_cache_secs: nonNegativeInt().default(30).meta({
      description:
        'How long the MX (and submission, the spooler\'s local deliveries, IMAP/POP3 logins) reuses a chain answer that lets mail through: an existing mailbox of one of `local_domains` without default postage, a frombox that allowlists the sender (required postage 0). A stale one only delays a refusal: SendMail re-checks every rule and the message is bounced. `0`: read the chain for every lookup. See docs/inbound.md "Chain lookups".',
    }),
    chain_refusal_cache_secs: nonNegativeInt().default(5).meta({
      description:
        "How long any other chain answer is reused: no such account (mailbox, alias, frombox, pending close), a record that refuses mail (a pending close, a mailbox with default postage or of no local domain), a frombox's stamp count, an alias's wallet, a mailbox's published key and a domain's MailDomain. Never longer than `chain_cache_secs`. A failed read is never kept.",
    }),
    chain_cache_entries: positiveInt().default(20_000).meta({
      description:
        'Chain answers kept at most (about 2 KB each with the decoded record, some 40 MB at the default); over it the oldest go first. A wallet takes two or three, plus one per sender that wrote to it lately.',
    }),
    timeouts: z
      .strictObject({
        socket_timeout_secs: positiveInt()
          .default(300)
          .meta({ description: 'Idle socket timeout (RFC 5321 suggests 5 minutes).' }),
        shutdown_drain_secs: nonNegativeInt().default(30).meta({
          description: 'On shutdown: stop accepting, let sessions finish this long, then answer 421.',
        }),
      })
      .prefault({})
      .meta({ flatten: true }),
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
