// RFC 3461 (DSN extension) parameters at the SMTP edge. smtp-server parses
// RET and NOTIFY (and refuses bad values with 501) when DSN is advertised,
// and hands every parameter over xtext-decoded (refusing control
// characters); ENVID and ORCPT are checked here. Where DSN is not advertised
// (the MX), the four parameters are refused with 555 5.5.4 (RFC 5321
// §4.1.1.11) instead of being silently ignored.
import { SmtpReply } from '../../mail/smtp-error.ts';

const MAIL_DSN = ['RET', 'ENVID'] as const;
const RCPT_DSN = ['NOTIFY', 'ORCPT'] as const;
/** RFC 3461 §4.4: ENVID at most 100 characters; §4.2: ORCPT at most 500. */
const ENVID_MAX = 100;
const ORCPT_MAX = 500;
/** Decoded values must be printable US-ASCII (RFC 3461 §4.2, §4.4). */
const PRINTABLE = /^[\x20-\x7e]+$/;

type Args = Record<string, string | boolean> | false | undefined;

const bad = (text: string) => new SmtpReply(501, '5.5.4', text);

/** The MX does not offer DSN: its parameters are not recognized (555). */
export function refuseDsnParams(args: Args, command: 'MAIL' | 'RCPT'): SmtpReply | null {
  if (!args) return null;
  const names = command === 'MAIL' ? MAIL_DSN : RCPT_DSN;
  const given = names.find((n) => args[n] !== undefined);
  if (!given) return null;
  return new SmtpReply(
    555,
    '5.5.4',
    `${given} parameter not supported here (this server does not offer DSN)`,
  );
}

/** MAIL FROM's ENVID (as decoded by smtp-server); a reply for a malformed one. */
export function mailDsnParams(args: Args): { envid?: string } | SmtpReply {
  const envid = args ? args.ENVID : undefined;
  if (envid === undefined) return {};
  if (typeof envid !== 'string' || !PRINTABLE.test(envid)) {
    return bad('Bad ENVID parameter syntax (printable US-ASCII as xtext expected)');
  }
  if (envid.length > ENVID_MAX) return bad(`ENVID parameter longer than ${ENVID_MAX} characters`);
  return { envid };
}

/** RCPT TO's ORCPT (`addr-type;address`, as decoded by smtp-server); a reply for a malformed one. */
export function rcptDsnParams(args: Args): { orcpt?: string } | SmtpReply {
  const raw = args ? args.ORCPT : undefined;
  if (raw === undefined) return {};
  if (typeof raw !== 'string' || raw.length > ORCPT_MAX) return bad('Bad ORCPT parameter syntax');
  const semi = raw.indexOf(';');
  const type = raw.slice(0, Math.max(0, semi));
  const address = semi > 0 ? raw.slice(semi + 1) : '';
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+$/.test(type) || !PRINTABLE.test(address)) {
    return bad('Bad ORCPT parameter syntax (addr-type;xtext expected)');
  }
  return { orcpt: `${type.toLowerCase()};${address}` };
}
