// Builds the raw RFC 5322 message the page seals (trustless) or hands to the
// server (server mode): CRLF line ends, RFC 2047 encoded words for non-ASCII
// header text, and a text/plain body sent as 7bit when it can be, else base64.
// A message with attachments (a forward as message/rfc822) is multipart/mixed:
// the text part first, then each attachment.

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
  /** Attached after the text (a forwarded message is message/rfc822). */
  attachments?: OutgoingAttachment[];
}

export interface OutgoingAttachment {
  filename: string;
  contentType: string;
  data: Uint8Array;
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

/** A message/rfc822 part stays 8bit when its lines allow (RFC 2046 §5.2.1); anything else is base64. */
function attachmentPart(a: OutgoingAttachment, boundary: string): Uint8Array[] {
  const name = a.filename.replace(/["\\\r\n]/g, '_');
  const lines = new TextDecoder('latin1').decode(a.data).split('\r\n');
  const eightBit =
    a.contentType === 'message/rfc822' &&
    !a.data.includes(0) &&
    lines.every((l) => l.length <= 998 && !l.includes('\r') && !l.includes('\n'));
  const head = [
    `--${boundary}`,
    `Content-Type: ${a.contentType}${a.contentType === 'message/rfc822' ? '' : `; name="${name}"`}`,
    `Content-Disposition: attachment; filename="${name}"`,
    `Content-Transfer-Encoding: ${eightBit ? '8bit' : 'base64'}`,
    '',
    '',
  ].join('\r\n');
  const enc = new TextEncoder();
  if (eightBit) {
    const tail = a.data.length >= 2 && a.data[a.data.length - 2] === 13 && a.data[a.data.length - 1] === 10;
    return [enc.encode(head), a.data, enc.encode(tail ? '' : '\r\n')];
  }
  return [enc.encode(`${head}${bytesToBase64(a.data).replace(/.{1,76}/g, '$&\r\n')}`)];
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
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
  const attachments = m.attachments ?? [];
  if (attachments.length === 0) {
    headers.push(
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      `Content-Transfer-Encoding: ${encoding}`,
    );
    return new TextEncoder().encode(`${headers.join('\r\n')}\r\n\r\n${body}\r\n`);
  }
  const boundary = `=_sealpost_${m.messageId.replace(/[^A-Za-z0-9]/g, '').slice(0, 32)}`;
  headers.push('MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${boundary}"`);
  const enc = new TextEncoder();
  const text = [
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Transfer-Encoding: ${encoding}`,
    '',
    body,
    '',
  ].join('\r\n');
  return concat([
    enc.encode(`${headers.join('\r\n')}\r\n\r\n${text}`),
    ...attachments.flatMap((a) => attachmentPart(a, boundary)),
    enc.encode(`--${boundary}--\r\n`),
  ]);
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

/** `Fwd: subject` without piling up prefixes. */
export function forwardSubject(subject: string): string {
  return /^\s*(fwd?|fw):/i.test(subject) ? subject.trim() : `Fwd: ${subject.trim()}`;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function base64ToBytes(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** An attachment as a draft keeps it (JSON: in history entries and the encrypted local drafts). */
export interface DraftAttachment {
  filename: string;
  contentType: string;
  base64: string;
}

export function toOutgoing(list: readonly DraftAttachment[] | undefined): OutgoingAttachment[] {
  return (list ?? []).map((a) => ({
    filename: a.filename,
    contentType: a.contentType,
    data: base64ToBytes(a.base64),
  }));
}
