// Trace fields of a delivered message: `Return-Path` and `Received`
// (RFC 5321 §4.4, RFC 5322 §3.6.7) and the MX's `Authentication-Results`
// (RFC 8601). The MX records the facts of the SMTP session in each delivery
// job (`MxTrace`); the pipeline writes the fields per recipient at final
// delivery, on top of the message as received, and removes any
// Authentication-Results field that claims our authserv-id (RFC 8601 §5).
// The body is never touched.

import type { MxTrace } from '../contracts/inbound-jobs.ts';
import { spamFields } from './spam/filter.ts';

export type { MxTrace };

/** An envelope sender `<wallet>@<domain>` whose domain authority attested that wallet on chain. */
export interface AttestedSenderFact {
  wallet: string;
  domain: string;
}

/**
 * Our Authentication-Results clause for an attested sender
 * (docs/inbound.md, "Attested senders"): an extension method of RFC 8601.
 */
export function attestResult(a: AttestedSenderFact): string {
  return `x-sealpost-attest=pass (sender attested by the domain authority on chain) smtp.mailfrom=${a.wallet}@${a.domain}`;
}

/**
 * The `with` word (RFC 3848, RFC 6531 §3.7.3): SMTP for a HELO session
 * without TLS or AUTH, else the ESMTP family with S for TLS and A for
 * SMTP AUTH; UTF8SMTP… when the transaction used SMTPUTF8.
 */
export function transmissionType(s: { ehlo: boolean; tls: boolean; auth: boolean; utf8?: boolean }): string {
  const suffix = `${s.tls ? 'S' : ''}${s.auth ? 'A' : ''}`;
  if (s.utf8) return `UTF8SMTP${suffix}`;
  if (!s.ehlo && suffix === '') return 'SMTP';
  return `ESMTP${suffix}`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Tue, 01 Jul 2025 12:00:00 +0000` (UTC keeps the server's zone out of the message). */
export function rfc5322Date(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${DAYS[d.getUTCDay()]}, ${p(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`
  );
}

/**
 * A client-supplied word made safe inside a trace field: no controls,
 * spaces, comment or angle delimiters, and no `;` (which would end the
 * clause list before the date).
 */
function traceWord(s: string): string {
  return s.replace(/[^\x21-\x7e]|[()\\;<>"]/g, '?').slice(0, 255);
}

/** `Received:` for one recipient's copy of MX mail. */
export function receivedField(t: MxTrace, copy: { id: string; recipient: string; date: Date }): string {
  const ip = t.ip.includes(':') ? `IPv6:${t.ip}` : t.ip;
  const helo = traceWord(t.helo) || `[${ip}]`;
  let out = `Received: from ${helo} (${t.reverseName ? traceWord(t.reverseName) : 'unknown'} [${ip}])\r\n`;
  if (t.tls) out += `\t(using ${traceWord(t.tls.version)} with cipher ${traceWord(t.tls.cipher)})\r\n`;
  out += `\tby ${t.by} (Sealpost) with ${t.protocol} id ${copy.id}\r\n`;
  out += `\tfor <${copy.recipient}>; ${rfc5322Date(copy.date)}\r\n`;
  return out;
}

/** `Return-Path:` (RFC 5321 §4.4): the envelope sender, `<>` for the null sender. */
export function returnPathField(envelopeFrom: string): string {
  return `Return-Path: <${envelopeFrom}>\r\n`;
}

/** The A-R value when nothing was checked (RFC 8601 §2.2 "none"). */
export function noAuthResults(authservId: string): string {
  return `${authservId}; none`;
}

/** Skips whitespace and (nested) comments from `i`. */
function skipCfws(s: string, i: number): number {
  let depth = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\' && depth > 0) i += 2;
    else if (c === '(') {
      depth++;
      i++;
    } else if (c === ')' && depth > 0) {
      depth--;
      i++;
    } else if (depth > 0 || c === ' ' || c === '\t' || c === '\r' || c === '\n') i++;
    else break;
  }
  return i;
}

/** The authserv-id of an Authentication-Results value (token or quoted-string), lowercased. */
export function authservIdOf(value: string): string {
  let i = skipCfws(value, 0);
  let id = '';
  if (value[i] === '"') {
    for (i++; i < value.length && value[i] !== '"'; i++) {
      if (value[i] === '\\') i++;
      id += value[i] ?? '';
    }
  } else {
    const m = /^[^\s;()]+/.exec(value.slice(i));
    id = m ? m[0] : '';
  }
  return id.toLowerCase().replace(/\.$/, '');
}

/**
 * Removes every Authentication-Results field whose authserv-id is ours
 * (compared case-insensitively): only we may write those, so any such field
 * in a received message is forged (RFC 8601 §5). Returns the message and the
 * count removed; the bytes are returned as they were when none is found.
 */
export function withoutOwnAuthResults(
  raw: Buffer,
  authservId: string,
  /** Also removes every field with a name this matches (lowercased), e.g. incoming X-Spam-* under ours. */
  alsoDrop?: RegExp,
): { message: Buffer; removed: number } {
  // A message that starts with the empty line has no header fields at all.
  if (raw[0] === 0x0d && raw[1] === 0x0a) return { message: raw, removed: 0 };
  const blank = raw.indexOf('\r\n\r\n');
  const headerEnd = blank < 0 ? raw.length : blank + 2;
  // latin1 keeps one character per byte, so 8-bit header bytes survive the round trip.
  const section = raw.subarray(0, headerEnd).toString('latin1');
  const ours = authservId.toLowerCase().replace(/\.$/, '');
  const lines = section.split('\r\n');
  const kept: string[] = [];
  let removed = 0;
  let dropping = false;
  for (const [n, line] of lines.entries()) {
    if (n === lines.length - 1 && line === '') break;
    const continuation = line.startsWith(' ') || line.startsWith('\t');
    if (!continuation) {
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
      dropping =
        (name === 'authentication-results' && authservIdOf(fieldValue(lines, n, colon)) === ours) ||
        alsoDrop?.test(name) === true;
      if (dropping) removed++;
    }
    if (!dropping) kept.push(line);
  }
  if (removed === 0) return { message: raw, removed };
  const head = Buffer.from(kept.map((l) => `${l}\r\n`).join(''), 'latin1');
  return { message: Buffer.concat([head, raw.subarray(headerEnd)]), removed };
}

/** The unfolded value of the field starting at line `n` (its continuation lines joined). */
function fieldValue(lines: string[], n: number, colon: number): string {
  let value = (lines[n] ?? '').slice(colon + 1);
  for (let i = n + 1; i < lines.length; i++) {
    const l = lines[i] ?? '';
    if (!(l.startsWith(' ') || l.startsWith('\t'))) break;
    value += l;
  }
  return value;
}

/** One recipient's copy: trace fields on top, forged A-R fields removed. */
export function deliveredMessage(
  raw: Buffer,
  copy: {
    envelopeFrom: string;
    recipient: string;
    id: string;
    receivedAt: number;
    /** Our `[smtp] hostname`: the authserv-id. */
    hostname: string;
    /** Absent for submitted mail and for jobs queued before trace facts existed. */
    mx?: MxTrace;
    /** MX mail whose envelope sender is an attested wallet of its (SPF-passed) domain. */
    attested?: AttestedSenderFact;
  },
): Buffer {
  // A scanned message's X-Spam-* fields are ours alone: any the sender wrote go.
  const { message } = withoutOwnAuthResults(raw, copy.hostname, copy.mx?.spam ? /^x-spam-/ : undefined);
  // Return-Path first (RFC 5321 §4.4), then our verdict above our Received
  // (the order of RFC 8601 appendix B).
  let fields = returnPathField(copy.envelopeFrom);
  if (copy.mx) {
    const attest = copy.attested ? `;\r\n ${attestResult(copy.attested)}` : '';
    fields += `Authentication-Results: ${copy.mx.authResults}${attest}\r\n`;
    if (copy.mx.spam) fields += spamFields(copy.mx.spam, copy.hostname);
    fields += receivedField(copy.mx, {
      id: copy.id,
      recipient: copy.recipient,
      date: new Date(copy.receivedAt),
    });
  }
  return Buffer.concat([Buffer.from(fields, 'utf8'), message]);
}
