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
  host: host().default('127.0.0.1'),
  port: port().default(DEFAULT_MAIL_ACCESS_PORTS.imap),
  starttls_port: port().optional(),
  max_connections_per_ip: positiveInt().default(20),
  idle_poll_ms: between('expected integer 100-60000', 100, 60_000).default(2000),
  // IDLE push through Redis pub/sub (src/imap/push.ts); the poll above runs while it is off or down.
  idle_push: bool().default(true),
  idle_push_poll_ms: between('expected integer 100-3600000', 100, 3_600_000).default(30_000),
  autologout_secs: between('expected integer >= 1800 (RFC 3501)', 1800).default(1800),
});

export const pop3Schema = z.strictObject({
  host: host().default('127.0.0.1'),
  port: port().default(DEFAULT_MAIL_ACCESS_PORTS.pop3),
  starttls_port: port().optional(),
  max_connections_per_ip: positiveInt().default(20),
  autologout_secs: between('expected integer >= 600 (RFC 1939)', 600).default(600),
});

export type ImapInput = z.output<typeof imapSchema>;
export type Pop3Input = z.output<typeof pop3Schema>;
