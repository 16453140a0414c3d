// FETCH ENVELOPE (RFC 3501 §7.4.2): date, subject, from, sender, reply-to,
// to, cc, bcc, in-reply-to, message-id — raw header text (encoded words
// are left for the client to decode), addresses split into
// (name adl mailbox host), groups as RFC 3501 writes them.
import addressparser from 'nodemailer/lib/addressparser';
import { list, nstr, type Piece } from '../protocol/format.ts';
import { header, type MimeNode } from './mime-tree.ts';

const bytes = (s: string) => Buffer.from(s, 'latin1');
const nval = (s: string | undefined) => nstr(s === undefined || s === '' ? null : bytes(s));

function address(name: string, addr: string): Piece[] {
  const at = addr.lastIndexOf('@');
  const mailbox = at < 0 ? addr : addr.slice(0, at);
  const host = at < 0 ? 'MISSING_DOMAIN' : addr.slice(at + 1);
  return list([nval(name), ['NIL'], nval(mailbox || 'MISSING_MAILBOX'), nval(host)]);
}

function addressList(value: string | undefined): Piece[] {
  if (value === undefined || value.trim() === '') return ['NIL'];
  let parsed: ReturnType<typeof addressparser>;
  try {
    parsed = addressparser(value);
  } catch {
    return ['NIL'];
  }
  const items: Piece[][] = [];
  for (const a of parsed) {
    if ('group' in a) {
      items.push(list([['NIL'], ['NIL'], nval(a.name || 'undisclosed-recipients'), ['NIL']]));
      for (const g of a.group ?? []) if (g.address) items.push(address(g.name, g.address));
      items.push(list([['NIL'], ['NIL'], ['NIL'], ['NIL']]));
    } else if (a.address) {
      items.push(address(a.name, a.address));
    }
  }
  // RFC 3501: `"(" 1*address ")"`, the addresses written back to back.
  return items.length === 0 ? ['NIL'] : ['(', ...items.flat(), ')'];
}

export function envelope(node: MimeNode): Piece[] {
  const from = header(node, 'from');
  const sender = header(node, 'sender') || from;
  const replyTo = header(node, 'reply-to') || from;
  return list([
    nval(header(node, 'date')),
    nval(header(node, 'subject')),
    addressList(from),
    addressList(sender),
    addressList(replyTo),
    addressList(header(node, 'to')),
    addressList(header(node, 'cc')),
    addressList(header(node, 'bcc')),
    nval(header(node, 'in-reply-to')),
    nval(header(node, 'message-id')),
  ]);
}
