import { describe, expect, it } from 'vitest';
import { dotStuff, topOf } from './message-text.ts';

const stuffed = (s: string) => Buffer.concat([...dotStuff(Buffer.from(s))]).toString();

describe('POP3 message text', () => {
  it('byte-stuffs lines that start with a dot and ends with CRLF', () => {
    expect(stuffed('.a\r\nb\r\n.\r\n..c\r\n')).toBe('..a\r\nb\r\n..\r\n...c\r\n');
    expect(stuffed('no final newline')).toBe('no final newline\r\n');
    expect(stuffed('')).toBe('\r\n');
  });

  it('cuts the header and the first lines of the body', () => {
    const raw = Buffer.from('A: 1\r\nB: 2\r\n\r\nl1\r\nl2\r\nl3\r\n');
    expect(topOf(raw, 0).toString()).toBe('A: 1\r\nB: 2\r\n\r\n');
    expect(topOf(raw, 2).toString()).toBe('A: 1\r\nB: 2\r\n\r\nl1\r\nl2\r\n');
    expect(topOf(raw, 99).toString()).toBe(raw.toString());
  });
});
