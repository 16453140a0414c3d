// RFC 3461 (DSN) end to end over real SMTP: an account submits on 465 with
// NOTIFY/RET/ENVID/ORCPT; the spooler delivers to remote MX hosts on
// loopback (one offers DSN, one does not) and its DSNs to the local sender
// come back through the pipeline, sealed to the sender's wallet:
//  - NOTIFY=NEVER and a 550: no DSN;
//  - NOTIFY=SUCCESS to a server without DSN: a "relayed" DSN with
//    Original-Envelope-Id, Original-Recipient and, for RET=HDRS, headers only;
//  - RET=FULL and a 550: a failure DSN returning the whole message;
//  - NOTIFY=SUCCESS to a server that offers DSN: the parameters go along,
//    and no DSN from us.
// Malformed parameters get 501 5.5.4 on submission; the MX, which offers no
// DSN, answers the parameters with 555 5.5.4.
import { setTimeout as sleep } from 'node:timers/promises';
import type { PublicKey } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { CredentialSealer } from '../../src/core/crypto/credential-seal.ts';
import { AccountsRepo } from '../../src/core/store/index.ts';
import { setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { startDnsDouble } from '../support/doubles/dns-server.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { converse, plainToken } from '../support/submission-rig.ts';

const PASSWORD = 'dsn test password';
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f().catch(() => {});
});

async function inbox(rig: ServeRig, owner: PublicKey, count: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await listInbox(rig.chain.connection, rig.chain.programId, owner);
    if (list.length >= count) return list;
    if (Date.now() > deadline) throw new Error(`inbox has ${list.length} of ${count}`);
    await sleep(150);
  }
}

async function setup() {
  const refuse = (a: string) =>
    a.startsWith('nobody@') ? { code: 550, message: '5.1.1 No such user' } : null;
  const plain: RemoteMx = await startRemoteMx({ host: '127.0.0.96', rcpt: refuse });
  const capable: RemoteMx = await startRemoteMx({ host: '127.0.0.97', port: plain.port, dsn: true });
  cleanup.push(
    () => plain.close(),
    () => capable.close(),
  );
  const dns = await startDnsDouble({
    'plain.test': { MX: [{ preference: 10, exchange: 'mx.plain.test' }] },
    'mx.plain.test': { A: ['127.0.0.96'] },
    'capable.test': { MX: [{ preference: 10, exchange: 'mx.capable.test' }] },
    'mx.capable.test': { A: ['127.0.0.97'] },
  });
  cleanup.push(() => dns.close());
  const rig = await startServeRig({
    resolver: dns.address,
    mailAccess: true,
    extraToml: `
[spooler]
smtp_port = ${plain.port}
retry_schedule_secs = [60]

[[smtp.listeners]]
mode = "submissions"
host = "127.0.0.1"
port = 2465
`,
    serve: {
      listenerOverrides: [
        { host: '127.0.0.1', port: 0 },
        { host: '127.0.0.1', port: 0 },
      ],
    },
  });
  const port = rig.serving.listeners.find((l) => l.mode === 'submissions')?.port ?? 0;
  const alice = await rig.mail.mailbox();
  const wallet = alice.publicKey.toBase58();
  const accounts = new AccountsRepo(rig.serving.store.db);
  await accounts.create(wallet, { source: 'admin' });
  await setMailPassword(
    { accounts, sealer: new CredentialSealer(rig.credentialKey), db: rig.serving.store.db },
    wallet,
    PASSWORD,
  );
  const from = `${wallet}@${RIG_DOMAIN}`;
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: true,
    auth: { user: from, pass: PASSWORD },
    tls: { rejectUnauthorized: false },
  });
  return { rig, plain, capable, port, alice, from, transport };
}

const body = (from: string, to: string, subject: string) =>
  `From: ${from}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@mail.test>\r\n\r\nThe body line of ${subject}.\r\n`;

describe('DSN parameters (RFC 3461) on submission, honoured by the spooler', () => {
  it('NEVER, SUCCESS (relayed, headers only), RET=FULL, ENVID/ORCPT echoed, passed on to a DSN server', async () => {
    const s = await setup();
    const send = (to: string, subject: string, dsn: Record<string, unknown>) =>
      s.transport.sendMail({
        envelope: { from: s.from, to: [to] },
        raw: body(s.from, to, subject),
        dsn,
      } as never);

    await send('nobody@plain.test', 'never', { notify: 'NEVER' });
    await send('ok@plain.test', 'success', {
      notify: ['SUCCESS', 'FAILURE'],
      id: 'env-success+42',
      return: 'headers',
      recipient: 'First.Address@old.example',
    });
    await send('nobody@plain.test', 'full', { notify: 'FAILURE', return: 'full', id: 'env-full' });
    await send('ok@capable.test', 'passon', {
      notify: 'SUCCESS',
      id: 'env-passon',
      return: 'headers',
      recipient: 'orig@capable.test',
    });

    // The DSN-capable server got our parameters with the message.
    const passed = await (async () => {
      for (let i = 0; i < 200 && !s.capable.accepted[0]; i++) await sleep(100);
      return s.capable.accepted[0];
    })();
    expect(passed?.dsn).toEqual({
      ret: 'HDRS',
      envid: 'env-passon',
      rcpt: [{ address: 'ok@capable.test', notify: ['SUCCESS'], orcpt: 'rfc822;orig@capable.test' }],
    });

    const entries = await inbox(s.rig, s.alice.publicKey, 2);
    // Give anything else that would come the time to arrive: exactly two DSNs.
    await sleep(3000);
    expect(await listInbox(s.rig.chain.connection, s.rig.chain.programId, s.alice.publicKey)).toHaveLength(2);
    const texts: string[] = [];
    for (const e of entries) {
      const res = await fetch(`${s.rig.gatewayUrl}/ipfs/${e.email.cid}`);
      const opened = await openSealed(
        new Uint8Array(await res.arrayBuffer()),
        walletEncryptionKeypair(s.alice.secretKey),
      );
      texts.push(Buffer.from(opened.raw).toString('utf8'));
    }
    const relayed = texts.find((t) => t.includes('Action: relayed')) ?? '';
    const failed = texts.find((t) => t.includes('Action: failed')) ?? '';

    expect(relayed).toContain('Subject: Successful Mail Delivery Report');
    expect(relayed).toMatch(/Original-Envelope-Id: env-success\+42\r\n/);
    expect(relayed).toMatch(
      /Final-Recipient: rfc822; ok@plain\.test\r\nOriginal-Recipient: rfc822;First\.Address@old\.example\r\nAction: relayed\r\nStatus: 2\.0\.0/,
    );
    expect(relayed).toContain('Content-Type: text/rfc822-headers');
    expect(relayed).toContain('Subject: success');
    expect(relayed).not.toContain('The body line of success.');

    expect(failed).toContain('Subject: Undelivered Mail Returned to Sender');
    expect(failed).toMatch(/Original-Envelope-Id: env-full\r\n/);
    expect(failed).toMatch(
      /Final-Recipient: rfc822; nobody@plain\.test\r\nAction: failed\r\nStatus: 5\.1\.1/,
    );
    expect(failed).not.toContain('Original-Recipient:');
    expect(failed).toContain('Content-Type: message/rfc822');
    expect(failed).toContain('The body line of full.');
    // The NOTIFY=NEVER bounce produced nothing.
    expect(texts.join('\n')).not.toContain('Subject: never');
  }, 180_000);

  it('malformed DSN parameters get 501 5.5.4 on submission; the MX refuses DSN parameters with 555 5.5.4', async () => {
    const s = await setup();
    const auth = ['EHLO c', `AUTH PLAIN ${plainToken(s.from, PASSWORD)}`];
    const sub = await converse(
      s.port,
      [
        ...auth,
        `MAIL FROM:<${s.from}> ENVID=caf+C3+A9`,
        `MAIL FROM:<${s.from}> RET=ALL`,
        `MAIL FROM:<${s.from}> ENVID=${'x'.repeat(101)}`,
        `MAIL FROM:<${s.from}> RET=HDRS ENVID=ok+2Bid`,
        'RCPT TO:<a@plain.test> NOTIFY=SOMETIMES',
        'RCPT TO:<a@plain.test> NOTIFY=NEVER,SUCCESS',
        'RCPT TO:<a@plain.test> ORCPT=no-semicolon',
        'RCPT TO:<a@plain.test> ORCPT=rfc822;+C3+A9x@plain.test',
        'RCPT TO:<a@plain.test> NOTIFY=SUCCESS ORCPT=rfc822;a+40plain.test',
        'QUIT',
      ],
      { tls: true },
    );
    expect(sub[1]).toMatch(/250[- ]DSN/);
    expect(sub[3]).toMatch(/^501 5\.5\.4 Bad ENVID parameter syntax/);
    expect(sub[4]).toMatch(/^501 .*RET/);
    expect(sub[5]).toMatch(/^501 5\.5\.4 ENVID parameter longer than 100 characters/);
    expect(sub[6]).toMatch(/^250 /);
    expect(sub[7]).toMatch(/^501 .*NOTIFY/);
    expect(sub[8]).toMatch(/^501 .*NEVER/);
    expect(sub[9]).toMatch(/^501 .*ORCPT/);
    expect(sub[10]).toMatch(/^501 5\.5\.4 Bad ORCPT parameter syntax/);
    expect(sub[11]).toMatch(/^250 /);

    const rcpt = `${s.alice.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const mx = await converse(s.rig.mxPort, [
      'EHLO c',
      'MAIL FROM:<x@remote.example> RET=FULL',
      'MAIL FROM:<x@remote.example> ENVID=abc',
      'MAIL FROM:<x@remote.example>',
      `RCPT TO:<${rcpt}> NOTIFY=FAILURE`,
      `RCPT TO:<${rcpt}> ORCPT=rfc822;x@y.example`,
      `RCPT TO:<${rcpt}>`,
      'QUIT',
    ]);
    expect(mx[1]).not.toMatch(/DSN/);
    expect(mx[2]).toBe('555 5.5.4 RET parameter not supported here (this server does not offer DSN)');
    expect(mx[3]).toBe('555 5.5.4 ENVID parameter not supported here (this server does not offer DSN)');
    expect(mx[4]).toMatch(/^250 /);
    expect(mx[5]).toBe('555 5.5.4 NOTIFY parameter not supported here (this server does not offer DSN)');
    expect(mx[6]).toBe('555 5.5.4 ORCPT parameter not supported here (this server does not offer DSN)');
    expect(mx[7]).toMatch(/^250 /);
  }, 120_000);
});
