// The cost guard at the MX with several processes on one Redis: the rig's
// in-process MX, a second `sealpost serve --no-workers` process and (for
// delivery) a `sealpost worker` process, all on the rig's config. Senders
// over their window get 451 4.7.1 with a retry hint from every MX while
// other mail is accepted and delivered; the null-sender bucket, the
// recipient windows and the local sender forms are shared across processes;
// transactions that end without a 250 give their units back.
import type { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { RECIPIENT_BUCKET } from '../../src/core/limits/cost-guard.ts';
import {
  nullSenderPublicationWindowKey,
  overallPublicationWindowKey,
  senderPublicationWindowKey,
  walletWindowKey,
} from '../../src/core/limits/redis-keys.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import {
  SmtpClient,
  sendOne,
  startMxProcess,
  startWorkerProcess,
  until,
  waitForInbox,
} from '../support/cost-guard-helpers.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

const RATE_LIMITED = /^4\.7\.1 Rate limit exceeded, try again in (\d+) seconds$/;

async function subjects(rig: ServeRig, owner: Keypair, count: number): Promise<string[]> {
  const inbox = await waitForInbox(rig.chain.connection, rig.chain.programId, owner.publicKey, count);
  const reader = walletEncryptionKeypair(owner.secretKey);
  const out: string[] = [];
  for (const entry of inbox) {
    const res = await fetch(`${rig.gatewayUrl}/ipfs/${entry.email.cid}`);
    const opened = await openSealed(new Uint8Array(await res.arrayBuffer()), reader);
    out.push(/Subject: (\S+)/.exec(Buffer.from(opened.raw).toString('utf8'))?.[1] ?? '?');
  }
  return out.sort();
}

describe('cost guard across MX and worker processes', () => {
  it('answers 451 to a sender over its window on every MX while another sender is delivered', async () => {
    const rig = await startServeRig({
      serve: { components: { smtp: true, workers: false } },
      extraToml: '[limits]\nsender_messages = 2\nsender_window_secs = 3600\noverall_window_secs = 86400\n',
    });
    // Chain set-up first: child processes starting under tsx load the CPU.
    const bob = await rig.mail.mailbox();
    const [mx2, worker] = await Promise.all([
      startMxProcess(rig.configFile, rig.dataDir),
      startWorkerProcess(rig.configFile, rig.dataDir),
    ]);
    const mx1 = rig.mxPort;
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;

    expect((await sendOne(mx1, 'flood@remote.example', to, 'flood-1')).code).toBe(250);
    expect((await sendOne(mx2.port, 'flood@remote.example', to, 'flood-2')).code).toBe(250);
    // The window is full for this sender on both MX processes, whatever the case of its address.
    for (const [port, from] of [
      [mx1, 'flood@remote.example'],
      [mx2.port, 'flood@remote.example'],
      [mx1, 'Flood@REMOTE.Example'],
    ] as const) {
      const refused = await sendOne(port, from, to, 'flood-refused');
      expect(refused.code).toBe(451);
      const secs = Number(RATE_LIMITED.exec(refused.text)?.[1]);
      // One unit comes back every 3600 / 2 s.
      expect(secs).toBeGreaterThan(1700);
      expect(secs).toBeLessThanOrEqual(1800);
    }
    // Everyone else's mail flows, through either MX.
    expect((await sendOne(mx2.port, 'other@remote.example', to, 'other-1')).code).toBe(250);
    expect((await sendOne(mx1, 'third@remote.example', to, 'other-2')).code).toBe(250);

    expect(await subjects(rig, bob, 4)).toEqual(['flood-1', 'flood-2', 'other-1', 'other-2']);
    expect(rig.serving.metrics.render()).toMatch(/sealpost_mx_deferred_total\{reason="sender"\} 2\n/);
    expect(await rig.redis.exists(senderPublicationWindowKey(rig.prefix, 'flood@remote.example'))).toBe(1);
    expect(await rig.redis.exists(overallPublicationWindowKey(rig.prefix))).toBe(1);
    await Promise.all([mx2.stop(), worker.stop()]);
  }, 180_000);

  it('shares the null-sender bucket, recipient windows and local sender forms; refunds unaccepted transactions', async () => {
    const rig = await startServeRig({
      serve: { components: { smtp: true, workers: false } },
      extraLocalDomains: ['other.test'],
      extraToml:
        '[limits]\nsender_messages = 2\nnull_sender_messages = 3\nnull_sender_window_secs = 600\nrecipient_messages = 3\n',
    });
    const [r1, r2, r3, carol] = await Promise.all([
      rig.mail.mailbox(),
      rig.mail.mailbox(),
      rig.mail.mailbox(),
      rig.mail.mailbox({ alias: 'carol' }),
    ]);
    const mx2 = await startMxProcess(rig.configFile, rig.dataDir);
    const mx1 = rig.mxPort;
    const addr = (k: Keypair, domain = RIG_DOMAIN) => `${k.publicKey.toBase58()}@${domain}`;
    const nullKey = nullSenderPublicationWindowKey(rig.prefix);

    // Transactions that never get their 250 hold units only until they end.
    const a = await SmtpClient.open(mx1);
    expect((await a.cmd('MAIL FROM:<>')).code).toBe(250);
    expect((await a.cmd(`RCPT TO:<${addr(r1)}>`)).code).toBe(250);
    expect(await rig.redis.exists(nullKey)).toBe(1);
    expect((await a.cmd('RSET')).code).toBe(250);
    expect((await a.cmd('MAIL FROM:<>')).code).toBe(250); // refunds the transaction before the RSET
    expect((await a.cmd(`RCPT TO:<${addr(r1)}>`)).code).toBe(250);
    expect((await a.cmd('DATA')).code).toBe(354);
    expect((await a.cmd('Subject: bad\r\n\r\nNUL \u0000 here\r\n.')).code).toBe(554);
    expect((await a.cmd(`RCPT TO:<${addr(r1)}>`)).code).toBe(503); // no transaction left
    await a.quit();
    const b = await SmtpClient.open(mx2.port);
    expect((await b.cmd('MAIL FROM:<>')).code).toBe(250);
    expect((await b.cmd(`RCPT TO:<${addr(r1)}>`)).code).toBe(250);
    b.drop();
    await until(async () => (await rig.redis.exists(nullKey)) === 0);
    expect(
      await rig.redis.exists(walletWindowKey(rig.prefix, r1.publicKey.toBase58(), RECIPIENT_BUCKET)),
    ).toBe(0);

    // One bucket for bounces, whichever MX process takes them.
    expect((await sendOne(mx1, '', addr(r1), 'null-1')).code).toBe(250);
    expect((await sendOne(mx2.port, '', addr(r2), 'null-2')).code).toBe(250);
    expect((await sendOne(mx1, '', addr(r2), 'null-3')).code).toBe(250);
    const overNull = await sendOne(mx2.port, '', addr(r1), 'null-4');
    expect(overNull.code).toBe(451);
    // 600 s / 3 per unit.
    expect(Number(RATE_LIMITED.exec(overNull.text)?.[1])).toBeLessThanOrEqual(200);
    expect((await sendOne(mx1, '', addr(r3), 'null-5')).code).toBe(451);
    expect(rig.serving.metrics.render()).toMatch(/sealpost_mx_deferred_total\{reason="null_sender"\} 1\n/);

    // A recipient wallet's window counts every sender, on every MX.
    expect((await sendOne(mx1, 'a@remote.example', addr(r3), 'r3-a')).code).toBe(250);
    expect((await sendOne(mx2.port, 'b@remote.example', addr(r3), 'r3-b')).code).toBe(250);
    expect((await sendOne(mx2.port, 'c@remote.example', addr(r3), 'r3-c')).code).toBe(250);
    expect((await sendOne(mx1, 'd@remote.example', addr(r3), 'r3-d')).code).toBe(451);
    expect(rig.serving.metrics.render()).toMatch(/sealpost_mx_deferred_total\{reason="recipient"\} 1\n/);

    // A local sender has one window whatever form it writes: alias, wallet, any local domain.
    expect((await sendOne(mx1, `Carol@${RIG_DOMAIN}`, addr(r2), 'carol-1')).code).toBe(250);
    expect((await sendOne(mx2.port, addr(carol, 'MAIL.TEST'), addr(r1), 'carol-2')).code).toBe(250);
    const overCarol = await sendOne(mx1, addr(carol, 'other.test'), addr(r1), 'carol-3');
    expect(overCarol.code).toBe(451);
    expect(rig.serving.metrics.render()).toMatch(/sealpost_mx_deferred_total\{reason="sender"\} 1\n/);
    for (const form of [addr(carol), addr(carol, 'other.test'), `carol@${RIG_DOMAIN}`]) {
      expect(await rig.redis.exists(senderPublicationWindowKey(rig.prefix, form))).toBe(1);
    }
    await mx2.stop();
  }, 180_000);
});
