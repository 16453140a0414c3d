// SEARCH criteria (RFC 3501 §6.4.4) into a tree. Strings are decoded in the
// declared charset: US-ASCII and UTF-8 only (anything else answers
// NO [BADCHARSET]); bytes that are not valid in it are a syntax error, so a
// crafted string can never match by being silently replaced.
import { parseSearchDate } from '../protocol/dates.ts';
import { parseSequenceSet } from '../protocol/sequence-set.ts';
import { ImapSyntaxError, type Token } from '../protocol/tokens.ts';

export type SearchKey =
  | { op: 'all' }
  | { op: 'flag'; flag: string; present: boolean }
  | { op: 'none' }
  | { op: 'header'; field: string; value: string }
  | { op: 'addr'; field: 'from' | 'to' | 'cc' | 'bcc'; value: string }
  | { op: 'subject'; value: string }
  | { op: 'body'; value: string }
  | { op: 'text'; value: string }
  | { op: 'date'; which: 'internal' | 'sent'; cmp: 'before' | 'on' | 'since'; day: number }
  | { op: 'size'; cmp: 'larger' | 'smaller'; n: number }
  | { op: 'set'; uid: boolean; text: string }
  /** RFC 7162: messages whose MODSEQ is at least `n`. */
  | { op: 'modseq'; n: number }
  | { op: 'not'; key: SearchKey }
  | { op: 'or'; a: SearchKey; b: SearchKey }
  | { op: 'and'; keys: SearchKey[] };

export class BadCharsetError extends Error {
  constructor(readonly charset: string) {
    super(`charset ${charset} is not supported`);
    this.name = 'BadCharsetError';
  }
}

export const SEARCH_CHARSETS = ['US-ASCII', 'UTF-8'];

const FLAG_KEYS: Record<string, [string, boolean]> = {
  ANSWERED: ['\\Answered', true],
  DELETED: ['\\Deleted', true],
  DRAFT: ['\\Draft', true],
  FLAGGED: ['\\Flagged', true],
  SEEN: ['\\Seen', true],
  UNANSWERED: ['\\Answered', false],
  UNDELETED: ['\\Deleted', false],
  UNDRAFT: ['\\Draft', false],
  UNFLAGGED: ['\\Flagged', false],
  UNSEEN: ['\\Seen', false],
};

const MAX_KEYS = 1000;

class Reader {
  private pos = 0;
  count = 0;
  constructor(
    private readonly tokens: Token[],
    readonly charset: string,
  ) {}
  get done() {
    return this.pos >= this.tokens.length;
  }
  peek(): Token | undefined {
    return this.tokens[this.pos];
  }
  next(what: string): Token {
    const t = this.tokens[this.pos++];
    if (!t) throw new ImapSyntaxError(`SEARCH: missing ${what}`);
    return t;
  }
  atom(what: string): string {
    const t = this.next(what);
    if (t.t !== 'atom') throw new ImapSyntaxError(`SEARCH: expected ${what}`);
    return t.v;
  }
  string(what: string): string {
    const t = this.next(what);
    let bytes: Buffer;
    if (t.t === 'string') bytes = t.v;
    else if (t.t === 'atom') bytes = Buffer.from(t.v, 'latin1');
    else if (t.t === 'nil') bytes = Buffer.from('NIL');
    else throw new ImapSyntaxError(`SEARCH: expected ${what}`);
    return decode(bytes, this.charset, what);
  }
  number(what: string): number {
    const v = this.atom(what);
    if (!/^\d{1,15}$/.test(v)) throw new ImapSyntaxError(`SEARCH: ${what} must be a number`);
    return Number(v);
  }
}

function decode(bytes: Buffer, charset: string, what: string): string {
  if (charset === 'US-ASCII') {
    for (const c of bytes) if (c > 0x7f) throw new ImapSyntaxError(`SEARCH: ${what} is not US-ASCII`);
    return bytes.toString('latin1');
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ImapSyntaxError(`SEARCH: ${what} is not valid UTF-8`);
  }
}

function parseKey(r: Reader): SearchKey {
  if (++r.count > MAX_KEYS) throw new ImapSyntaxError('SEARCH: too many criteria');
  const tok = r.next('search key');
  if (tok.t === 'list') {
    if (tok.v.length === 0) throw new ImapSyntaxError('SEARCH: empty parenthesized criteria');
    const inner = new Reader(tok.v, r.charset);
    inner.count = r.count;
    const keys: SearchKey[] = [];
    while (!inner.done) keys.push(parseKey(inner));
    r.count = inner.count;
    return keys.length === 1 ? (keys[0] as SearchKey) : { op: 'and', keys };
  }
  if (tok.t !== 'atom') throw new ImapSyntaxError('SEARCH: expected a search key');
  const key = tok.v.toUpperCase();
  const flag = FLAG_KEYS[key];
  if (flag) return { op: 'flag', flag: flag[0], present: flag[1] };
  switch (key) {
    case 'ALL':
    case 'OLD':
      return { op: 'all' };
    // No message is \Recent on this server (docs/imap-pop3.md).
    case 'NEW':
    case 'RECENT':
      return { op: 'none' };
    case 'KEYWORD':
    case 'UNKEYWORD':
      return { op: 'flag', flag: r.atom('keyword'), present: key === 'KEYWORD' };
    case 'FROM':
    case 'TO':
    case 'CC':
    case 'BCC':
      return { op: 'addr', field: key.toLowerCase() as 'from', value: r.string(key) };
    case 'SUBJECT':
      return { op: 'subject', value: r.string('SUBJECT') };
    case 'BODY':
      return { op: 'body', value: r.string('BODY') };
    case 'TEXT':
      return { op: 'text', value: r.string('TEXT') };
    case 'HEADER': {
      const field = r.string('header field name');
      if (!/^[\x21-\x39\x3b-\x7e]+$/.test(field))
        throw new ImapSyntaxError('SEARCH: invalid header field name');
      return { op: 'header', field: field.toLowerCase(), value: r.string('HEADER value') };
    }
    case 'BEFORE':
    case 'ON':
    case 'SINCE':
      return {
        op: 'date',
        which: 'internal',
        cmp: key.toLowerCase() as 'on',
        day: parseSearchDate(dateArg(r)),
      };
    case 'SENTBEFORE':
    case 'SENTON':
    case 'SENTSINCE':
      return {
        op: 'date',
        which: 'sent',
        cmp: key.slice(4).toLowerCase() as 'on',
        day: parseSearchDate(dateArg(r)),
      };
    case 'LARGER':
    case 'SMALLER':
      return { op: 'size', cmp: key.toLowerCase() as 'larger', n: r.number(key) };
    case 'UID':
      return { op: 'set', uid: true, text: checkSet(r.atom('UID set')) };
    case 'MODSEQ': {
      // MODSEQ ["<entry name>" <priv|shared|all>] <mod-sequence>: this server
      // keeps one mod-sequence per message, so an entry name narrows nothing.
      if (r.peek()?.t === 'string') {
        r.string('MODSEQ entry name');
        const type = r.atom('MODSEQ entry type').toLowerCase();
        if (!['priv', 'shared', 'all'].includes(type))
          throw new ImapSyntaxError('SEARCH: MODSEQ entry type must be priv, shared or all');
      }
      return { op: 'modseq', n: r.number('MODSEQ') };
    }
    case 'NOT':
      return { op: 'not', key: parseKey(r) };
    case 'OR':
      return { op: 'or', a: parseKey(r), b: parseKey(r) };
    default:
      if (/^[0-9:*,]+$/.test(key)) return { op: 'set', uid: false, text: checkSet(key) };
      throw new ImapSyntaxError(`SEARCH: unknown search key ${key.slice(0, 40)}`);
  }
}

function dateArg(r: Reader): string {
  return r.string('date');
}

function checkSet(text: string): string {
  parseSequenceSet(text, 1);
  return text;
}

/**
 * Parses the SEARCH arguments. `CHARSET x` may come first; unsupported ones
 * throw BadCharsetError. Several keys are ANDed.
 */
/** Whether a MODSEQ criterion appears anywhere (the answer then carries the highest MODSEQ). */
export function usesModseq(key: SearchKey): boolean {
  switch (key.op) {
    case 'modseq':
      return true;
    case 'not':
      return usesModseq(key.key);
    case 'or':
      return usesModseq(key.a) || usesModseq(key.b);
    case 'and':
      return key.keys.some(usesModseq);
    default:
      return false;
  }
}

export function parseSearch(tokens: Token[]): SearchKey {
  let rest = tokens;
  let charset = 'US-ASCII';
  const first = tokens[0];
  if (first?.t === 'atom' && first.v.toUpperCase() === 'CHARSET') {
    const cs = tokens[1];
    if (!cs || (cs.t !== 'atom' && cs.t !== 'string'))
      throw new ImapSyntaxError('SEARCH: CHARSET needs a name');
    const name = (cs.t === 'atom' ? cs.v : cs.v.toString('latin1')).toUpperCase();
    if (!SEARCH_CHARSETS.includes(name))
      throw new BadCharsetError(name.replace(/[^\x21-\x7e]/g, '?').slice(0, 64));
    charset = name;
    rest = tokens.slice(2);
  }
  if (rest.length === 0) throw new ImapSyntaxError('SEARCH needs at least one search key');
  const r = new Reader(rest, charset);
  const keys: SearchKey[] = [];
  while (!r.done) keys.push(parseKey(r));
  return keys.length === 1 ? (keys[0] as SearchKey) : { op: 'and', keys };
}
