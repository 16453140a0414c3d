// Tokenizing one IMAP command (RFC 3501 §9 grammar, loosely): the text of
// its lines with the literals that followed `{n}` / `{n+}` markers already
// read. Tokens: atoms (fetch attributes like `BODY.PEEK[HEADER.FIELDS (A)]<0.9>`
// stay one atom, brackets and all), strings (quoted or literal, as bytes),
// NIL and parenthesized lists. Anything malformed is an ImapSyntaxError,
// answered with BAD.

export type Token =
  | { t: 'atom'; v: string }
  | { t: 'string'; v: Buffer; literal: boolean }
  | { t: 'nil' }
  | { t: 'list'; v: Token[] };

/** The text of a command with its literals, in the order they came. */
export interface CommandParts {
  /** Line texts; literal i sits between text[i] and text[i + 1]. */
  text: Buffer[];
  literals: Buffer[];
}

export class ImapSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImapSyntaxError';
  }
}

const MAX_DEPTH = 32;
const MAX_TOKENS = 100_000;

// ATOM-CHAR: any CHAR except atom-specials ( ) { SP CTL % * " \ ]
// `%` and `*` are allowed here because LIST patterns and sequence sets use
// them, and `\` because flags (`\Seen`) are read as atoms.
function isAtomChar(c: number): boolean {
  return c > 0x20 && c < 0x7f && c !== 0x28 && c !== 0x29 && c !== 0x7b && c !== 0x22;
}

export function tokenize(parts: CommandParts): Token[] {
  const stack: Token[][] = [[]];
  let count = 0;
  const push = (tok: Token) => {
    if (++count > MAX_TOKENS) throw new ImapSyntaxError('too many arguments');
    (stack[stack.length - 1] as Token[]).push(tok);
  };
  for (let seg = 0; seg < parts.text.length; seg++) {
    const s = parts.text[seg] as Buffer;
    let i = 0;
    let expectSpace = false;
    while (i < s.length) {
      const c = s[i] as number;
      if (c === 0x20) {
        i++;
        expectSpace = false;
        continue;
      }
      if (c === 0x29) {
        // ')'
        if (stack.length === 1) throw new ImapSyntaxError('unbalanced )');
        const list = stack.pop() as Token[];
        push({ t: 'list', v: list });
        i++;
        expectSpace = true;
        continue;
      }
      if (expectSpace) throw new ImapSyntaxError('missing space between arguments');
      if (c === 0x28) {
        if (stack.length > MAX_DEPTH) throw new ImapSyntaxError('lists nested too deeply');
        stack.push([]);
        i++;
        continue;
      }
      if (c === 0x22) {
        const { value, end } = readQuoted(s, i);
        push({ t: 'string', v: value, literal: false });
        i = end;
        expectSpace = true;
        continue;
      }
      if (c === 0x7b) {
        const m = /^\{(\d{1,10})(\+?)\}$/.exec(s.subarray(i).toString('latin1'));
        if (!m) throw new ImapSyntaxError('a literal marker must end its line: {n} or {n+}');
        const lit = parts.literals[seg];
        if (!lit || lit.length !== Number(m[1])) throw new ImapSyntaxError('literal length mismatch');
        push({ t: 'string', v: lit, literal: true });
        i = s.length;
        expectSpace = true;
        continue;
      }
      if (!isAtomChar(c) && c !== 0x5d) {
        throw new ImapSyntaxError(`unexpected character 0x${c.toString(16).padStart(2, '0')}`);
      }
      const end = readAtom(s, i);
      const atom = s.subarray(i, end).toString('latin1');
      push(atom.toUpperCase() === 'NIL' ? { t: 'nil' } : { t: 'atom', v: atom });
      i = end;
      expectSpace = true;
    }
  }
  if (stack.length !== 1) throw new ImapSyntaxError('unbalanced (');
  return stack[0] as Token[];
}

function readQuoted(s: Buffer, start: number): { value: Buffer; end: number } {
  const out: number[] = [];
  let i = start + 1;
  while (i < s.length) {
    const c = s[i] as number;
    if (c === 0x22) return { value: Buffer.from(out), end: i + 1 };
    if (c === 0x5c) {
      const n = s[i + 1];
      if (n !== 0x22 && n !== 0x5c)
        throw new ImapSyntaxError('only \\" and \\\\ may be escaped in a quoted string');
      out.push(n);
      i += 2;
      continue;
    }
    if (c === 0x0d || c === 0x0a || c === 0)
      throw new ImapSyntaxError('CR, LF and NUL are not allowed in a quoted string');
    out.push(c);
    i++;
  }
  throw new ImapSyntaxError('unterminated quoted string');
}

/** An atom, with `[...]` (may hold spaces and lists) and a `<...>` partial kept inside it. */
function readAtom(s: Buffer, start: number): number {
  let i = start;
  while (i < s.length) {
    const c = s[i] as number;
    if (c === 0x5b) {
      // '[' … ']' with nesting of parentheses allowed inside
      const close = s.indexOf(0x5d, i + 1);
      if (close < 0) throw new ImapSyntaxError('unterminated [');
      i = close + 1;
      continue;
    }
    if (c === 0x3c && i > start && s[i - 1] === 0x5d) {
      const close = s.indexOf(0x3e, i + 1);
      if (close < 0) throw new ImapSyntaxError('unterminated <');
      i = close + 1;
      continue;
    }
    if (!isAtomChar(c) && c !== 0x5d) break;
    i++;
  }
  return i;
}
