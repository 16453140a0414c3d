import { describe, expect, it } from 'vitest';
import { headerFacts, rfc5322Date, submissionHeaders } from './headers.ts';

const raw = (s: string) => Buffer.from(s, 'utf8');

describe('headerFacts', () => {
  it('reads every address of a folded From field, with display names and groups', () => {
    const facts = headerFacts(
      raw(
        'Subject: x\r\nFrom: "Doe, Jane" <jane@a.example>,\r\n\tbob@b.example, team: c@c.example;\r\n\r\nFrom: body@x\r\n',
      ),
    );
    expect(facts).toEqual({
      from: ['jane@a.example', 'bob@b.example', 'c@c.example'],
      fromFields: 1,
      hasDate: false,
      hasMessageId: false,
    });
  });

  it('counts repeated From fields, keeps UTF-8 addresses, sees Date and Message-ID in any case', () => {
    const facts = headerFacts(
      raw(
        'from: =?utf-8?q?J=C3=B6rg?= <jörg@bücher.example>\r\nFROM: x@y.example\r\ndate: now\r\nMESSAGE-ID: <a@b>\r\n\r\n',
      ),
    );
    expect(facts.fromFields).toBe(2);
    expect(facts.from).toEqual(['jörg@bücher.example', 'x@y.example']);
    expect(facts.hasDate).toBe(true);
    expect(facts.hasMessageId).toBe(true);
  });

  it('finds no From in a message without a header section', () => {
    expect(headerFacts(raw('\r\nFrom: a@b.example\r\n')).fromFields).toBe(0);
  });
});

describe('submissionHeaders', () => {
  it('puts a Received field on top and adds only the missing Message-ID and Date', () => {
    const date = new Date(Date.UTC(2025, 6, 1, 9, 5, 3));
    const out = submissionHeaders({
      hostname: 'mx.example',
      msgid: 'M1',
      protocol: 'ESMTPSA',
      date,
      facts: { from: [], fromFields: 1, hasDate: true, hasMessageId: false },
    });
    expect(out).toBe(
      'Received: from mx.example (authenticated submission, client address withheld)\r\n' +
        '\tby mx.example (Sealpost) with ESMTPSA id M1;\r\n\tTue, 01 Jul 2025 09:05:03 +0000\r\n' +
        'Message-ID: <M1@mx.example>\r\n',
    );
    expect(rfc5322Date(new Date(Date.UTC(2024, 1, 29, 23, 59, 59)))).toBe('Thu, 29 Feb 2024 23:59:59 +0000');
  });
});
