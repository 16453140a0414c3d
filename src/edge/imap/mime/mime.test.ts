// MIME sections and structures cut from the raw bytes of a nested message.
import { describe, expect, it } from 'vitest';
import { toBuffers } from '../protocol/format.ts';
import { bodyStructure } from './body-structure.ts';
import { envelope } from './envelope.ts';
import { parseMime } from './mime-tree.ts';
import { extractSection, parseSection } from './sections.ts';

const INNER = [
  'From: Inner <inner@example.org>',
  'Subject: inner one',
  'Content-Type: text/plain; charset=us-ascii',
  '',
  'inner body',
  '',
].join('\r\n');

const RAW = Buffer.from(
  [
    'From: "Ann, B." <ann@example.org>',
    'To: bob@example.net, group: c@d.example, e@f.example;',
    'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=',
    'Date: Tue, 03 Mar 2026 10:00:00 +0000',
    'Message-ID: <m1@example.org>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    'preamble',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    'Hällo',
    'second line',
    '--b1',
    'Content-Type: message/rfc822',
    'Content-Disposition: attachment; filename="fwd.eml"',
    '',
    INNER,
    '--b1--',
    'epilogue',
    '',
  ].join('\r\n'),
);

const text = (pieces: ReturnType<typeof envelope>) => Buffer.concat(toBuffers(pieces)).toString('utf8');
const section = (spec: string) => extractSection(parseMime(RAW), parseSection(spec)).toString('utf8');

describe('MIME sections', () => {
  it('cuts parts, headers and embedded messages by part number', () => {
    expect(section('')).toBe(RAW.toString('utf8'));
    expect(section('1')).toBe('Hällo\r\nsecond line');
    expect(section('1.MIME')).toBe(
      'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n',
    );
    expect(section('2')).toBe(INNER);
    expect(section('2.HEADER')).toBe(
      'From: Inner <inner@example.org>\r\nSubject: inner one\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n',
    );
    expect(section('2.TEXT')).toBe('inner body\r\n');
    expect(section('2.1')).toBe('inner body\r\n');
    expect(section('3')).toBe('');
    expect(section('1.2')).toBe('');
    expect(section('HEADER.FIELDS (subject DATE)')).toBe(
      'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nDate: Tue, 03 Mar 2026 10:00:00 +0000\r\n\r\n',
    );
    expect(section('HEADER.FIELDS.NOT (From To Subject Date Message-ID MIME-Version)')).toBe(
      'Content-Type: multipart/mixed; boundary="b1"\r\n\r\n',
    );
    expect(section('TEXT').startsWith('preamble\r\n--b1')).toBe(true);
    expect(parseSection('2.header.fields (x-a x-b)').label).toBe('2.HEADER.FIELDS (X-A X-B)');
    expect(() => parseSection('1.HEADERX')).toThrow(/invalid section/);
    expect(() => parseSection('MIME')).toThrow(/MIME needs a part number/);
    expect(() => parseSection('HEADER.FIELDS ()')).toThrow(/at least one field/);
  });

  it('renders BODYSTRUCTURE, BODY and ENVELOPE', () => {
    const tree = parseMime(RAW);
    expect(text(bodyStructure(tree, true))).toBe(
      '(("text" "plain" ("charset" "utf-8") NIL NIL "8bit" 19 2 NIL NIL NIL NIL)' +
        '("message" "rfc822" NIL NIL NIL "7bit" 111 ' +
        '(NIL "inner one" (("Inner" NIL "inner" "example.org")) (("Inner" NIL "inner" "example.org")) (("Inner" NIL "inner" "example.org")) NIL NIL NIL NIL NIL) ' +
        '("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 12 1 NIL NIL NIL NIL) 5 NIL ("attachment" ("filename" "fwd.eml")) NIL NIL) ' +
        '"mixed" ("boundary" "b1") NIL NIL NIL)',
    );
    expect(text(bodyStructure(tree, false))).toMatch(
      /^\(\("text" "plain" \("charset" "utf-8"\) NIL NIL "8bit" 19 2\)/,
    );
    expect(text(envelope(tree))).toBe(
      '("Tue, 03 Mar 2026 10:00:00 +0000" "=?utf-8?q?Gr=C3=BC=C3=9Fe?=" ' +
        '(("Ann, B." NIL "ann" "example.org")) (("Ann, B." NIL "ann" "example.org")) (("Ann, B." NIL "ann" "example.org")) ' +
        '((NIL NIL "bob" "example.net")(NIL NIL "group" NIL)(NIL NIL "c" "d.example")(NIL NIL "e" "f.example")(NIL NIL NIL NIL)) ' +
        'NIL NIL NIL "<m1@example.org>")',
    );
  });

  it('survives a message without a header/body split and a multipart without its boundary', () => {
    const bare = parseMime(Buffer.from('no header block at all'));
    expect(bare.type).toBe('text');
    const broken = parseMime(Buffer.from('Content-Type: multipart/mixed\r\n\r\nbody\r\n'));
    expect(text(bodyStructure(broken, false))).toBe('("multipart" "mixed" NIL NIL NIL "7bit" 6)');
  });
});
