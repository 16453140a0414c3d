// FETCH data items (RFC 3501 §6.4.5): parsing the request and rendering
// one message's response. Sections are cut from the decrypted raw bytes.

import type { OpenedMessage } from './mail/mail-access.ts';
import { bodyStructure } from './mime/body-structure.ts';
import { envelope } from './mime/envelope.ts';
import { type MimeNode, parseMime } from './mime/mime-tree.ts';
import { extractSection, parseSection, type SectionSpec } from './mime/sections.ts';
import { formatInternalDate } from './protocol/dates.ts';
import type { Piece } from './protocol/format.ts';
import { ImapSyntaxError, type Token } from './protocol/tokens.ts';
import { flagList } from './selected.ts';

export type FetchItem =
  | { kind: 'uid' | 'flags' | 'internaldate' | 'size' | 'envelope' | 'body' | 'bodystructure' | 'modseq' }
  | { kind: 'rfc822' | 'rfc822.header' | 'rfc822.text' }
  | { kind: 'section'; peek: boolean; section: SectionSpec; partial?: [number, number] };

const SIMPLE: Record<string, FetchItem['kind']> = {
  UID: 'uid',
  FLAGS: 'flags',
  INTERNALDATE: 'internaldate',
  'RFC822.SIZE': 'size',
  ENVELOPE: 'envelope',
  BODY: 'body',
  BODYSTRUCTURE: 'bodystructure',
  RFC822: 'rfc822',
  'RFC822.HEADER': 'rfc822.header',
  'RFC822.TEXT': 'rfc822.text',
  MODSEQ: 'modseq',
};

const MACROS: Record<string, string[]> = {
  ALL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE'],
  FAST: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE'],
  FULL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE', 'BODY'],
};

function parseItem(atom: string): FetchItem {
  const upper = atom.toUpperCase();
  const simple = SIMPLE[upper];
  if (simple) return { kind: simple } as FetchItem;
  const m = /^BODY(\.PEEK)?\[(.*)\](?:<(\d{1,10})\.(\d{1,10})>)?$/is.exec(atom);
  if (!m) throw new ImapSyntaxError(`unknown FETCH item ${atom.slice(0, 40)}`);
  const partial: [number, number] | undefined = m[3] !== undefined ? [Number(m[3]), Number(m[4])] : undefined;
  if (partial && partial[1] === 0) throw new ImapSyntaxError('a partial fetch needs a length above 0');
  return { kind: 'section', peek: Boolean(m[1]), section: parseSection(m[2] as string), partial };
}

/** The requested items, with UID added for UID FETCH. */
export function parseFetchItems(tokens: Token[], uid: boolean): FetchItem[] {
  if (tokens.length !== 1) throw new ImapSyntaxError('FETCH needs one item or a parenthesized list');
  const tok = tokens[0] as Token;
  let atoms: string[];
  if (tok.t === 'atom') {
    const macro = MACROS[tok.v.toUpperCase()];
    atoms = macro ?? [tok.v];
  } else if (tok.t === 'list') {
    if (tok.v.length === 0) throw new ImapSyntaxError('empty FETCH item list');
    atoms = tok.v.map((t) => {
      if (t.t !== 'atom') throw new ImapSyntaxError('FETCH items are atoms');
      if (MACROS[t.v.toUpperCase()]) throw new ImapSyntaxError('macros cannot be in a list');
      return t.v;
    });
  } else throw new ImapSyntaxError('FETCH needs items');
  if (atoms.length > 100) throw new ImapSyntaxError('too many FETCH items');
  const items = atoms.map(parseItem);
  if (uid && !items.some((i) => i.kind === 'uid')) items.unshift({ kind: 'uid' });
  return items;
}

/** Whether the message text is needed (else row facts suffice). */
export function needsContent(items: FetchItem[]): boolean {
  return items.some((i) => !['uid', 'flags', 'internaldate', 'modseq'].includes(i.kind));
}

/** Whether fetching these sets \Seen (non-PEEK body sections, RFC822, RFC822.TEXT). */
export function setsSeen(items: FetchItem[]): boolean {
  return items.some(
    (i) => (i.kind === 'section' && !i.peek) || i.kind === 'rfc822' || i.kind === 'rfc822.text',
  );
}

export interface FetchSubject {
  uid: number;
  flags: string[];
  modseq: number;
  receivedAt: number;
  opened?: OpenedMessage;
}

function treeOf(opened: OpenedMessage): MimeNode {
  opened.tree ??= parseMime(opened.raw);
  return opened.tree;
}

function literal(bytes: Buffer): Piece[] {
  return [`{${bytes.length}}\r\n`, bytes];
}

/** The parenthesized FETCH data of one message. */
export function renderFetch(items: FetchItem[], s: FetchSubject): Piece[] {
  const out: Piece[] = ['('];
  const add = (pieces: Piece[]) => {
    if (out.length > 1) out.push(' ');
    out.push(...pieces);
  };
  const content = () => {
    if (!s.opened) throw new Error('message content was not loaded');
    return s.opened;
  };
  for (const item of items) {
    switch (item.kind) {
      case 'uid':
        add([`UID ${s.uid}`]);
        break;
      case 'flags':
        add(['FLAGS ', ...flagList(s.flags)]);
        break;
      case 'internaldate':
        add([`INTERNALDATE "${formatInternalDate(s.receivedAt)}"`]);
        break;
      case 'modseq':
        add([`MODSEQ (${s.modseq})`]);
        break;
      case 'size':
        add([`RFC822.SIZE ${content().raw.length}`]);
        break;
      case 'envelope':
        add(['ENVELOPE ', ...envelope(treeOf(content()))]);
        break;
      case 'body':
        add(['BODY ', ...bodyStructure(treeOf(content()), false)]);
        break;
      case 'bodystructure':
        add(['BODYSTRUCTURE ', ...bodyStructure(treeOf(content()), true)]);
        break;
      case 'rfc822':
        add(['RFC822 ', ...literal(content().raw)]);
        break;
      case 'rfc822.header': {
        const t = treeOf(content());
        add(['RFC822.HEADER ', ...literal(t.raw.subarray(t.start, t.bodyStart))]);
        break;
      }
      case 'rfc822.text': {
        const t = treeOf(content());
        add(['RFC822.TEXT ', ...literal(t.raw.subarray(t.bodyStart, t.end))]);
        break;
      }
      case 'section': {
        const opened = content();
        // BODY[] needs no parse: the whole raw message as stored.
        let bytes =
          item.section.kind === 'all' && item.section.path.length === 0
            ? opened.raw
            : extractSection(treeOf(opened), item.section);
        let label = `BODY[${item.section.label}]`;
        if (item.partial) {
          const [start, length] = item.partial;
          bytes = start >= bytes.length ? Buffer.alloc(0) : bytes.subarray(start, start + length);
          label += `<${start}>`;
        }
        add([`${label} `, ...literal(bytes)]);
        break;
      }
    }
  }
  out.push(')');
  return out;
}
