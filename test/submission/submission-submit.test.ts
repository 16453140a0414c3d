// submitMessage, the hand-off webmail's "compose through the server" calls:
// the same rules as the SMTP path, a stable error code for every refusal,
// and nothing left behind (queue, blobs, rate quota) when it fails.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BalanceGuard } from '../../src/core/limits/balance-guard.ts';
import { CostGuard, type PublicationLimits } from '../../src/core/limits/cost-guard.ts';
import { submitMessage } from '../../src/edge/submission/submit.ts';
import { SubmitError } from '../../src/edge/submission/submit-error.ts';
import { DOMAIN, message, startSubmissionRig } from '../support/submission-rig.ts';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SubmitError) return err.code;
    throw err;
  }
  throw new Error('expected a SubmitError');
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

describe('submitMessage (webmail hand-off)', () => {
  it('queues local and remote recipients and reports the split', async () => {
    const r = await startSubmissionRig();
    const wallet = r.alice.publicKey.toBase58();
    const result = await submitMessage(r.deps, {
      wallet,
      raw: Buffer.from(message(r.aliceAddress, r.bobAddress, 'from webmail')),
      envelopeFrom: r.aliceAddress,
      recipients: [r.bobAddress, 'friend@remote.example', r.bobAddress],
    });
    expect(result).toEqual({ msgid: expect.any(String), local: 1, remote: 1 });
    const [deliver] = await r.deliver.getJobs(['waiting', 'waiting-children']);
    expect(deliver?.data.msgid).toBe(result.msgid);
    const [outbound] = await r.outbound.getJobs(['waiting']);
    expect(outbound?.data).toMatchObject({ msgid: result.msgid, to: ['friend@remote.example'] });
    const stored = (await r.blobs.read(outbound?.data.blobKey ?? '')).toString('utf8');
    expect(stored).toContain(
      `Received: from mx.mail.test (authenticated submission, client address withheld)\r\n\tby mx.mail.test (Sealpost) with HTTP id ${result.msgid};`,
    );
    // The message had neither: RFC 6409 lets the submission server add them.
    expect(stored).toContain(`Message-ID: <${result.msgid}@mx.mail.test>`);
    expect(stored).toMatch(/\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000\r\n/);
  });

  it('refuses with stable codes: sender_not_owned, no_recipients, bad_recipient, postage_required, too_big, bad_message', async () => {
    const r = await startSubmissionRig({ maxMessageBytes: 2048 });
    const wallet = r.alice.publicKey.toBase58();
    const good = Buffer.from(message(r.aliceAddress, 'friend@remote.example'));
    const base = { wallet, raw: good, envelopeFrom: r.aliceAddress, recipients: ['friend@remote.example'] };
    expect(await codeOf(submitMessage(r.deps, { ...base, envelopeFrom: r.bobAddress }))).toBe(
      'sender_not_owned',
    );
    expect(
      await codeOf(
        submitMessage(r.deps, { ...base, raw: Buffer.from(message(r.bobAddress, 'x@remote.example')) }),
      ),
    ).toBe('sender_not_owned');
    // Another wallet's alias is not this wallet's address.
    expect(
      await codeOf(
        submitMessage(r.deps, {
          ...base,
          wallet: r.bob.publicKey.toBase58(),
          envelopeFrom: `alice@${DOMAIN}`,
        }),
      ),
    ).toBe('sender_not_owned');
    expect(await codeOf(submitMessage(r.deps, { ...base, recipients: [] }))).toBe('no_recipients');
    expect(await codeOf(submitMessage(r.deps, { ...base, recipients: ['no-domain'] }))).toBe('bad_recipient');
    expect(await codeOf(submitMessage(r.deps, { ...base, recipients: [`ghost@${DOMAIN}`] }))).toBe(
      'bad_recipient',
    );
    expect(
      await codeOf(
        submitMessage(r.deps, { ...base, recipients: [`${r.gated.publicKey.toBase58()}@${DOMAIN}`] }),
      ),
    ).toBe('postage_required');
    expect(await codeOf(submitMessage(r.deps, { ...base, raw: Buffer.alloc(4096, 0x61) }))).toBe('too_big');
    expect(await codeOf(submitMessage(r.deps, { ...base, raw: Buffer.from('From: x\nbare LF\n') }))).toBe(
      'bad_message',
    );
    expect(
      await codeOf(submitMessage(r.deps, { ...base, raw: Buffer.from('Subject: no from\r\n\r\nbody\r\n') })),
    ).toBe('bad_message');
    expect(await r.outbound.count()).toBe(0);
    expect(await r.deliver.count()).toBe(0);
    // Refusals take no send quota.
    expect(await r.redis.keys(`${r.prefix}:rl:wallet:*`)).toEqual([]);
  });

  it('rate_limited carries the seconds until the window opens', async () => {
    const r = await startSubmissionRig({ limits: { perHour: 0, perDay: 1 } });
    const wallet = r.alice.publicKey.toBase58();
    const input = {
      wallet,
      raw: Buffer.from(message(r.aliceAddress, 'friend@remote.example')),
      envelopeFrom: r.aliceAddress,
      recipients: ['friend@remote.example'],
    };
    await submitMessage(r.deps, input);
    const err = await submitMessage(r.deps, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmitError);
    expect((err as SubmitError).code).toBe('rate_limited');
    expect((err as SubmitError).temporary).toBe(true);
    const secs = (err as SubmitError).detail.retryAfterSecs ?? 0;
    expect(secs).toBeGreaterThan(0);
    expect(secs).toBeLessThanOrEqual(86_400);
  });

  it('with the queue down: unavailable, and no blob, job or quota is left behind', async () => {
    // A port nothing listens on: the flow producer cannot reach Redis.
    const r = await startSubmissionRig({ queueRedisUrl: 'redis://127.0.0.1:1' });
    const wallet = r.alice.publicKey.toBase58();
    for (const recipients of [['friend@remote.example'], [r.bobAddress, 'friend@remote.example']]) {
      const err = await submitMessage(r.deps, {
        wallet,
        raw: Buffer.from(message(r.aliceAddress, 'friend@remote.example')),
        envelopeFrom: r.aliceAddress,
        recipients,
      }).catch((e: unknown) => e);
      expect((err as SubmitError).code).toBe('unavailable');
    }
    expect(filesUnder(join(r.dir, 'blobs'))).toEqual([]);
    // Refunded in full: a window is either gone or back at zero.
    const windows = await r.redis.keys(`${r.prefix}:rl:wallet:${wallet}:submit-*`);
    for (const key of windows) expect(await r.redis.get(key)).toBe('0');
    expect(await r.outbound.count()).toBe(0);
  });

  it('charges local recipients to the MX cost guard: publication windows and the balance floor', async () => {
    const r = await startSubmissionRig();
    const off = { limit: 0, windowMs: 3_600_000 };
    const limits: PublicationLimits = {
      sender: { limit: 1, windowMs: 3_600_000 },
      recipient: off,
      overall: off,
      nullSender: off,
    };
    const guardOn = (rig: typeof r, extra: { balance?: BalanceGuard } = {}) =>
      new CostGuard({ redis: rig.redis, prefix: rig.prefix, limits, localDomains: [DOMAIN], ...extra });
    const inputs = (rig: typeof r) => {
      const toBob = {
        wallet: rig.alice.publicKey.toBase58(),
        raw: Buffer.from(message(rig.aliceAddress, rig.bobAddress, 'local')),
        envelopeFrom: rig.aliceAddress,
        recipients: [rig.bobAddress],
      };
      return { toBob, remote: { ...toBob, recipients: ['friend@remote.example'] } };
    };
    const deps = { ...r.deps, costGuard: guardOn(r) };
    const { toBob, remote } = inputs(r);
    expect(await submitMessage(deps, toBob)).toMatchObject({ local: 1, remote: 0 });
    // The sender's one publication is spent: the next local message waits, and says why.
    const err = await submitMessage(deps, toBob).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubmitError);
    expect((err as SubmitError).code).toBe('rate_limited');
    expect((err as SubmitError).message).toMatch(
      /^The publication limit for this sender is reached, try again in \d+ seconds$/,
    );
    expect((err as SubmitError).detail.recipient).toBe(r.bobAddress);
    expect(await r.deliver.getJobs(['waiting', 'waiting-children'])).toHaveLength(1);
    // Remote mail publishes nothing on chain and is not held back by it.
    expect(await submitMessage(deps, remote)).toMatchObject({ local: 0, remote: 1 });

    // A refusal later in the hand-off gives the publication back.
    const f = await startSubmissionRig({ limits: { perHour: 1, perDay: 100 } });
    const fGuard = guardOn(f);
    const fIn = inputs(f);
    expect(await submitMessage({ ...f.deps, costGuard: fGuard }, fIn.remote)).toMatchObject({ remote: 1 });
    const refused = await submitMessage({ ...f.deps, costGuard: fGuard }, fIn.toBob).catch((e: unknown) => e);
    expect((refused as SubmitError).message).toMatch(/^Send rate limit of 1 messages per hour reached/);
    expect((await fGuard.reserve(f.aliceAddress, f.bob.publicKey.toBase58())).ok).toBe(true);

    // Below the authority-balance floor, local recipients are deferred; remote ones still go.
    const balance = new BalanceGuard({
      read: () => r.chain.connection.getBalance(r.alice.publicKey),
      minLamports: Number.MAX_SAFE_INTEGER,
      intervalMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
    await balance.refresh();
    expect(balance.check().ok).toBe(false);
    const poor = { ...r.deps, costGuard: guardOn(r, { balance }) };
    const before = await r.deliver.count();
    const low = await submitMessage(poor, toBob).catch((e: unknown) => e);
    expect((low as SubmitError).code).toBe('unavailable');
    expect((low as SubmitError).message).toMatch(/cannot publish on chain/);
    expect(await r.deliver.count()).toBe(before);
    expect(await submitMessage(poor, remote)).toMatchObject({ remote: 1 });
  });
});
