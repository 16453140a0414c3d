// Search in the page over opened messages: the subject, the sender's and
// recipients' names and addresses, and the text. Every word of the query
// must appear (case- and accent-insensitive). Nothing is indexed or stored:
// what is searched is what this tab has opened (messages.ts).
import type { ParsedMail } from './mail/parse.ts';

function fold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

const folded = new WeakMap<ParsedMail, string>();

function haystack(m: ParsedMail): string {
  let hit = folded.get(m);
  if (hit === undefined) {
    const people = [m.from, ...m.to].flatMap((a) => (a ? [a.name, a.address] : []));
    hit = fold([m.subject, ...people, m.text ?? ''].join('\n'));
    folded.set(m, hit);
  }
  return hit;
}

export function matchesQuery(m: ParsedMail, query: string): boolean {
  const words = fold(query).split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = haystack(m);
  return words.every((w) => text.includes(w));
}
