// Trace fields in delivered mail, over real sockets: nodemailer (STARTTLS
// or plain) → MX (sender_auth = "spf", DNS double for SPF, DKIM, DMARC and
// PTR) → Redis → pipeline → pind → devnet; each recipient's copy is fetched
// from the gateway, opened with the wallet key and parsed with mailparser:
// Return-Path, Received (HELO, forward-confirmed reverse name, IP, ESMTPS,
// the TLS comment, queue id, `for` that recipient, a date), and
// Authentication-Results with spf/dkim/dmarc=pass for a signed message,
// dkim=neutral (body hash) for a tampered body and dkim=fail for a tampered
// signed header, a forged A-R with our authserv-id removed.
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { FlowProducer } from 'bullmq';
import { dkimSign } from 'mailauth';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { submitDepsFromConfig } from '../../src/edge/submission/from-config.ts';
import { submitMessage } from '../../src/edge/submission/submit.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startDnsDouble } from '../support/doubles/dns-server.ts';
import { deliveredTexts, RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';

const HOST = 'mx.mail.test';

/** mailparser's header values, each field as its own string. */
async function fields(text: string) {
  const parsed = await simpleParser(text);
  const all = (name: string) => [parsed.headers.get(name) ?? []].flat().map(String);
  return { parsed, all };
}

function queueId(response: string): string {
  const m = /queued as (\S+)/.exec(response);
  if (!m?.[1]) throw new Error(`no queue id in ${response}`);
  return m[1];
}

describe('trace fields in delivered mail', () => {
  it('Return-Path, Received and Authentication-Results in each copy; forged results removed; dkim neutral/fail when tampered', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dns = await startDnsDouble({
      'remote.example': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
      '_dmarc.remote.example': { TXT: ['v=DMARC1; p=none'] },
      'sel._domainkey.remote.example': {
        TXT: [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
      },
      '1.0.0.127.in-addr.arpa': { PTR: ['out.remote.example'] },
      'out.remote.example': { A: ['127.0.0.1'] },
    });
    const rig = await startServeRig({ senderAuth: 'spf', resolver: dns.address, mxStarttls: true });
    try {
      const bob = await rig.mail.mailbox();
      const carol = await rig.mail.mailbox();
      const bobAddr = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
      const carolAddr = `${carol.publicKey.toBase58()}@${RIG_DOMAIN}`;

      const original =
        'From: Ann <ann@remote.example>\r\nTo: friends\r\nSubject: traced\r\n' +
        'Message-ID: <traced@remote.example>\r\nDate: Tue, 01 Jul 2025 09:00:00 +0000\r\n' +
        `Authentication-Results: ${HOST.toUpperCase()}; spf=pass; dkim=pass; dmarc=pass\r\n` +
        'Authentication-Results: upstream.example; spf=pass smtp.mailfrom=ann@remote.example\r\n' +
        '\r\nHello there.\r\n';
      const key = {
        signingDomain: 'remote.example',
        selector: 'sel',
        privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      };
      // mailauth signs with each entry of signatureData.
      const signed = await dkimSign(original, { ...key, signatureData: [key] });
      expect(signed.errors).toEqual([]);
      expect(signed.signatures).toMatch(/^DKIM-Signature: /);
      const raw = signed.signatures + original;

      // 1: STARTTLS, EHLO mail.remote.example, signed, two recipients.
      const tlsInfo = await nodemailer
        .createTransport({
          host: '127.0.0.1',
          port: rig.mxPort,
          name: 'mail.remote.example',
          secure: false,
          requireTLS: true,
          tls: { rejectUnauthorized: false },
        })
        .sendMail({ envelope: { from: 'ann@remote.example', to: [bobAddr, carolAddr] }, raw });
      const firstId = queueId(tlsInfo.response);

      // 2: plain ESMTP, the body changed after signing; the PTR name no longer confirms.
      dns.set('out.remote.example', 'A', ['192.0.2.9']);
      await nodemailer
        .createTransport({
          host: '127.0.0.1',
          port: rig.mxPort,
          name: 'mail.remote.example',
          ignoreTLS: true,
        })
        .sendMail({
          envelope: { from: 'ann@remote.example', to: [bobAddr] },
          raw: raw.replace('Hello there.', 'Hello thereX'),
        });

      // 3: a signed header changed after signing.
      await nodemailer
        .createTransport({
          host: '127.0.0.1',
          port: rig.mxPort,
          name: 'mail.remote.example',
          ignoreTLS: true,
        })
        .sendMail({
          envelope: { from: 'ann@remote.example', to: [bobAddr] },
          raw: raw.replace('Subject: traced', 'Subject: traceD'),
        });

      // Bob's copies by content: deliveries run concurrently (and are batched
      // into transactions), so their order on chain need not be the sending order.
      const bobCopies = await deliveredTexts(rig, bob, 3);
      const bobSecond = bobCopies.find((t) => t.includes('Hello thereX'));
      const bobThird = bobCopies.find((t) => t.includes('Subject: traceD'));
      const bobFirst = bobCopies.find((t) => t !== bobSecond && t !== bobThird);
      const [carolFirst] = await deliveredTexts(rig, carol, 1);
      if (!bobFirst || !bobSecond || !bobThird || !carolFirst) throw new Error('missing copies');

      for (const [text, rcpt, other] of [
        [bobFirst, bobAddr, carolAddr],
        [carolFirst, carolAddr, bobAddr],
      ] as const) {
        const { parsed, all } = await fields(text);
        // Return-Path first, then our A-R, then our Received, then the message as sent.
        expect(
          text.startsWith('Return-Path: <ann@remote.example>\r\nAuthentication-Results: mx.mail.test;'),
        ).toBe(true);
        expect(text.endsWith(raw.slice(raw.indexOf('\r\n\r\n')))).toBe(true);
        expect(parsed.headers.get('return-path')).toMatchObject({
          value: [{ address: 'ann@remote.example' }],
        });

        const [received, ...older] = all('received');
        expect(older).toEqual([]);
        expect(received).toMatch(/^from mail\.remote\.example \(out\.remote\.example \[127\.0\.0\.1\]\)/);
        expect(received).toMatch(/\(using TLSv1\.[23] with cipher [A-Z0-9_-]+\)/);
        expect(received).toContain(`by ${HOST} (Sealpost) with ESMTPS id ${firstId}`);
        expect(received).toContain(`for <${rcpt}>;`);
        expect(received).not.toContain(other);
        const date = Date.parse(received?.slice(received.lastIndexOf(';') + 1).trim() ?? '');
        expect(Math.abs(Date.now() - date)).toBeLessThan(120_000);

        // Our result, and the upstream one kept; the forged one with our id is gone.
        const results = all('authentication-results');
        expect(results).toHaveLength(2);
        const ours = results[0] ?? '';
        expect(ours.startsWith(`${HOST};`)).toBe(true);
        expect(ours).toMatch(/dkim=pass header\.i=@remote\.example header\.s=sel /);
        expect(ours).toMatch(/spf=pass [^;]*smtp\.mailfrom=ann@remote\.example/);
        expect(ours).toMatch(/dmarc=pass [^;]*header\.from=remote\.example/);
        expect(results[1]).toMatch(/^upstream\.example;/);
        expect(text.toLowerCase().match(/^authentication-results: mx\.mail\.test/gm)).toHaveLength(1);
      }

      const second = await fields(bobSecond);
      const [received2] = second.all('received');
      expect(received2).toMatch(/^from mail\.remote\.example \(unknown \[127\.0\.0\.1\]\)/);
      expect(received2).toMatch(/with ESMTP id /);
      expect(received2).not.toContain('using TLS');
      const [ours2] = second.all('authentication-results');
      // mailauth's verdict for a body hash mismatch (RFC 6376 §6.1.3), as Gmail writes it.
      expect(ours2).toMatch(/dkim=neutral \(body hash did not verify\) header\.i=@remote\.example/);
      expect(ours2).toMatch(/spf=pass /);
      // SPF still aligns with the From domain.
      expect(ours2).toMatch(/dmarc=pass /);

      const [ours3] = (await fields(bobThird)).all('authentication-results');
      expect(ours3).toMatch(/dkim=fail \(bad signature\) header\.i=@remote\.example/);
    } finally {
      await rig.stop();
      await dns.close();
    }
  }, 90_000);

  it('submitted mail to a local wallet: Return-Path and the submission Received, no MX verdict, forged results removed', async () => {
    const rig = await startServeRig({ senderAuth: 'spf' });
    const flow = new FlowProducer({ connection: rig.redis, prefix: rig.config.redis.prefix });
    try {
      const alice = await rig.mail.mailbox();
      const bob = await rig.mail.mailbox();
      const aliceAddr = `${alice.publicKey.toBase58()}@${RIG_DOMAIN}`;
      const bobAddr = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
      const deps = submitDepsFromConfig(rig.config, {
        chain: new ChainView({ connection: rig.chain.connection, programId: rig.chain.programId }),
        flow,
        blobs: new BlobStore(join(rig.dataDir, 'blobs')),
        redis: rig.redis,
        logger: pino({ level: 'silent' }),
      });
      const raw =
        `From: ${aliceAddr}\r\nTo: ${bobAddr}\r\nSubject: from the webmail\r\n` +
        `Authentication-Results: ${HOST}; dkim=pass header.d=mail.test\r\n\r\nHi Bob.\r\n`;
      const out = await submitMessage(deps, {
        wallet: alice.publicKey.toBase58(),
        raw: Buffer.from(raw),
        envelopeFrom: aliceAddr,
        recipients: [bobAddr],
        remoteIp: '198.51.100.23',
      });
      const [text] = await deliveredTexts(rig, bob, 1);
      if (!text) throw new Error('no copy');
      const { all } = await fields(text);
      expect(text.startsWith(`Return-Path: <${aliceAddr}>\r\nReceived: from ${HOST} (`)).toBe(true);
      // Submission's own trace only: no client address, no wallet in it, no MX result.
      const [received, ...more] = all('received');
      expect(more).toEqual([]);
      expect(received).toBe(
        `from ${HOST} (authenticated submission, client address withheld) by ${HOST} (Sealpost) with HTTP id ${out.msgid}; ${received?.split('; ')[1]}`,
      );
      expect(text).not.toContain('198.51.100.23');
      expect(all('authentication-results')).toEqual([]);
      expect(text.endsWith('Subject: from the webmail\r\n\r\nHi Bob.\r\n')).toBe(true);
    } finally {
      await flow.close();
      await rig.stop();
    }
  }, 90_000);
});
