// Evaluating SEARCH criteria against the session's decrypted view. Flag,
// size, date and set criteria need no message text; header and body
// criteria open the message (through the session cache) and match
// case-insensitively on decoded text (encoded words, quoted-printable,
// base64 and charsets decoded by mailparser).
import { type ParsedMail, simpleParser } from 'mailparser';
import { dayOf } from '../protocol/dates.ts';
import { inRanges, parseSequenceSet } from '../protocol/sequence-set.ts';
import type { SearchKey } from './search-parse.ts';

export interface SearchDoc {
  /** Lowercased field name → decoded values (and the raw text). */
  headers: Map<string, string[]>;
  subject: string;
  body: string;
  /** UTC midnight of the Date header's day, when it parses. */
  sentDay?: number;
}

export interface SearchTarget {
  seq: number;
  uid: number;
  flags: string[];
  modseq: number;
  internalDate: number;
  size(): Promise<number>;
  doc(): Promise<SearchDoc>;
}

function norm(s: string): string {
  return s.normalize('NFC').toLowerCase();
}

function headerValueText(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (typeof v === 'string') return [v];
  if (v instanceof Date) return [v.toUTCString()];
  if (Array.isArray(v)) return v.flatMap(headerValueText);
  if (typeof v === 'object') {
    const o = v as { text?: unknown; value?: unknown; params?: Record<string, unknown> };
    if (typeof o.text === 'string') return [o.text];
    const out: string[] = [];
    if (typeof o.value === 'string') out.push(o.value);
    if (o.params) for (const p of Object.values(o.params)) if (typeof p === 'string') out.push(p);
    return out;
  }
  return [String(v)];
}

export async function buildSearchDoc(raw: Buffer): Promise<SearchDoc> {
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(raw, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true });
  } catch {
    return { headers: new Map(), subject: '', body: raw.toString('latin1') };
  }
  const headers = new Map<string, string[]>();
  for (const line of parsed.headerLines) {
    const key = line.key.toLowerCase();
    const rawValue = line.line.slice(line.line.indexOf(':') + 1).trim();
    const list = headers.get(key) ?? [];
    list.push(norm(rawValue));
    headers.set(key, list);
  }
  for (const [key, value] of parsed.headers) {
    const list = headers.get(key) ?? [];
    for (const t of headerValueText(value)) list.push(norm(t));
    headers.set(key, list);
  }
  const html = typeof parsed.html === 'string' ? parsed.html.replace(/<[^>]*>/g, ' ') : '';
  return {
    headers,
    subject: norm(parsed.subject ?? ''),
    body: norm(`${parsed.text ?? ''}\n${html}`),
    sentDay: parsed.date && !Number.isNaN(parsed.date.getTime()) ? dayOf(parsed.date.getTime()) : undefined,
  };
}

function headerMatches(doc: SearchDoc, field: string, value: string): boolean {
  const values = doc.headers.get(field);
  if (!values) return false;
  if (value === '') return true;
  const needle = norm(value);
  return values.some((v) => v.includes(needle));
}

function compareDay(day: number | undefined, cmp: 'before' | 'on' | 'since', target: number): boolean {
  if (day === undefined) return false;
  if (cmp === 'before') return day < target;
  if (cmp === 'on') return day === target;
  return day >= target;
}

/** Whether one message matches; `maxSeq`/`maxUid` are what `*` stands for. */
export async function matches(
  key: SearchKey,
  m: SearchTarget,
  limits: { maxSeq: number; maxUid: number },
): Promise<boolean> {
  switch (key.op) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'flag': {
      const has = m.flags.some((f) => f.toLowerCase() === key.flag.toLowerCase());
      return has === key.present;
    }
    case 'set':
      return key.uid
        ? inRanges(m.uid, parseSequenceSet(key.text, limits.maxUid))
        : inRanges(m.seq, parseSequenceSet(key.text, limits.maxSeq));
    case 'modseq':
      return m.modseq >= key.n;
    case 'size': {
      const size = await m.size();
      return key.cmp === 'larger' ? size > key.n : size < key.n;
    }
    case 'date':
      return key.which === 'internal'
        ? compareDay(dayOf(m.internalDate), key.cmp, key.day)
        : compareDay((await m.doc()).sentDay, key.cmp, key.day);
    case 'header':
      return headerMatches(await m.doc(), key.field, key.value);
    case 'addr':
      return headerMatches(await m.doc(), key.field, key.value);
    case 'subject':
      return (await m.doc()).subject.includes(norm(key.value));
    case 'body':
      return (await m.doc()).body.includes(norm(key.value));
    case 'text': {
      const doc = await m.doc();
      const needle = norm(key.value);
      if (doc.body.includes(needle)) return true;
      for (const values of doc.headers.values()) if (values.some((v) => v.includes(needle))) return true;
      return false;
    }
    case 'not':
      return !(await matches(key.key, m, limits));
    case 'or':
      return (await matches(key.a, m, limits)) || (await matches(key.b, m, limits));
    case 'and':
      for (const k of key.keys) if (!(await matches(k, m, limits))) return false;
      return true;
  }
}
