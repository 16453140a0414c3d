// RFC 7162 mod-sequence arguments: the value itself and the one-entry
// modifier lists of FETCH (CHANGEDSINCE n) and STORE (UNCHANGEDSINCE n).
import { ImapSyntaxError, type Token } from './tokens.ts';

/** A mod-sequence as a client writes it: decimal, 63 bits at most (kept below 2^53 here). */
function parseModseq(tok: Token | undefined, what: string): number {
  if (tok?.t !== 'atom' || !/^\d{1,19}$/.test(tok.v))
    throw new ImapSyntaxError(`${what} needs a mod-sequence`);
  const n = Number(tok.v);
  if (!Number.isSafeInteger(n)) throw new ImapSyntaxError(`${what}: bad mod-sequence`);
  return n;
}

/** `(<name> <mod-sequence>)`, the only modifier `command` takes. */
export function modseqModifier(tok: Token, name: string, command: string): number {
  if (tok.t !== 'list' || tok.v.length !== 2) throw new ImapSyntaxError(`expected (${name} <mod-sequence>)`);
  const [label, value] = tok.v;
  if (label?.t !== 'atom' || label.v.toUpperCase() !== name)
    throw new ImapSyntaxError(`the only ${command} modifier is ${name}`);
  return parseModseq(value, name);
}
