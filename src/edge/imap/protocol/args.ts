// Reading a command's arguments one by one, with errors that name what was
// expected (answered as BAD).
import { ImapSyntaxError, type Token } from './tokens.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes as UTF-8 text; invalid UTF-8 is a syntax error, never silently replaced. */
export function utf8Text(bytes: Buffer, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ImapSyntaxError(`${what} is not valid UTF-8`);
  }
}

export class Args {
  private pos = 0;

  constructor(private readonly tokens: Token[]) {}

  get done(): boolean {
    return this.pos >= this.tokens.length;
  }

  peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  next(what: string): Token {
    const tok = this.tokens[this.pos];
    if (!tok) throw new ImapSyntaxError(`missing ${what}`);
    this.pos++;
    return tok;
  }

  atom(what: string): string {
    const tok = this.next(what);
    if (tok.t !== 'atom') throw new ImapSyntaxError(`expected ${what}`);
    return tok.v;
  }

  /** An atom or a string, as bytes. */
  astring(what: string): Buffer {
    const tok = this.next(what);
    if (tok.t === 'atom') return Buffer.from(tok.v, 'latin1');
    if (tok.t === 'string') return tok.v;
    if (tok.t === 'nil') return Buffer.from('NIL');
    throw new ImapSyntaxError(`expected ${what}`);
  }

  astringText(what: string): string {
    return utf8Text(this.astring(what), what);
  }

  list(what: string): Token[] {
    const tok = this.next(what);
    if (tok.t !== 'list') throw new ImapSyntaxError(`expected a parenthesized ${what}`);
    return tok.v;
  }

  /** The rest, for commands that parse their own tail (SEARCH, FETCH). */
  rest(): Token[] {
    const out = this.tokens.slice(this.pos);
    this.pos = this.tokens.length;
    return out;
  }

  end(): void {
    if (!this.done) throw new ImapSyntaxError('unexpected extra arguments');
  }
}
