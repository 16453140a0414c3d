// Per-session error limits (src/edge/mx/error-limit.ts) over real SMTP: after
// `soft` errors every reply comes `sleepMs` later, at `hard` errors the
// server answers 421 4.7.0 and closes, a delivered message clears the count,
// and a flood of refused RCPTs writes one summary line per session instead
// of a line per RCPT. On the MX and on a submission listener.
import { describe, expect, it } from 'vitest';
import { LineClient, startMxRig } from '../support/mx-rig.ts';
import { startSubmissionRig } from '../support/submission-rig.ts';

const LIMITS = { soft: 2, hard: 4, sleepMs: 300 };
const REFUSED = 'RCPT TO:<someone@elsewhere.example>';

function counter(text: string, action: string, listener = 'mx'): number {
  const m = new RegExp(
    `sealpost_smtp_session_errors_total\\{listener="${listener}",action="${action}"\\} (\\d+)`,
  ).exec(text);
  return Number(m?.[1] ?? 0);
}

describe('MX error limits', () => {
  it('delays replies after the soft limit and closes with 421 4.7.0 at the hard limit', async () => {
    const rig = await startMxRig({ errorLimits: LIMITS });
    const c = await LineClient.open(rig.port);
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    expect((await c.cmd('MAIL FROM:<a@remote.example>')).code).toBe(250);
    // Error 1 (our relay refusal) and error 2 (a syntax error the library answers itself).
    const first = await c.cmd(REFUSED);
    expect(first.code).toBe(550);
    expect((await c.cmd('RCPT TO:not-an-address')).code).toBe(501);
    // The (soft+1)th reply waits: a good command too, and then a third error.
    const noop = await c.cmd('NOOP');
    expect(noop.code).toBe(250);
    expect(noop.ms).toBeGreaterThanOrEqual(LIMITS.sleepMs - 5);
    const third = await c.cmd(REFUSED);
    expect(third.code).toBe(550);
    expect(third.ms).toBeGreaterThanOrEqual(LIMITS.sleepMs - 5);
    // The fourth error is answered, then the session ends.
    const fourth = await c.cmd('FOO');
    expect(fourth.code).toBe(500);
    expect(fourth.ms).toBeGreaterThanOrEqual(LIMITS.sleepMs - 5);
    expect(await c.next()).toEqual({ code: 421, text: '4.7.0 mx.mail.test Error: too many errors' });
    await c.closed;

    await until(() => rig.logs.withMsg('session errors').length > 0);
    const summary = rig.logs.withMsg('session errors');
    expect(summary).toHaveLength(1);
    expect(summary[0]).toMatchObject({
      errors: 4,
      delayed: 3,
      closed: 'too many errors',
      replies: { '550 5.7.1': 2, '501': 1, '500': 1 },
      refused: [
        { command: 'rcpt', address: 'someone@elsewhere.example', code: 550 },
        { command: 'rcpt', address: 'someone@elsewhere.example', code: 550 },
      ],
    });
    const text = await rig.metrics.render();
    expect(counter(text, 'error')).toBe(4);
    expect(counter(text, 'delayed')).toBe(3);
    expect(counter(text, 'closed')).toBe(1);
  }, 60_000);

  it('leaves a well-behaved session with a few errors alone; a delivered message clears the count', async () => {
    const rig = await startMxRig({ errorLimits: LIMITS });
    const c = await LineClient.open(rig.port);
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    for (let round = 0; round < 3; round++) {
      expect((await c.cmd('MAIL FROM:<sender@remote.example>')).code).toBe(250);
      // One mistyped recipient per message, next to the right one.
      expect((await c.cmd(`RCPT TO:<nobody@${'mail.test'}>`)).code).toBe(550);
      expect((await c.cmd(`RCPT TO:<${rig.rcpt}>`)).code).toBe(250);
      expect((await c.cmd('DATA')).code).toBe(354);
      expect((await c.cmd(`Subject: round ${round}\r\n\r\nhello\r\n.`)).code).toBe(250);
    }
    // Without the resets this would be the fourth error, past the hard limit.
    expect((await c.cmd('MAIL FROM:<sender@remote.example>')).code).toBe(250);
    expect((await c.cmd(REFUSED)).code).toBe(550);
    expect((await c.cmd('QUIT')).code).toBe(221);
    await c.closed;
    await until(() => rig.logs.withMsg('session errors').length > 0);
    const text = await rig.metrics.render();
    expect(counter(text, 'error')).toBe(4);
    expect(counter(text, 'delayed')).toBe(0);
    expect(counter(text, 'closed')).toBe(0);
    const [summary] = rig.logs.withMsg('session errors');
    expect(summary).toMatchObject({ errors: 4, replies: { '550 5.1.1': 3, '550 5.7.1': 1 } });
    expect(summary).not.toHaveProperty('closed');
    expect(summary).not.toHaveProperty('delayed');
    expect(rig.logs.withMsg('message accepted')).toHaveLength(3);
  }, 60_000);

  it('writes one line per session for a flood of refused RCPTs, and a bounded number of debug lines', async () => {
    const rig = await startMxRig({ errorLimits: { soft: 10, hard: 20, sleepMs: 0 }, logLevel: 'debug' });
    const started = performance.now();
    const sessions = 5;
    for (let i = 0; i < sessions; i++) {
      const c = await LineClient.open(rig.port);
      // Pipelined: the server reads on only as it answers, and stops at the hard limit.
      c.write(['EHLO flood.example', 'MAIL FROM:<flood@remote.example>', ...Array(500).fill(REFUSED)]);
      await c.closed;
    }
    const seconds = (performance.now() - started) / 1000;
    await until(() => rig.logs.withMsg('session errors').length === sessions);
    for (const line of rig.logs.withMsg('session errors')) {
      expect(line).toMatchObject({ errors: 20, closed: 'too many errors', replies: { '550 5.7.1': 20 } });
      expect((line.refused as unknown[]).length).toBe(5);
    }
    const debug = rig.logs.withMsg('rcpt refused');
    // 100 refusals; at most 10 debug lines per second of flood.
    expect(debug.length).toBeGreaterThan(0);
    expect(debug.length).toBeLessThanOrEqual(10 * (Math.ceil(seconds) + 1));
    // Nothing else is logged per refused RCPT at info.
    const info = rig.logs.lines.filter((l) => (l.level as number) >= 30 && l.msg !== 'MX listening');
    expect(info).toHaveLength(sessions);
  }, 60_000);
});

describe('submission error limits', () => {
  it('counts, delays and closes on a submission listener too', async () => {
    const r = await startSubmissionRig({ errorLimits: LIMITS });
    const c = await LineClient.open(r.port, { tls: true });
    expect((await c.cmd('EHLO client.example')).code).toBe(250);
    // No AUTH yet: the library's 530 counts like any error.
    expect((await c.cmd('MAIL FROM:<x@remote.example>')).code).toBe(530);
    expect((await c.cmd('MAIL FROM:<x@remote.example>')).code).toBe(530);
    const third = await c.cmd('MAIL FROM:<x@remote.example>');
    expect(third.code).toBe(530);
    expect(third.ms).toBeGreaterThanOrEqual(LIMITS.sleepMs - 5);
    expect((await c.cmd('MAIL FROM:<x@remote.example>')).code).toBe(530);
    expect(await c.next()).toEqual({ code: 421, text: '4.7.0 mx.mail.test Error: too many errors' });
    await c.closed;
  }, 60_000);
});

async function until(probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
