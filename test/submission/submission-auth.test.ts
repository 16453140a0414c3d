// Who may submit, over real sockets: AUTH only under TLS (465 implicit, 587
// STARTTLS), the mail password with back-off on repeated failures, and SASL
// EXTERNAL for a peer server whose client certificate chains to the peer CA.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import {
  converse,
  message,
  PASSWORD,
  PEER_DOMAIN,
  plainToken,
  startSubmissionRig,
} from '../support/submission-rig.ts';

const run = promisify(execFile);

/** swaks exits non-zero when the server refuses; its transcript is what the test reads. */
async function swaks(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('swaks', args, { timeout: 20_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return (e.stdout ?? '') + (e.stderr ?? '');
  }
}

describe('submission AUTH', () => {
  it('refuses a relay attempt without AUTH with 530 5.7.0', async () => {
    const r = await startSubmissionRig();
    const replies = await converse(
      r.port,
      ['EHLO client.example', 'MAIL FROM:<someone@remote.example>', 'RCPT TO:<victim@elsewhere.example>'],
      { tls: true },
    );
    expect(replies[0]).toMatch(/^220 /);
    expect(replies[1]).toContain('AUTH PLAIN LOGIN');
    expect(replies[2]).toBe('530 5.7.0 Authentication required');
    expect(replies[3]).toBe('530 5.7.0 Authentication required');

    // nodemailer without credentials gets the same answer.
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: r.port,
      secure: true,
      tls: { rejectUnauthorized: false },
    });
    await expect(
      t.sendMail({
        envelope: { from: r.aliceAddress, to: ['someone@remote.example'] },
        raw: message(r.aliceAddress, 'someone@remote.example'),
      }),
    ).rejects.toMatchObject({ responseCode: 530 });
    expect(await r.outbound.count()).toBe(0);
  });

  it('587: AUTH before STARTTLS answers 538 5.7.11; after STARTTLS the same login works', async () => {
    const r = await startSubmissionRig({ mode: 'submission' });
    const token = plainToken(r.aliceAddress, PASSWORD);
    const before = await converse(r.port, ['EHLO client.example', `AUTH PLAIN ${token}`, 'AUTH LOGIN']);
    expect(before[1]).toContain('STARTTLS');
    expect(before[2]).toBe('538 5.7.11 Encryption required for requested authentication mechanism');
    // LOGIN must not even prompt for a user name in clear.
    expect(before[3]).toMatch(/^538 5\.7\.11 /);

    const after = await converse(r.port, [
      'EHLO client.example',
      'STARTTLS',
      'EHLO client.example',
      `AUTH PLAIN ${token}`,
    ]);
    expect(after[2]).toMatch(/^220 /);
    expect(after[4]).toBe('235 Authentication successful');

    // nodemailer on 587 with STARTTLS required: a full submission goes through.
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: r.port,
      secure: false,
      requireTLS: true,
      auth: { user: r.aliceAddress, pass: PASSWORD },
      tls: { rejectUnauthorized: false },
    });
    const info = await t.sendMail({
      envelope: { from: r.aliceAddress, to: ['friend@remote.example'] },
      raw: message(r.aliceAddress, 'friend@remote.example'),
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    // swaks with STARTTLS as well.
    const viaSwaks = await swaks([
      '--server',
      '127.0.0.1',
      '--port',
      String(r.port),
      '--tls',
      '--from',
      r.aliceAddress,
      '--to',
      'other@remote.example',
      '--auth',
      'LOGIN',
      '--auth-user',
      r.aliceAddress,
      '--auth-password',
      PASSWORD,
      '--header',
      `From: ${r.aliceAddress}`,
    ]);
    expect(viaSwaks).toContain('235 Authentication successful');
    expect(viaSwaks).toMatch(/250 2\.0\.0 Ok: queued as /);
    const jobs = await r.outbound.getJobs(['waiting']);
    expect(jobs.map((j) => j.data.to).sort()).toEqual([['friend@remote.example'], ['other@remote.example']]);
  });

  it('accepts the bare wallet, wallet@domain and alias@domain as login names (PLAIN and LOGIN)', async () => {
    const r = await startSubmissionRig();
    const wallet = r.alice.publicKey.toBase58();
    for (const login of [wallet, r.aliceAddress, `Alice@${'MAIL.test'}`]) {
      const replies = await converse(r.port, ['EHLO c', `AUTH PLAIN ${plainToken(login, PASSWORD)}`], {
        tls: true,
      });
      expect(replies[2], login).toBe('235 Authentication successful');
    }
    const login = await converse(
      r.port,
      [
        'EHLO c',
        'AUTH LOGIN',
        Buffer.from(`alice@${'mail.test'}`).toString('base64'),
        Buffer.from(PASSWORD).toString('base64'),
      ],
      { tls: true },
    );
    expect(login[2]).toMatch(/^334 /);
    expect(login[4]).toBe('235 Authentication successful');
    // A wallet with a mailbox but no account (so no password) cannot log in.
    const bob = await converse(r.port, ['EHLO c', `AUTH PLAIN ${plainToken(r.bobAddress, PASSWORD)}`], {
      tls: true,
    });
    expect(bob[2]).toBe('535 5.7.8 Authentication credentials invalid');
    expect(r.sleeps).toHaveLength(1);
  });

  it('refuses a disabled account even with the right password', async () => {
    const r = await startSubmissionRig();
    await r.accounts.update(r.alice.publicKey.toBase58(), { disabledAt: Date.now() });
    const replies = await converse(r.port, ['EHLO c', `AUTH PLAIN ${plainToken(r.aliceAddress, PASSWORD)}`], {
      tls: true,
    });
    expect(replies[2]).toBe('535 5.7.8 Authentication credentials invalid');
  });

  it('answers a wrong password with 535 5.7.8, backs off harder each time, then locks the account', async () => {
    const r = await startSubmissionRig({
      backoff: { windowMs: 60_000, maxPerIp: 50, maxPerAccount: 3, baseDelayMs: 100, maxDelayMs: 350 },
    });
    const wrong = plainToken(r.aliceAddress, 'not the password at all');
    const replies: string[] = [];
    for (let i = 0; i < 4; i++) {
      const out = await converse(r.port, ['EHLO c', `AUTH PLAIN ${wrong}`], { tls: true });
      replies.push(out[2] as string);
    }
    expect(replies.slice(0, 3)).toEqual(Array(3).fill('535 5.7.8 Authentication credentials invalid'));
    // Doubling delays, capped.
    expect(r.sleeps).toEqual([100, 200, 350]);
    expect(replies[3]).toMatch(
      /^454 4\.7\.0 Too many failed authentication attempts, try again in \d+ seconds$/,
    );
    // Locked: even the right password is not checked until the window ends.
    const right = await converse(r.port, ['EHLO c', `AUTH PLAIN ${plainToken(r.aliceAddress, PASSWORD)}`], {
      tls: true,
    });
    expect(right[2]).toMatch(/^454 4\.7\.0 /);
    // The windows live under the documented key layout, per IP and per wallet.
    const keys = await r.redisKeys();
    const wallet = r.alice.publicKey.toBase58();
    expect(keys).toContain(`${r.prefix}:rl:ip:127.0.0.1:smtp-auth-fail`);
    expect(keys).toContain(`${r.prefix}:rl:wallet:${wallet}:smtp-auth-fail`);
  });

  it('locks out an IP that guesses across many accounts', async () => {
    const r = await startSubmissionRig({
      backoff: { windowMs: 60_000, maxPerIp: 2, maxPerAccount: 50, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const names = ['nobody@mail.test', r.bobAddress, 'ghost'];
    const replies: string[] = [];
    for (const name of names) {
      const out = await converse(r.port, ['EHLO c', `AUTH PLAIN ${plainToken(name, 'whatever-password')}`], {
        tls: true,
      });
      replies.push(out[2] as string);
    }
    expect(replies[0]).toMatch(/^535 5\.7\.8 /);
    expect(replies[1]).toMatch(/^535 5\.7\.8 /);
    expect(replies[2]).toMatch(/^454 4\.7\.0 /);
  });

  it('swaks over implicit TLS (465): AUTH PLAIN succeeds with the password and fails with another', async () => {
    const r = await startSubmissionRig();
    const common = [
      '--server',
      '127.0.0.1',
      '--port',
      String(r.port),
      '--tls-on-connect',
      '--from',
      r.aliceAddress,
      '--to',
      'friend@remote.example',
      '--auth',
      'PLAIN',
      '--auth-user',
      r.aliceAddress,
      '--header',
      `From: ${r.aliceAddress}`,
    ];
    const good = await swaks([...common, '--auth-password', PASSWORD]);
    expect(good).toContain('235 Authentication successful');
    expect(good).toMatch(/250 2\.0\.0 Ok: queued as /);
    const bad = await swaks([...common, '--auth-password', 'definitely wrong']);
    expect(bad).toContain('535 5.7.8 Authentication credentials invalid');
    const jobs = await r.outbound.getJobs(['waiting']);
    expect(jobs).toHaveLength(1);
  });

  it('does not offer EXTERNAL when no peer CA is configured', async () => {
    const r = await startSubmissionRig();
    const replies = await converse(r.port, ['EHLO c', 'AUTH EXTERNAL ='], { tls: true, cert: r.certs.peer });
    expect(replies[1]).not.toContain('EXTERNAL');
    expect(replies[2]).toMatch(/^504 /);
  });
});

describe('submission SASL EXTERNAL (peer Sealpost servers)', () => {
  it('authenticates a client certificate from the peer CA, refuses a stranger’s and a missing one', async () => {
    const r = await startSubmissionRig({ peers: true });
    const trusted = await converse(r.port, ['EHLO mx.peer.example', 'AUTH EXTERNAL ='], {
      tls: true,
      cert: r.certs.peer,
    });
    expect(trusted[1]).toContain('AUTH PLAIN LOGIN EXTERNAL');
    expect(trusted[2]).toBe('235 Authentication successful');

    // Without an initial response the server asks for one; an authzid the certificate names is accepted.
    const asked = await converse(
      r.port,
      ['EHLO mx.peer.example', 'AUTH EXTERNAL', Buffer.from(PEER_DOMAIN).toString('base64')],
      { tls: true, cert: r.certs.peer },
    );
    expect(asked[2]).toBe('334');
    expect(asked[3]).toBe('235 Authentication successful');
    const otherId = await converse(
      r.port,
      ['EHLO mx.peer.example', `AUTH EXTERNAL ${Buffer.from('other.example').toString('base64')}`],
      { tls: true, cert: r.certs.peer },
    );
    expect(otherId[2]).toBe('535 5.7.8 Authentication credentials invalid');

    const stranger = await converse(r.port, ['EHLO mx.peer.example', 'AUTH EXTERNAL ='], {
      tls: true,
      cert: r.certs.stranger,
    });
    expect(stranger[2]).toBe('535 5.7.8 Authentication credentials invalid');
    const none = await converse(r.port, ['EHLO mx.peer.example', 'AUTH EXTERNAL ='], { tls: true });
    expect(none[2]).toBe('535 5.7.8 Authentication credentials invalid');
    // A stranger that fails EXTERNAL is still just an unauthenticated client.
    const relay = await converse(
      r.port,
      ['EHLO mx.peer.example', 'AUTH EXTERNAL =', `MAIL FROM:<postmaster@${PEER_DOMAIN}>`],
      { tls: true, cert: r.certs.stranger },
    );
    expect(relay[3]).toBe('530 5.7.0 Authentication required');
  });

  it('587: EXTERNAL works after STARTTLS with the client certificate', async () => {
    const r = await startSubmissionRig({ peers: true, mode: 'submission' });
    const replies = await converse(
      r.port,
      ['EHLO mx.peer.example', 'AUTH EXTERNAL =', 'STARTTLS', 'EHLO mx.peer.example', 'AUTH EXTERNAL ='],
      { cert: r.certs.peer },
    );
    expect(replies[2]).toMatch(/^538 5\.7\.11 /);
    expect(replies[3]).toMatch(/^220 /);
    expect(replies[5]).toBe('235 Authentication successful');
  });
});
