// issue 33: spam never costs the operator SOL. `sealpost serve` in-process
// (MX, pipeline, store) on a devnet with a real rspamd (test/support/rspamd.ts)
// over real sockets: rspamd's reject is a 550 5.7.1 before anything is
// spooled, sealed or sent (the mailbox's mail_count does not move); clean
// mail is delivered on chain as before; "add header" mail is sealed with
// X-Spam-* fields and filed in Junk without a SendMail; soft reject is a
// 451; an rspamd that is gone follows `[spam] on_error`.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { getMailbox } from '../../chain/client/index.ts';
import { openBlobStore } from '../../src/core/blobs/open-blob-store.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { GTUBE, JUNK_MARK, SOFT_MARK, startTestRspamd } from '../support/rspamd.ts';
import { deliveredTexts, RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

/** One SMTP transaction on a fresh connection, with the whole exchange as a transcript. */
async function exchange(
  port: number,
  from: string,
  to: string,
  body: string,
): Promise<{ data: { code: number; text: string }; transcript: string }> {
  const sock = connect(port, '127.0.0.1');
  let transcript = '';
  let buf = '';
  let waiting: ((r: { code: number; text: string }) => void) | undefined;
  sock.on('data', (d: Buffer) => {
    buf += d.toString('latin1');
    const m = buf.match(/(?:^|\r\n)(\d{3}) ([^\r\n]*)\r\n$/);
    if (m && waiting) {
      for (const line of buf.split('\r\n').slice(0, -1)) transcript += `S: ${line}\n`;
      buf = '';
      const done = waiting;
      waiting = undefined;
      done({ code: Number(m[1]), text: m[2] ?? '' });
    }
  });
  const next = () =>
    new Promise<{ code: number; text: string }>((resolve) => {
      waiting = resolve;
    });
  const cmd = (line: string, shown = line) => {
    const r = next();
    transcript += `${shown.replace(/^/gm, 'C: ')}\n`;
    sock.write(`${line}\r\n`);
    return r;
  };
  expect((await next()).code).toBe(220);
  expect((await cmd('EHLO client.remote.example')).code).toBe(250);
  expect((await cmd(`MAIL FROM:<${from}>`)).code).toBe(250);
  expect((await cmd(`RCPT TO:<${to}>`)).code).toBe(250);
  expect((await cmd('DATA')).code).toBe(354);
  const message =
    `From: <${from}>\r\nTo: <${to}>\r\nSubject: spam test\r\nMessage-ID: <${Date.now()}.${Math.random()}@remote.example>\r\n` +
    `Date: ${new Date().toUTCString()}\r\nX-Spam-Status: No, forged by the sender\r\n\r\n${body}\r\n.`;
  const data = await cmd(message, `${message.split('\r\n').join('\n')}`);
  await cmd('QUIT').catch(() => undefined);
  sock.destroy();
  return { data, transcript };
}

async function mailCount(rig: ServeRig, owner: Keypair): Promise<bigint> {
  const mb = await getMailbox(rig.chain.connection, rig.chain.programId, owner.publicKey);
  return mb?.mailCount ?? -1n;
}

async function storedRows(rig: ServeRig, wallet: string) {
  return rig.serving.store.db
    .selectFrom('messages')
    .innerJoin('mailboxes', 'mailboxes.id', 'messages.mailbox_id')
    .select(['messages.id', 'mailboxes.name', 'messages.cid', 'messages.email_address', 'messages.blob_key'])
    .where('messages.wallet', '=', wallet)
    .execute();
}

function spamToml(url: string, extra = ''): string {
  return `\n[spam]\nenabled = true\nrspamd_url = "${url}"\ntimeout_ms = 3000\n${extra}\n`;
}

describe('rspamd at the MX', { timeout: 120_000 }, () => {
  it('answers GTUBE with 550 5.7.1 and keeps nothing; clean mail is still delivered on chain', async () => {
    const rspamd = await startTestRspamd();
    const rig = await startServeRig({ extraToml: spamToml(rspamd.url) });
    const bob = await rig.mail.mailbox();
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const before = await mailCount(rig, bob);

    const spam = await exchange(rig.mxPort, 'spammer@remote.example', to, `Buy now\r\n${GTUBE}`);
    console.log(`GTUBE transcript (mail_count before: ${before}):\n${spam.transcript}`);
    expect(spam.data.code).toBe(550);
    expect(spam.data.text).toMatch(/^5\.7\.1 /);
    // Nothing queued or stored: give a worker time to show anything it would have done.
    await sleep(1500);
    const afterSpam = await mailCount(rig, bob);
    console.log(`mail_count after GTUBE: ${afterSpam}`);
    expect(afterSpam).toBe(before);
    expect(await storedRows(rig, bob.publicKey.toBase58())).toEqual([]);
    const scans = await rig.serving.prometheus.registry.getSingleMetricAsString('sealpost_spam_scans_total');
    expect(scans).toMatch(/action="reject"[^\n]* 1/);

    const clean = await exchange(rig.mxPort, 'friend@remote.example', to, 'Lunch on Friday?');
    expect(clean.data.code).toBe(250);
    const [text] = await deliveredTexts(rig, bob, 1);
    expect(text).toContain('Lunch on Friday?');
    // Clean mail carries no verdict of ours; the sender's own field is left as it was.
    expect(text).not.toMatch(/^X-Spam-Score:/m);
    expect(await mailCount(rig, bob)).toBe(before + 1n);
    // The store row follows the chain's Email account by a moment: wait for it.
    let rows = await storedRows(rig, bob.publicKey.toBase58());
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      await sleep(100);
      rows = await storedRows(rig, bob.publicKey.toBase58());
    }
    expect(rows.map((r) => r.name)).toEqual(['INBOX']);
  });

  it('files "add header" mail in Junk with X-Spam fields, off chain; soft reject is 451 4.7.1', async () => {
    const rspamd = await startTestRspamd();
    const rig = await startServeRig({ extraToml: spamToml(rspamd.url) });
    const bob = await rig.mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const to = `${wallet}@${RIG_DOMAIN}`;
    const before = await mailCount(rig, bob);

    const soft = await exchange(rig.mxPort, 'maybe@remote.example', to, `hello ${SOFT_MARK}`);
    expect(soft.data.code).toBe(451);
    expect(soft.data.text).toMatch(/^4\.7\.1 Sealpost test soft reject/);

    const junk = await exchange(rig.mxPort, 'bulk@remote.example', to, `special offer ${JUNK_MARK}`);
    expect(junk.data.code).toBe(250);
    let rows = await storedRows(rig, wallet);
    for (let i = 0; i < 150 && rows.length === 0; i++) {
      await sleep(200);
      rows = await storedRows(rig, wallet);
    }
    expect(rows).toHaveLength(1);
    const row = rows[0];
    if (!row) throw new Error('no row');
    expect(row.name).toBe('Junk');
    expect(row.cid).toBeNull();
    expect(row.email_address).toBeNull();
    // Not published (`[spam] publish_junk` is false by default): no Email account, no rent.
    expect(await mailCount(rig, bob)).toBe(before);
    const sealed = await openBlobStore(rig.config, rig.serving.store).read(row.blob_key);
    const opened = await openSealed(new Uint8Array(sealed), walletEncryptionKeypair(bob.secretKey));
    const text = Buffer.from(opened.raw).toString('utf8');
    expect(text).toMatch(/^X-Spam-Status: Yes, score=7\.9 required=15 action="add header"/m);
    expect(text).toMatch(/^X-Spam-Flag: YES$/m);
    expect(text).toMatch(/^X-Spam-Symbols: SEALPOST_TEST_JUNK\(8\)/m);
    // The sender's forged verdict is gone.
    expect(text).not.toContain('forged by the sender');
    expect(text).toContain('special offer');
  });

  it('with rspamd stopped: on_error = "accept" delivers unscanned', async () => {
    const rspamd = await startTestRspamd();
    const rig = await startServeRig({ extraToml: spamToml(rspamd.url, 'on_error = "accept"') });
    await rspamd.close();
    const bob = await rig.mail.mailbox();
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const before = await mailCount(rig, bob);
    const r = await exchange(rig.mxPort, 'friend@remote.example', to, 'scanner is down');
    expect(r.data.code).toBe(250);
    const [text] = await deliveredTexts(rig, bob, 1);
    expect(text).toContain('scanner is down');
    expect(await mailCount(rig, bob)).toBe(before + 1n);
    const errors = await rig.serving.prometheus.registry.getSingleMetricAsString(
      'sealpost_spam_scan_errors_total',
    );
    expect(errors).toMatch(/kind="unreachable",handled="accept"[^\n]* 1/);
  });

  it('with rspamd stopped: on_error = "defer" answers 451 until it is back', async () => {
    const rspamd = await startTestRspamd();
    const rig = await startServeRig({ extraToml: spamToml(rspamd.url, 'on_error = "defer"') });
    const ports = {
      normal: Number(new URL(rspamd.url).port),
      controller: Number(new URL(rspamd.controllerUrl).port),
    };
    await rspamd.close();
    const bob = await rig.mail.mailbox();
    const to = `${bob.publicKey.toBase58()}@${RIG_DOMAIN}`;
    const before = await mailCount(rig, bob);
    const deferred = await exchange(rig.mxPort, 'friend@remote.example', to, 'try me later');
    expect(deferred.data.code).toBe(451);
    expect(deferred.data.text).toMatch(/^4\.7\.1 /);
    await sleep(500);
    expect(await storedRows(rig, bob.publicKey.toBase58())).toEqual([]);
    expect(await mailCount(rig, bob)).toBe(before);

    // rspamd back on the same address: the retry is scanned and delivered.
    await startTestRspamd({ ports });
    const retried = await exchange(rig.mxPort, 'friend@remote.example', to, 'try me later');
    expect(retried.data.code).toBe(250);
    const [text] = await deliveredTexts(rig, bob, 1);
    expect(text).toContain('try me later');
  });
});
