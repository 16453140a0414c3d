// `[spam] scan_submission`: mail submitted on 465 (SMTP AUTH over TLS) is
// scored by the real rspamd as outbound, with the authenticated account as
// rspamd's User, before anything is queued: reject → 550 5.7.1 and nothing
// queued or stored, soft reject → 451 4.7.1, clean mail queued as before.
// With rspamd gone and on_error = "defer" the submission gets 451 and the
// client keeps its message.
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../src/contracts/inbound-jobs.ts';
import { SpamFilter } from '../../src/mail/spam/filter.ts';
import { GTUBE, SOFT_MARK, startTestRspamd, USER_MARK } from '../support/rspamd.ts';
import { message, PASSWORD, type SubmissionRig, startSubmissionRig } from '../support/submission-rig.ts';

function filter(url: string, onError: 'accept' | 'defer' = 'accept'): SpamFilter {
  return new SpamFilter({
    url,
    timeoutMs: 3000,
    onError,
    maxScanBytes: 1024 * 1024,
    publishJunk: false,
    logger: pino({ level: 'silent' }),
  });
}

async function submit(
  rig: SubmissionRig,
  body: string,
): Promise<{ ok: boolean; code?: number; text: string }> {
  const t = nodemailer.createTransport({
    host: '127.0.0.1',
    port: rig.port,
    secure: true,
    auth: { user: rig.aliceAddress, pass: PASSWORD },
    tls: { rejectUnauthorized: false },
  });
  try {
    const info = await t.sendMail({
      envelope: { from: rig.aliceAddress, to: ['kim@remote.example'] },
      raw: message(rig.aliceAddress, 'kim@remote.example', 'outbound', body),
    });
    return { ok: true, text: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string };
    return { ok: false, code: e.responseCode, text: e.response ?? String(err) };
  } finally {
    t.close();
  }
}

async function outboundJobs(rig: SubmissionRig): Promise<number> {
  const q = new Queue<OutboundJobData>(QUEUE_OUTBOUND, { connection: rig.redis, prefix: rig.prefix });
  try {
    const c = await q.getJobCounts('wait', 'delayed', 'active', 'completed');
    return Object.values(c).reduce((a, b) => a + b, 0);
  } finally {
    await q.close();
  }
}

describe('[spam] scan_submission', { timeout: 120_000 }, () => {
  it('refuses spam with 550 5.7.1 (rspamd told the User), defers soft rejects, queues clean mail', async () => {
    const rspamd = await startTestRspamd();
    const rig = await startSubmissionRig({ spam: filter(rspamd.url) });

    const spam = await submit(rig, `Buy now\r\n${GTUBE}`);
    expect(spam).toMatchObject({ ok: false, code: 550 });
    expect(spam.text).toMatch(/^550 5\.7\.1 /);
    const user = await submit(rig, `who am I ${USER_MARK}`);
    expect(user.code).toBe(550);
    expect(user.text).toContain(`Sealpost test user ${rig.alice.publicKey.toBase58()}`);
    const soft = await submit(rig, `maybe ${SOFT_MARK}`);
    expect(soft).toMatchObject({ ok: false, code: 451 });
    expect(soft.text).toMatch(/^451 4\.7\.1 Sealpost test soft reject/);
    // Nothing of the refused ones was queued or stored.
    expect(await outboundJobs(rig)).toBe(0);
    const blobs: string[] = [];
    for await (const b of rig.blobs.list('sha256')) blobs.push(b.key);
    expect(blobs).toEqual([]);

    const clean = await submit(rig, 'Lunch on Friday?');
    expect(clean.ok).toBe(true);
    expect(clean.text).toMatch(/^250 /);
    expect(await outboundJobs(rig)).toBe(1);
  });

  it('with rspamd gone: on_error = "defer" answers 451 4.7.1, "accept" queues unscanned', async () => {
    const rspamd = await startTestRspamd();
    const url = rspamd.url;
    await rspamd.close();
    const deferring = await startSubmissionRig({ spam: filter(url, 'defer') });
    const deferred = await submit(deferring, 'hello');
    expect(deferred).toMatchObject({ ok: false, code: 451 });
    expect(deferred.text).toMatch(/^451 4\.7\.1 /);
    expect(await outboundJobs(deferring)).toBe(0);

    const accepting = await startSubmissionRig({ spam: filter(url, 'accept') });
    expect((await submit(accepting, 'hello')).ok).toBe(true);
    expect(await outboundJobs(accepting)).toBe(1);
  });
});
