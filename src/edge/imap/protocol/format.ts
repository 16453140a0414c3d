// Writing IMAP data: strings as quoted strings when they are short 7-bit
// text, else as literals (8-bit, CR/LF, long); NIL; parenthesized lists.
// A response is built as a list of Buffers so message bytes are never
// copied into one big string.

export type Piece = Buffer | string;

const QUOTED_MAX = 1024;

function quotable(b: Buffer): boolean {
  if (b.length > QUOTED_MAX) return false;
  for (const c of b) if (c < 0x20 || c > 0x7e) return false;
  return true;
}

/** An IMAP string (quoted or literal) for text or bytes. */
export function str(value: string | Buffer): Piece[] {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  if (quotable(b)) return [`"${b.toString('latin1').replace(/["\\]/g, (c) => `\\${c}`)}"`];
  return [`{${b.length}}\r\n`, b];
}

/** nstring: NIL for null/undefined. */
export function nstr(value: string | Buffer | null | undefined): Piece[] {
  return value === null || value === undefined ? ['NIL'] : str(value);
}

/** A parenthesized list of already formatted items, separated by spaces. */
export function list(items: Piece[][]): Piece[] {
  const out: Piece[] = ['('];
  items.forEach((item, i) => {
    if (i > 0) out.push(' ');
    out.push(...item);
  });
  out.push(')');
  return out;
}

export function toBuffers(pieces: Piece[]): Buffer[] {
  const out: Buffer[] = [];
  let text = '';
  for (const p of pieces) {
    if (typeof p === 'string') text += p;
    else {
      if (text) out.push(Buffer.from(text, 'latin1'));
      text = '';
      out.push(p);
    }
  }
  if (text) out.push(Buffer.from(text, 'latin1'));
  return out;
}
