// [imap] and [pop3]: where the IMAP and POP3 listeners bind (the public
// names and ports clients are told are [mail_hosts]). `port` is the
// implicit-TLS listener; `starttls_port` adds a plain listener that offers
// STARTTLS/STLS, off unless set. Dev defaults 1993/1995; production uses
// 993/995 (and 143/110 for STARTTLS).
import * as z from 'zod';
import { bool, host, port, positiveInt } from '../fields.ts';

function between(expected: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return z
    .number({ error: expected })
    .int({ error: expected })
    .min(min, { error: expected })
    .max(max, { error: expected });
}

/** Dev ports used when [imap]/[pop3] name none. */
export const DEFAULT_MAIL_ACCESS_PORTS = { imap: 1993, pop3: 1995 } as const;

export const imapSchema = z.strictObject({
  host: host().default('127.0.0.1').meta({ description: 'Bind address.' }),
  port: port()
    .default(DEFAULT_MAIL_ACCESS_PORTS.imap)
    .meta({ description: 'Implicit TLS listener; production `993`.', default: '`1993` (dev)' }),
  starttls_port: port().optional().meta({
    description:
      'A plain listener that offers STARTTLS (login only after it); production `143`. `serve` warns when `[mail_hosts] imap_tls = "starttls"` but none is set.',
    default: 'none',
  }),
  max_connections_per_ip: positiveInt()
    .default(20)
    .meta({ description: 'Connections at once from one address; more are told `* BYE`.' }),
  idle_poll_ms: between('expected integer 100-60000', 100, 60_000).default(2000).meta({
    description:
      'How often IDLE looks for new mail while push is off or its Redis subscription is down (100–60000).',
  }),
  // IDLE push through Redis pub/sub (src/edge/imap/push.ts); the poll above runs while it is off or down.
  idle_push: bool().default(true).meta({
    description:
      'Wake IDLE sessions at once when their mailbox changes, through Redis pub/sub on `<prefix>:imap:mail-changed` (docs/imap-pop3.md "IDLE push"). `false`: IDLE only polls, every `idle_poll_ms`.',
  }),
  idle_push_poll_ms: between('expected integer 100-3600000', 100, 3_600_000).default(30_000).meta({
    description:
      'How often IDLE still looks while the push subscription is live: the bound for a lost notification (100–3600000).',
  }),
  autologout_secs: between('expected integer >= 1800 (RFC 3501)', 1800)
    .default(1800)
    .meta({ description: "Inactivity before the server closes a session (at least RFC 3501's 30 minutes)." }),
});

export const pop3Schema = z.strictObject({
  host: host().default('127.0.0.1').meta({ description: 'Bind address.' }),
  port: port()
    .default(DEFAULT_MAIL_ACCESS_PORTS.pop3)
    .meta({ description: 'Implicit TLS listener; production `995`.', default: '`1995` (dev)' }),
  starttls_port: port().optional().meta({
    description:
      'A plain listener that offers STLS (login only after it); production `110`. `serve` warns when `[mail_hosts] pop3_tls = "starttls"` but none is set.',
    default: 'none',
  }),
  max_connections_per_ip: positiveInt()
    .default(20)
    .meta({ description: 'Connections at once from one address; more get `-ERR [IN-USE]`.' }),
  autologout_secs: between('expected integer >= 600 (RFC 1939)', 600)
    .default(600)
    .meta({ description: "Inactivity before the server closes a session (at least RFC 1939's 10 minutes)." }),
});

export type ImapInput = z.output<typeof imapSchema>;
export type Pop3Input = z.output<typeof pop3Schema>;
