// Modified UTF-7 for mailbox names (RFC 3501 §5.1.3): printable ASCII
// stands for itself ("&" as "&-"), everything else is UTF-16 in base64
// with "," instead of "/", between "&" and "-". Stored names are Unicode.
import { ImapSyntaxError } from './tokens.ts';

function b64ToUtf16(b64: string): string {
  const bytes = Buffer.from(b64.replace(/,/g, '/'), 'base64');
  if (bytes.length % 2 !== 0) throw new ImapSyntaxError('invalid modified UTF-7 in a mailbox name');
  let out = '';
  for (let i = 0; i < bytes.length; i += 2)
    out += String.fromCharCode(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  return out;
}

export function decodeMutf7(name: string): string {
  let out = '';
  let i = 0;
  while (i < name.length) {
    const c = name[i] as string;
    if (c !== '&') {
      const code = c.charCodeAt(0);
      // Clients that send raw 8-bit/UTF-8 names are taken as they are.
      if (code < 0x20 || code === 0x7f) throw new ImapSyntaxError('control characters in a mailbox name');
      out += c;
      i++;
      continue;
    }
    const end = name.indexOf('-', i + 1);
    if (end < 0) throw new ImapSyntaxError('unterminated modified UTF-7 in a mailbox name');
    const chunk = name.slice(i + 1, end);
    if (chunk === '') out += '&';
    else {
      if (!/^[A-Za-z0-9+,]+$/.test(chunk))
        throw new ImapSyntaxError('invalid modified UTF-7 in a mailbox name');
      out += b64ToUtf16(chunk);
    }
    i = end + 1;
  }
  // A lone surrogate cannot be stored as UTF-8 and would not come back as sent.
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(out)) {
    throw new ImapSyntaxError('invalid UTF-16 in a mailbox name');
  }
  return out;
}

export function encodeMutf7(name: string): string {
  let out = '';
  let pending = '';
  const flush = () => {
    if (!pending) return;
    const bytes = Buffer.alloc(pending.length * 2);
    for (let i = 0; i < pending.length; i++) bytes.writeUInt16BE(pending.charCodeAt(i), i * 2);
    out += `&${bytes.toString('base64').replace(/=+$/, '').replace(/\//g, ',')}-`;
    pending = '';
  };
  for (const ch of name) {
    const code = ch.charCodeAt(0);
    if (ch.length === 1 && code >= 0x20 && code <= 0x7e) {
      flush();
      out += ch === '&' ? '&-' : ch;
    } else pending += ch;
  }
  flush();
  return out;
}
