// Builds the raw RFC 5322 message the page seals (trustless) or hands to the
// server (server mode): CRLF line ends, RFC 2047 encoded words for non-ASCII
// header text, and a text/plain body sent as 7bit when it can be, else base64.

export interface OutgoingMessage {
  from: string;
  to: string[];
  subject: string;
  text: string;
  date: Date;
  /** Without angle brackets. */
  messageId: string;
  /** Message-ID of the parent, without angle brackets. */
  inReplyTo?: string;
  references?: string[];
}

const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

function utf8Base64(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** An unstructured header value: as is when printable ASCII, else one encoded word per ~45 bytes. */
export function encodeHeaderText(value: string): string {
  const clean = value.replace(/[\r\n]+/g, ' ');
  if (ASCII_PRINTABLE.test(clean)) return clean;
  const words: string[] = [];
  let piece = '';
  for (const ch of clean) {
    if (new TextEncoder().encode(piece + ch).length > 45) {
      words.push(`=?UTF-8?B?${utf8Base64(piece)}?=`);
      piece = '';
    }
    piece += ch;
  }
  if (piece) words.push(`=?UTF-8?B?${utf8Base64(piece)}?=`);
  return words.join('\r\n ');
}

function formatDate(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${d.getUTCDate()} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

function bodyPart(text: string): { encoding: string; body: string } {
  const normalized = text.replace(/\r?\n/g, '\r\n');
  const lines = normalized.split('\r\n');
  const sevenBit = lines.every((l) => ASCII_PRINTABLE.test(l.replace(/\t/g, ' ')) && l.length <= 998);
  if (sevenBit) return { encoding: '7bit', body: normalized };
  const b64 = utf8Base64(normalized);
  return { encoding: 'base64', body: b64.replace(/.{1,76}/g, '$&\r\n').replace(/\r\n$/, '') };
}

export function buildMessage(m: OutgoingMessage): Uint8Array {
  const { encoding, body } = bodyPart(m.text);
  const headers = [
    `Date: ${formatDate(m.date)}`,
    `From: ${m.from}`,
    `To: ${m.to.join(', ')}`,
    `Subject: ${encodeHeaderText(m.subject)}`,
    `Message-ID: <${m.messageId}>`,
  ];
  if (m.inReplyTo) headers.push(`In-Reply-To: <${m.inReplyTo}>`);
  const refs = m.references ?? (m.inReplyTo ? [m.inReplyTo] : []);
  if (refs.length > 0) headers.push(`References: ${refs.map((r) => `<${r}>`).join(' ')}`);
  headers.push(
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Transfer-Encoding: ${encoding}`,
  );
  return new TextEncoder().encode(`${headers.join('\r\n')}\r\n\r\n${body}\r\n`);
}

/** A fresh Message-ID for `domain`. */
export function newMessageId(domain: string, random: (n: number) => Uint8Array): string {
  const hex = Array.from(random(16), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex}@${domain}`;
}

/** `Re: subject` without piling up prefixes. */
export function replySubject(subject: string): string {
  return /^\s*re:/i.test(subject) ? subject.trim() : `Re: ${subject.trim()}`;
}
