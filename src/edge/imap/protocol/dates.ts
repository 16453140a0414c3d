// IMAP dates: date-time "17-Jul-1996 02:44:25 -0700" (INTERNALDATE, APPEND)
// and date "1-Feb-1994" (SEARCH). Internal dates are shown in UTC.
import { ImapSyntaxError } from './tokens.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function formatInternalDate(ms: number): string {
  const d = new Date(ms);
  const dd = String(d.getUTCDate()).padStart(2, '0');
  const time = [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()].map((n) => String(n).padStart(2, '0'));
  return `${dd}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${time.join(':')} +0000`;
}

function month(name: string): number {
  const i = MONTHS.findIndex((m) => m.toLowerCase() === name.toLowerCase());
  if (i < 0) throw new ImapSyntaxError(`unknown month ${name}`);
  return i;
}

/** date-time → unix ms. */
export function parseDateTime(text: string): number {
  const m = /^ ?(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(text);
  if (!m) throw new ImapSyntaxError('invalid date-time (expected "dd-Mon-yyyy hh:mm:ss +zzzz")');
  const utc = Date.UTC(
    Number(m[3]),
    month(m[2] as string),
    Number(m[1]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6]),
  );
  const offset = (Number(m[8]) * 60 + Number(m[9])) * 60_000 * (m[7] === '-' ? -1 : 1);
  const ms = utc - offset;
  if (
    !Number.isFinite(ms) ||
    Number(m[1]) > 31 ||
    Number(m[4]) > 23 ||
    Number(m[5]) > 59 ||
    Number(m[6]) > 60
  ) {
    throw new ImapSyntaxError('invalid date-time');
  }
  return ms;
}

/** A SEARCH date → the UTC midnight that starts that day (ms). */
export function parseSearchDate(text: string): number {
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(text);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 31)
    throw new ImapSyntaxError('invalid date (expected dd-Mon-yyyy)');
  return Date.UTC(Number(m[3]), month(m[2] as string), Number(m[1]));
}

/** UTC midnight of the day a time falls on. */
export function dayOf(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}
