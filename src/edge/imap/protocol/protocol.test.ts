// The IMAP tokenizer, modified UTF-7, sequence sets and dates.
import { describe, expect, it } from 'vitest';
import { parseDateTime, parseSearchDate } from './dates.ts';
import { decodeMutf7, encodeMutf7 } from './mutf7.ts';
import { formatSequenceSet, parseSequenceSet } from './sequence-set.ts';
import { tokenize } from './tokens.ts';

const parts = (...text: string[]) => ({
  text: text.map((t) => Buffer.from(t, 'latin1')),
  literals: [] as Buffer[],
});

describe('tokenize', () => {
  it('reads atoms, quoted strings, NIL, lists, literals and fetch attributes', () => {
    const toks = tokenize({
      text: [
        Buffer.from('a1 FETCH 1:* (UID BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]<0.100> "q \\"x\\"" NIL {3}'),
        Buffer.from(')'),
      ],
      literals: [Buffer.from('abc')],
    });
    expect(toks[0]).toEqual({ t: 'atom', v: 'a1' });
    const list = toks[3];
    if (list?.t !== 'list') throw new Error('no list');
    expect(list.v.map((t) => (t.t === 'string' ? t.v.toString() : t.t === 'atom' ? t.v : t.t))).toEqual([
      'UID',
      'BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]<0.100>',
      'q "x"',
      'nil',
      'abc',
    ]);
    expect(tokenize(parts('a STORE 1 +FLAGS (\\Seen $Label)'))[4]).toEqual({
      t: 'list',
      v: [
        { t: 'atom', v: '\\Seen' },
        { t: 'atom', v: '$Label' },
      ],
    });
  });

  it('refuses what is malformed', () => {
    expect(() => tokenize(parts('a LOGIN "x'))).toThrow(/unterminated/);
    expect(() => tokenize(parts('a X (b'))).toThrow(/unbalanced \(/);
    expect(() => tokenize(parts('a X b)'))).toThrow(/unbalanced \)/);
    expect(() => tokenize(parts('a X "a\\b"'))).toThrow(/escaped/);
    expect(() => tokenize(parts('a X {3}'))).toThrow(/literal length mismatch/);
    expect(() => tokenize(parts('a X "a""b"'))).toThrow(/missing space/);
    expect(() => tokenize(parts(`a X ${'('.repeat(40)}`))).toThrow(/nested too deeply/);
  });
});

describe('modified UTF-7', () => {
  it('round-trips and matches RFC 3501 examples', () => {
    expect(encodeMutf7('~peter/mail/台北/日本語')).toBe('~peter/mail/&U,BTFw-/&ZeVnLIqe-');
    expect(decodeMutf7('~peter/mail/&U,BTFw-/&ZeVnLIqe-')).toBe('~peter/mail/台北/日本語');
    expect(encodeMutf7('A&B')).toBe('A&-B');
    expect(decodeMutf7('A&-B')).toBe('A&B');
    for (const name of ['Entwürfe', 'Gesendete Objekte', '📧 mail', 'Ünïcödé/子']) {
      expect(decodeMutf7(encodeMutf7(name))).toBe(name);
    }
    expect(() => decodeMutf7('&Jjo')).toThrow(/unterminated/);
    expect(() => decodeMutf7('&2D0-')).toThrow(/invalid/);
  });
});

describe('sequence sets and dates', () => {
  it('parses sets with * and reversed ranges; formats compactly', () => {
    expect(parseSequenceSet('1:3,7,9:*', 12)).toEqual([
      [1, 3],
      [7, 7],
      [9, 12],
    ]);
    expect(parseSequenceSet('5:2', 9)).toEqual([[2, 5]]);
    expect(() => parseSequenceSet('0', 1)).toThrow();
    expect(() => parseSequenceSet('1:x', 1)).toThrow();
    expect(formatSequenceSet([1, 2, 3, 5, 7, 8])).toBe('1:3,5,7:8');
  });

  it('parses date-time and search dates', () => {
    expect(parseDateTime('17-Jul-1996 02:44:25 -0700')).toBe(Date.UTC(1996, 6, 17, 9, 44, 25));
    expect(parseDateTime(' 1-Feb-2026 00:00:00 +0100')).toBe(Date.UTC(2026, 0, 31, 23, 0, 0));
    expect(parseSearchDate('1-feb-1994')).toBe(Date.UTC(1994, 1, 1));
    expect(() => parseDateTime('2026-01-01')).toThrow();
    expect(() => parseSearchDate('32-Jan-2026')).toThrow();
  });
});
