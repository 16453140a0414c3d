// The few header facts submission needs from a raw RFC 5322 message: the
// From addresses (to check they are the sender's own) and whether Date and
// Message-ID are present (RFC 6409 8.2/8.3 let a submission server add them).
// The body is never parsed or rewritten; added fields go on top.
import addressparser from 'nodemailer/lib/addressparser';
import { rfc5322Date } from '../../mail/trace.ts';

export { rfc5322Date };

export interface HeaderFacts {
  /** Every mailbox address of every From field, in order. */
  from: string[];
  /** How many From fields there are (RFC 5322 allows exactly one). */
  fromFields: number;
  hasDate: boolean;
  hasMessageId: boolean;
}

/** The header section: everything before the first empty line (all of it when there is none). */
export function headerSection(raw: Buffer): string {
  // A message that starts with the empty line has no header fields at all.
  if (raw[0] === 0x0d && raw[1] === 0x0a) return '';
  const end = raw.indexOf('\r\n\r\n');
  // latin1 keeps every byte one character, so 8-bit header bytes cannot merge lines.
  return raw.subarray(0, end < 0 ? raw.length : end + 2).toString('latin1');
}

/** Unfolded header fields as [lowercased name, value]. */
export function headerFields(section: string): [string, string][] {
  const fields: [string, string][] = [];
  for (const line of section.split('\r\n')) {
    if (line === '') continue;
    const last = fields[fields.length - 1];
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      last[1] += line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1)]);
  }
  return fields;
}

export function headerFacts(raw: Buffer): HeaderFacts {
  const fields = headerFields(headerSection(raw));
  const fromValues = fields.filter(([name]) => name === 'from').map(([, value]) => value);
  const from: string[] = [];
  for (const value of fromValues) {
    // Header bytes were read as latin1; addresses may be UTF-8 (RFC 6532).
    const text = Buffer.from(value, 'latin1').toString('utf8');
    for (const entry of addressparser(text, { flatten: true })) {
      if (entry.address) from.push(entry.address);
    }
  }
  return {
    from,
    fromFields: fromValues.length,
    hasDate: fields.some(([name]) => name === 'date'),
    hasMessageId: fields.some(([name]) => name === 'message-id'),
  };
}

/**
 * The trace and missing header fields put on top of a submitted message.
 * RFC 5321 §4.4 makes the FROM clause mandatory and wants the client's
 * EHLO name and IP address in it; for an account that would tell every
 * recipient where the holder was (and the TCP-info would name the machine),
 * so the clause names our own host with a comment saying the client is
 * withheld. Neither the wallet nor the login is written either: the From
 * field already says who sent it, as much as the sender chose to say.
 */
export function submissionHeaders(opts: {
  hostname: string;
  msgid: string;
  protocol: string;
  date: Date;
  facts: HeaderFacts;
}): string {
  const date = rfc5322Date(opts.date);
  let out =
    `Received: from ${opts.hostname} (authenticated submission, client address withheld)\r\n` +
    `\tby ${opts.hostname} (Sealpost) with ${opts.protocol} id ${opts.msgid};\r\n\t${date}\r\n`;
  if (!opts.facts.hasMessageId) out += `Message-ID: <${opts.msgid}@${opts.hostname}>\r\n`;
  if (!opts.facts.hasDate) out += `Date: ${date}\r\n`;
  return out;
}
