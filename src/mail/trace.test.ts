import { describe, expect, it } from 'vitest';
import {
  authservIdOf,
  deliveredMessage,
  type MxTrace,
  receivedField,
  transmissionType,
  withoutOwnAuthResults,
} from './trace.ts';

const mx: MxTrace = {
  helo: 'mail.remote.example',
  reverseName: 'out1.remote.example',
  ip: '192.0.2.7',
  by: 'mx.mail.test',
  protocol: 'ESMTPS',
  tls: { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
  authResults: 'mx.mail.test;\r\n spf=pass smtp.mailfrom=a@remote.example',
};

describe('transmissionType', () => {
  it('names the RFC 3848 and RFC 6531 protocol types', () => {
    expect(transmissionType({ ehlo: false, tls: false, auth: false })).toBe('SMTP');
    expect(transmissionType({ ehlo: true, tls: false, auth: false })).toBe('ESMTP');
    expect(transmissionType({ ehlo: true, tls: true, auth: false })).toBe('ESMTPS');
    expect(transmissionType({ ehlo: true, tls: false, auth: true })).toBe('ESMTPA');
    expect(transmissionType({ ehlo: true, tls: true, auth: true })).toBe('ESMTPSA');
    // TLS and AUTH are ESMTP extensions: never "SMTPS".
    expect(transmissionType({ ehlo: false, tls: true, auth: false })).toBe('ESMTPS');
    expect(transmissionType({ ehlo: true, tls: true, auth: false, utf8: true })).toBe('UTF8SMTPS');
  });
});

describe('receivedField', () => {
  const date = new Date(Date.UTC(2025, 6, 1, 9, 5, 3));

  it('writes from, the TLS comment, by, with, id and for like Postfix', () => {
    expect(receivedField(mx, { id: 'Q1', recipient: 'bob@mail.test', date })).toBe(
      'Received: from mail.remote.example (out1.remote.example [192.0.2.7])\r\n' +
        '\t(using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384)\r\n' +
        '\tby mx.mail.test (Sealpost) with ESMTPS id Q1\r\n' +
        '\tfor <bob@mail.test>; Tue, 01 Jul 2025 09:05:03 +0000\r\n',
    );
  });

  it('says unknown without a confirmed name, tags IPv6 and defangs a hostile HELO', () => {
    const out = receivedField(
      { ...mx, reverseName: undefined, ip: '2001:db8::1', helo: 'x; (evil)\u00e9', tls: undefined },
      { id: 'Q2', recipient: 'bob@mail.test', date },
    );
    expect(out.split('\r\n')[0]).toBe('Received: from x???evil?? (unknown [IPv6:2001:db8::1])');
    // One `;` only: the one before the date.
    expect(out.split(';').length).toBe(2);
  });
});

describe('withoutOwnAuthResults', () => {
  const body = 'Authentication-Results: mx.mail.test; dkim=pass\r\n\r\nbody stays\r\n';
  const msg = (head: string) => Buffer.from(`${head}\r\n${body}`, 'latin1');

  it('removes every field claiming our authserv-id, however it is spelled, and keeps the rest', () => {
    const head =
      'Authentication-Results: MX.Mail.Test.; spf=pass\r\n' +
      'Subject: caf\xe9\r\n' +
      'Authentication-Results: (forged) mx.mail.test 1;\r\n\tdkim=pass\r\n header.d=x.example\r\n' +
      'Authentication-Results: "mx.mail.test"; dmarc=pass\r\n' +
      'Authentication-Results: other.example; spf=fail\r\n' +
      'Authentication-Results: mx.mail.test.evil.example; spf=pass\r\n' +
      'From: a@remote.example\r\n';
    const { message, removed } = withoutOwnAuthResults(msg(head), 'mx.mail.test');
    expect(removed).toBe(3);
    expect(message.toString('latin1')).toBe(
      'Subject: caf\xe9\r\n' +
        'Authentication-Results: other.example; spf=fail\r\n' +
        'Authentication-Results: mx.mail.test.evil.example; spf=pass\r\n' +
        'From: a@remote.example\r\n' +
        `\r\n${body}`,
    );
  });

  it('returns the very same bytes when nothing is ours, and never looks into the body', () => {
    const raw = msg('From: a@remote.example\r\n');
    expect(withoutOwnAuthResults(raw, 'mx.mail.test').message).toBe(raw);
    const headless = Buffer.from(`\r\n${body}`);
    expect(withoutOwnAuthResults(headless, 'mx.mail.test').message).toBe(headless);
  });

  it('reads the authserv-id past comments and quotes', () => {
    expect(authservIdOf(' (a (nested) comment) Host.Example;spf=pass')).toBe('host.example');
    expect(authservIdOf(' "host.example" 1; none')).toBe('host.example');
  });
});

describe('deliveredMessage', () => {
  const raw = Buffer.from('Authentication-Results: mx.mail.test; spf=pass\r\nSubject: s\r\n\r\nhi\r\n');

  it('puts Return-Path, our A-R and our Received on top of the message without forged fields', () => {
    const out = deliveredMessage(raw, {
      envelopeFrom: '',
      recipient: 'bob@mail.test',
      id: 'Q1',
      receivedAt: Date.UTC(2025, 6, 1),
      hostname: 'mx.mail.test',
      mx,
    }).toString();
    const names = out
      .split('\r\n\r\n')[0]
      ?.split('\r\n')
      .filter((l) => /^\S/.test(l))
      .map((l) => l.slice(0, l.indexOf(':')));
    expect(names).toEqual(['Return-Path', 'Authentication-Results', 'Received', 'Subject']);
    expect(out.startsWith('Return-Path: <>\r\nAuthentication-Results: mx.mail.test;\r\n spf=pass')).toBe(
      true,
    );
    expect(out.endsWith('\r\n\r\nhi\r\n')).toBe(true);
  });

  it('without MX facts (submitted mail, older jobs) adds Return-Path only', () => {
    const out = deliveredMessage(raw, {
      envelopeFrom: 'ann@mail.test',
      recipient: 'bob@mail.test',
      id: 'Q1',
      receivedAt: 0,
      hostname: 'mx.mail.test',
    }).toString();
    expect(out).toBe('Return-Path: <ann@mail.test>\r\nSubject: s\r\n\r\nhi\r\n');
  });
});
