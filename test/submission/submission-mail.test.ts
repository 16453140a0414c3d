// What an authenticated sender may submit and where it goes, over real SMTP
// with nodemailer: own addresses only, SIZE, send-rate windows, recipients
// resolved on chain, remote mail DKIM-signed into the outbound queue, local
// mail into the inbound pipeline — and peers' mail signed too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { QUEUE_SPOOL } from '../../src/contracts/inbound-jobs.ts';
import {
  converse,
  DOMAIN,
  message,
  PASSWORD,
  PEER_DOMAIN,
  plainToken,
  type SubmissionRig,
  startSubmissionRig,
} from '../support/submission-rig.ts';

function transport(r: SubmissionRig, user = r.aliceAddress) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: r.port,
    secure: true,
    auth: { user, pass: PASSWORD },
    tls: { rejectUnauthorized: false },
  });
}

/** mailauth's verifier with DNS answered from the rig's DKIM records only. */
async function verifyDkim(r: SubmissionRig, raw: Buffer) {
  const result = await dkimVerify(raw, {
    resolver: async (name: string, type: string) => {
      const value = r.dkimTxt.get(name);
      if (type !== 'TXT' || !value)
        throw Object.assign(new Error(`no ${type} for ${name}`), { code: 'ENOTFOUND' });
      return [[value]];
    },
  });
  return result.results;
}

const WAITING = ['waiting', 'waiting-children', 'prioritized', 'delayed'] as const;

describe('submission: sender addresses', () => {
  it('refuses a MAIL FROM that is not the user’s with 553 5.7.1', async () => {
    const r = await startSubmissionRig();
    const err = await transport(r)
      .sendMail({
        envelope: { from: r.bobAddress, to: ['friend@remote.example'] },
        raw: message(r.bobAddress, 'friend@remote.example'),
      })
      .catch((e: { responseCode?: number; response?: string }) => e);
    expect(err).toMatchObject({ responseCode: 553 });
    expect((err as { response: string }).response).toMatch(
      /^553 5\.7\.1 Sender address <.+> is not yours to use$/,
    );
    expect(await r.outbound.count()).toBe(0);
  });

  it('refuses a header From that is not the user’s, even with a good envelope', async () => {
    const r = await startSubmissionRig();
    const err = await transport(r)
      .sendMail({
        envelope: { from: r.aliceAddress, to: ['friend@remote.example'] },
        raw: message(`"The Bank" <security@bank.example>`, 'friend@remote.example'),
      })
      .catch((e: { responseCode?: number; response?: string }) => e);
    expect(err).toMatchObject({ responseCode: 553 });
    expect((err as { response: string }).response).toContain('<security@bank.example>');
    expect(await r.outbound.count()).toBe(0);
    expect(await r.redis.keys(`${r.prefix}:rl:wallet:*:submit-*`)).toEqual([]);
  });

  it('lets the user send from an alias address; the null sender is refused', async () => {
    const r = await startSubmissionRig();
    const alias = `Alice@${DOMAIN}`;
    const info = await transport(r).sendMail({
      envelope: { from: alias, to: ['friend@remote.example'] },
      raw: message(`Alice <${alias}>`, 'friend@remote.example'),
    });
    expect(info.response).toMatch(/^250 /);
    const [job] = await r.outbound.getJobs([...WAITING]);
    expect(job?.data.from).toBe(alias);

    const replies = await converse(
      r.port,
      ['EHLO c', `AUTH PLAIN ${plainToken(r.aliceAddress, PASSWORD)}`, 'MAIL FROM:<>'],
      { tls: true },
    );
    expect(replies[3]).toMatch(/^553 5\.7\.1 /);
  });
});

describe('submission: size and recipients', () => {
  it('refuses an oversize message (declared and undeclared) with 552, queues nothing', async () => {
    const r = await startSubmissionRig({ maxMessageBytes: 4096 });
    const declared = await converse(
      r.port,
      [
        'EHLO c',
        `AUTH PLAIN ${plainToken(r.aliceAddress, PASSWORD)}`,
        `MAIL FROM:<${r.aliceAddress}> SIZE=5000`,
      ],
      { tls: true },
    );
    expect(declared[1]).toContain('SIZE 4096');
    expect(declared[3]).toMatch(/^552 /);

    const big = `${'x'.repeat(100)}\r\n`.repeat(60);
    const err = await transport(r)
      .sendMail({
        envelope: { from: r.aliceAddress, to: ['friend@remote.example', r.bobAddress] },
        raw: message(r.aliceAddress, 'friend@remote.example', 'big', big),
      })
      .catch((e: { responseCode?: number; response?: string }) => e);
    expect(err).toMatchObject({ responseCode: 552 });
    expect((err as { response: string }).response).toMatch(/^552 5\.3\.4 /);
    expect(await r.outbound.count()).toBe(0);
    expect(await r.deliver.count()).toBe(0);
  });

  it('refuses unknown local recipients (550 5.1.1) and gated ones (550 5.7.1), accepts the rest', async () => {
    const r = await startSubmissionRig();
    const gated = `${r.gated.publicKey.toBase58()}@${DOMAIN}`;
    const replies = await converse(
      r.port,
      [
        'EHLO c',
        `AUTH PLAIN ${plainToken(r.aliceAddress, PASSWORD)}`,
        `MAIL FROM:<${r.aliceAddress}>`,
        `RCPT TO:<nobody-here@${DOMAIN}>`,
        `RCPT TO:<${gated}>`,
        'RCPT TO:<not an address>',
        `RCPT TO:<${r.bobAddress}>`,
      ],
      { tls: true },
    );
    expect(replies[4]).toBe(`550 5.1.1 No such mailbox here: <nobody-here@${DOMAIN}>`);
    expect(replies[5]).toMatch(
      /^550 5\.7\.1 Recipient <.+> asks first-contact senders for postage of 5000 lamports/,
    );
    expect(replies[6]).toMatch(/^5\d\d /);
    expect(replies[7]).toMatch(/^250 /);
  });
});

describe('submission: where accepted mail goes', () => {
  it('a remote recipient: one outbound job whose stored message is DKIM-signed and verifies', async () => {
    const r = await startSubmissionRig();
    const info = await transport(r).sendMail({
      envelope: { from: r.aliceAddress, to: ['friend@remote.example', 'other@remote.example'] },
      raw: message(`Alice <${r.aliceAddress}>`, 'friend@remote.example', 'signed', 'Body line \u00e9.'),
    });
    const msgid = info.response.split(' ').pop() ?? '';
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const jobs = await r.outbound.getJobs([...WAITING]);
    expect(jobs).toHaveLength(1);
    const job = jobs[0];
    expect(job?.id).toBe(msgid);
    expect(job?.data).toMatchObject({
      msgid,
      from: r.aliceAddress,
      to: ['friend@remote.example', 'other@remote.example'],
      kind: 'submission',
    });
    const stored = await r.blobs.read(job?.data.blobKey ?? '');
    const text = stored.toString('utf8');
    expect(text.startsWith('DKIM-Signature: ')).toBe(true);
    expect(text).toContain(
      `Received: from mx.mail.test (authenticated submission, client address withheld)\r\n\tby mx.mail.test (Sealpost) with ESMTPSA id ${msgid};`,
    );
    expect(text).toContain('Body line \u00e9.');
    const results = await verifyDkim(r, stored);
    expect(results.map((x) => [x.status.result, x.signingDomain])).toEqual([['pass', DOMAIN]]);
    // Tampering breaks it: the signature covers the body.
    const tampered = Buffer.from(text.replace('Body line', 'Body lime'), 'utf8');
    expect((await verifyDkim(r, tampered))[0]?.status.result).not.toBe('pass');
    // No local recipient: no spool file, no delivery job.
    expect(await r.deliver.count()).toBe(0);
  });

  it('a local wallet: one deliver job into the inbound pipeline, unsigned, with the spool on disk', async () => {
    const r = await startSubmissionRig();
    const info = await transport(r).sendMail({
      envelope: { from: r.aliceAddress, to: [r.bobAddress] },
      raw: message(r.aliceAddress, r.bobAddress, 'local'),
    });
    const msgid = info.response.split(' ').pop() ?? '';
    const jobs = await r.deliver.getJobs([...WAITING]);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.data).toMatchObject({
      msgid,
      wallet: r.bob.publicKey.toBase58(),
      form: 'wallet',
      envelope: { from: r.aliceAddress, to: r.bobAddress },
      stages: {},
    });
    const spooled = readFileSync(join(r.dir, 'blobs', 'spool', msgid), 'utf8');
    expect(spooled).toContain('Subject: local');
    expect(spooled).toContain(`with ESMTPSA id ${msgid}`);
    expect(spooled).not.toContain('DKIM-Signature');
    expect(await r.outbound.count()).toBe(0);
  });

  it('local and remote recipients together: deliver jobs and the outbound job in one step', async () => {
    const r = await startSubmissionRig();
    const info = await transport(r).sendMail({
      envelope: { from: r.aliceAddress, to: [r.bobAddress, `alice@${DOMAIN}`, 'friend@remote.example'] },
      raw: message(r.aliceAddress, 'friend@remote.example'),
    });
    const msgid = info.response.split(' ').pop() ?? '';
    const deliver = await r.deliver.getJobs([...WAITING]);
    expect(deliver.map((j) => j.data.form).sort()).toEqual(['alias', 'wallet']);
    const outbound = await r.outbound.getJobs([...WAITING]);
    expect(outbound.map((j) => j.data.to)).toEqual([['friend@remote.example']]);
    const { Queue } = await import('bullmq');
    const spool = new Queue(QUEUE_SPOOL, { connection: r.redis, prefix: r.prefix });
    expect((await spool.getJob(msgid))?.data).toMatchObject({ msgid });
    await spool.close();
  });

  it('passes DSN requests on: ENVID, and one outbound job (with its own signed copy) per NOTIFY', async () => {
    const r = await startSubmissionRig();
    const body = message(r.aliceAddress, 'a@remote.example', 'dsn');
    const replies = await converse(
      r.port,
      [
        'EHLO c',
        `AUTH PLAIN ${plainToken(r.aliceAddress, PASSWORD)}`,
        `MAIL FROM:<${r.aliceAddress}> ENVID=env-42`,
        'RCPT TO:<a@remote.example> NOTIFY=SUCCESS,FAILURE',
        'RCPT TO:<b@remote.example> NOTIFY=NEVER',
        'RCPT TO:<c@remote.example> NOTIFY=FAILURE,SUCCESS',
        'RCPT TO:<d@remote.example>',
        'DATA',
        `${body}.`,
      ],
      { tls: true },
    );
    expect(replies[1]).toContain('DSN');
    expect(replies[9]).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const msgid = replies[9]?.split(' ').pop() ?? '';
    const jobs = (await r.outbound.getJobs([...WAITING])).sort((a, b) =>
      a.data.msgid.localeCompare(b.data.msgid),
    );
    expect(jobs.map((j) => [j.data.msgid, j.data.to, j.data.dsn])).toEqual([
      [msgid, ['a@remote.example'], { notify: ['SUCCESS', 'FAILURE'], envid: 'env-42' }],
      [`${msgid}-2`, ['b@remote.example'], { notify: 'NEVER', envid: 'env-42' }],
      [`${msgid}-3`, ['c@remote.example'], { notify: ['FAILURE', 'SUCCESS'], envid: 'env-42' }],
      [`${msgid}-4`, ['d@remote.example'], { envid: 'env-42' }],
    ]);
    const keys = new Set(jobs.map((j) => j.data.blobKey));
    expect(keys.size).toBe(4);
    for (const job of jobs) {
      const stored = await r.blobs.read(job.data.blobKey);
      expect(stored.toString('latin1')).toContain(`id ${job.data.msgid};`);
      expect((await verifyDkim(r, stored))[0]?.status.result).toBe('pass');
    }
  });

  it('a peer server (EXTERNAL) sends from its own domain, signed; not from ours', async () => {
    const r = await startSubmissionRig({ peers: true });
    const peerFrom = `news@${PEER_DOMAIN}`;
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: r.port,
      secure: true,
      tls: { rejectUnauthorized: false, cert: r.certs.peer.cert, key: r.certs.peer.key },
      auth: { type: 'custom', method: 'EXTERNAL', user: PEER_DOMAIN },
      customAuth: {
        EXTERNAL: async (ctx: {
          sendCommand: (cmd: string) => Promise<{ status: number; response: string }>;
        }) => {
          const reply = await ctx.sendCommand('AUTH EXTERNAL =');
          if (reply.status !== 235) throw new Error(reply.response);
        },
      },
    } as Parameters<typeof nodemailer.createTransport>[0]);
    const info = await t.sendMail({
      envelope: { from: peerFrom, to: ['reader@remote.example'] },
      raw: message(peerFrom, 'reader@remote.example', 'from a peer'),
    });
    expect(info.response).toMatch(/^250 /);
    const [job] = await r.outbound.getJobs([...WAITING]);
    const stored = await r.blobs.read(job?.data.blobKey ?? '');
    const results = await verifyDkim(r, stored);
    expect(results.map((x) => [x.status.result, x.signingDomain])).toEqual([['pass', PEER_DOMAIN]]);

    const spoof = await t
      .sendMail({
        envelope: { from: r.aliceAddress, to: ['reader@remote.example'] },
        raw: message(r.aliceAddress, 'reader@remote.example'),
      })
      .catch((e: { responseCode?: number }) => e);
    expect(spoof).toMatchObject({ responseCode: 553 });

    // A peer may relay a bounce (null sender) from its own domain.
    const bounce = await converse(
      r.port,
      [
        'EHLO mx.peer.example',
        'AUTH EXTERNAL =',
        'MAIL FROM:<>',
        'RCPT TO:<reader@remote.example>',
        'DATA',
        `${message(`MAILER-DAEMON@${PEER_DOMAIN}`, 'reader@remote.example', 'Undelivered')}.`,
      ],
      { tls: true, cert: r.certs.peer },
    );
    expect(bounce[3]).toMatch(/^250 /);
    expect(bounce[6]).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const nullJob = (await r.outbound.getJobs([...WAITING])).find((j) => j.data.from === '');
    expect(nullJob?.data.to).toEqual(['reader@remote.example']);
  });
});

describe('submission: send-rate windows', () => {
  it('answers 451 4.7.1 with a retry hint once the hourly window is full', async () => {
    const r = await startSubmissionRig({ limits: { perHour: 2, perDay: 10 } });
    const t = transport(r);
    for (let i = 0; i < 2; i++) {
      await t.sendMail({
        envelope: { from: r.aliceAddress, to: ['friend@remote.example'] },
        raw: message(r.aliceAddress, 'friend@remote.example', `n${i}`),
      });
    }
    const err = await t
      .sendMail({
        envelope: { from: r.aliceAddress, to: ['friend@remote.example'] },
        raw: message(r.aliceAddress, 'friend@remote.example', 'third'),
      })
      .catch((e: { responseCode?: number; response?: string }) => e);
    expect(err).toMatchObject({ responseCode: 451 });
    expect((err as { response: string }).response).toMatch(
      /^451 4\.7\.1 Send rate limit of 2 messages per hour reached, try again in \d+ seconds$/,
    );
    expect(await r.outbound.count()).toBe(2);
    const wallet = r.alice.publicKey.toBase58();
    const keys = (await r.redis.keys(`${r.prefix}:rl:wallet:${wallet}:submit-*`)).sort();
    expect(keys).toHaveLength(2);
    expect(await r.redis.get(keys.find((k) => k.includes(':submit-hour:')) ?? '')).toBe('2');
  });
});
