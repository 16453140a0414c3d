// A message's life in the spooler: the delayed-delivery DSN (once), the
// failure DSN when its lifetime runs out, no DSN to the null sender or
// against NOTIFY=NEVER, one slow domain not blocking another, and the crash
// drill for the exactly-once hand-off (a spooler process killed right after
// the remote's 250 is recorded never sends that message again).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { SpoolerConfig } from '../../src/core/config/types.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import {
  eventually,
  PROBE_NAME,
  REDIS_URL,
  type SpoolerRig,
  startSpoolerRig,
} from '../support/spooler-rig.ts';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function remote(opts: Parameters<typeof startRemoteMx>[0] = {}): Promise<RemoteMx> {
  const mx = await startRemoteMx(opts);
  cleanup.push(() => mx.close());
  return mx;
}

async function rig(opts: Parameters<typeof startSpoolerRig>[0]): Promise<SpoolerRig> {
  const r = await startSpoolerRig(opts);
  cleanup.push(() => r.close());
  return r;
}

const HOUR = 3_600_000;

/** Remote domain `busy.test` on 127.0.0.20 that always answers 4xx, and the sender's MX on 127.0.0.21. */
async function busyDomain(config: Partial<SpoolerConfig> = {}) {
  const busy = await remote({
    host: '127.0.0.20',
    rcpt: () => ({ code: 452, message: '4.2.2 mailbox full' }),
  });
  const senderMx = await remote({ host: '127.0.0.21', port: busy.port });
  const r = await rig({
    config: { smtp_port: busy.port, retry_schedule_secs: [1], ...config },
    zone: {
      'busy.test': { MX: [{ preference: 5, exchange: 'mx.busy.test' }] },
      'mx.busy.test': { A: ['127.0.0.20'] },
      'sealpost.test': { MX: [{ preference: 5, exchange: 'mx.sealpost.test' }] },
      'mx.sealpost.test': { A: ['127.0.0.21'] },
    },
  });
  return { r, busy, senderMx };
}

describe('spooler DSNs and lifetime', () => {
  it('deferred, then one delayed DSN after delay_dsn_after_secs, then bounced with a failure DSN at the end of the lifetime', async () => {
    const { r, senderMx } = await busyDomain({ delay_dsn_after_secs: 4 * 3600, lifetime_secs: 10 * 3600 });
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['kim@busy.test'] });
    await r.jobWhere(msgid, 'busy.test', (d) => d.attempts >= 1);
    expect(senderMx.accepted).toHaveLength(0);

    r.clock.advance(4 * HOUR + 1000);
    const notified = await r.jobWhere(msgid, 'busy.test', (d) => d.delayNotified);
    const delayed = await eventually(() => senderMx.accepted[0]);
    const text = delayed.raw.toString();
    expect(delayed.from).toBe('');
    expect(text).toContain('Subject: Delayed Mail (still being retried)');
    expect(text).toMatch(/Action: delayed\r\nStatus: 4\.2\.2/);
    expect(text).toContain('Will-Retry-Until:');
    expect(text).toContain('mx.busy.test said: 452 4.2.2 mailbox full');

    // Further attempts send no second delayed DSN.
    await r.jobWhere(msgid, 'busy.test', (d) => d.attempts >= notified.attempts + 2);
    expect(senderMx.accepted).toHaveLength(1);

    r.clock.advance(6 * HOUR);
    const data = await r.done(msgid, 'busy.test');
    expect(data.final['kim@busy.test']).toMatchObject({ state: 'failed', status: '5.4.7' });
    const failed = await eventually(() => senderMx.accepted[1]);
    const ftext = failed.raw.toString();
    expect(ftext).toContain('Subject: Undelivered Mail Returned to Sender');
    expect(ftext).toMatch(/Action: failed\r\nStatus: 5\.4\.7/);
    expect(ftext).toContain('last error: mx.busy.test said: 452 4.2.2 mailbox full');
    expect(senderMx.accepted).toHaveLength(2);
  });

  it('bounced after max_attempts even within the lifetime', async () => {
    const { r, senderMx } = await busyDomain({ max_attempts: 2 });
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['lee@busy.test'] });
    const data = await r.done(msgid, 'busy.test');
    expect(data.attempts).toBe(2);
    expect(data.final['lee@busy.test']).toMatchObject({ state: 'failed', status: '5.4.7' });
    await eventually(() => senderMx.accepted[0]);
  });

  it('never a DSN to the null sender, nor against NOTIFY=NEVER', async () => {
    const { r, senderMx } = await busyDomain({ max_attempts: 1, delay_dsn_after_secs: 1 });
    const a = await r.send({ from: '', to: ['max@busy.test'] });
    const b = await r.send({ from: 'ann@sealpost.test', to: ['ned@busy.test'], dsn: { notify: 'NEVER' } });
    expect((await r.done(a, 'busy.test')).final['max@busy.test']?.state).toBe('failed');
    expect((await r.done(b, 'busy.test')).final['ned@busy.test']?.state).toBe('failed');
    // Let any DSN that would have been queued travel.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(senderMx.accepted).toHaveLength(0);
    expect(senderMx.stats.connections).toBe(0);
  });

  it('delivered: a slow domain holds at most per_domain_concurrency sessions while another domain is served', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const slow = await remote({ host: '127.0.0.22', greetingGate: () => gate });
    const fast = await remote({ host: '127.0.0.23', port: slow.port });
    const r = await rig({
      config: { smtp_port: slow.port, concurrency: 4, per_domain_concurrency: 2 },
      zone: {
        'slow.test': { MX: [{ preference: 5, exchange: 'mx.slow.test' }] },
        'mx.slow.test': { A: ['127.0.0.22'] },
        'fast.test': { MX: [{ preference: 5, exchange: 'mx.fast.test' }] },
        'mx.fast.test': { A: ['127.0.0.23'] },
      },
    });
    const slowIds = [];
    for (let i = 0; i < 5; i++)
      slowIds.push(await r.send({ from: 'ann@sealpost.test', to: [`s${i}@slow.test`] }));
    // Two sessions to the slow domain hang at the greeting; the other jobs wait for a slot.
    await eventually(() => (slow.stats.open >= 2 ? true : undefined));
    const fastId = await r.send({ from: 'ann@sealpost.test', to: ['quick@fast.test'] });
    expect((await r.done(fastId, 'fast.test')).final['quick@fast.test']?.state).toBe('delivered');
    expect(slow.accepted).toHaveLength(0);
    expect(slow.stats.connections).toBe(2);
    open();
    for (const id of slowIds) await r.done(id, 'slow.test', 30_000);
    expect(slow.accepted).toHaveLength(5);
    expect(slow.stats.maxOpen).toBe(2);
    expect(fast.accepted).toHaveLength(1);
  });

  it('exactly once: a spooler killed right after the recorded 250 never sends that message again', {
    timeout: 90_000,
  }, async () => {
    const mx = await remote({ host: '127.0.0.24' });
    const r = await rig({
      start: false,
      config: { smtp_port: mx.port },
      zone: {
        'once.test': { MX: [{ preference: 5, exchange: 'mx.once.test' }] },
        'mx.once.test': { A: ['127.0.0.24'] },
      },
    });
    const setup = {
      prefix: r.prefix,
      redisUrl: REDIS_URL,
      blobDir: r.blobDir,
      dns: { host: r.dns.host, port: r.dns.port },
      probe: PROBE_NAME,
      config: r.config,
    };
    const child = spawn(process.execPath, ['bin/run-ts.js', 'test/fixtures/spooler/crash-child.ts'], {
      env: { ...process.env, SPOOLER_CHILD: JSON.stringify(setup) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanup.push(() => void child.kill('SIGKILL'));
    const lines = createInterface({ input: child.stdout });
    const seen: string[] = [];
    lines.on('line', (l) => seen.push(l));
    await eventually(() => (seen.includes('READY') ? true : undefined), 20_000);

    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['olga@once.test', 'pat@once.test'] });
    const handoff = await eventually(() => seen.find((l) => l.startsWith('HANDOFF')), 20_000);
    expect(handoff).toContain('olga@once.test');
    expect(mx.accepted).toHaveLength(1);
    // The crash: after the record, before the job is acknowledged.
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const job = await r.deliver.getJob(`${msgid}~once.test`);
    expect(await job?.getState()).toBe('active');

    // A new spooler picks the stalled job up and finds nothing left to send.
    await r.restart({ lockDurationMs: 2000 });
    const data = await r.done(msgid, 'once.test', 30_000);
    expect(data.final['olga@once.test']?.state).toBe('delivered');
    expect(data.final['pat@once.test']?.state).toBe('delivered');
    // The attempt count was written with the hand-off: the one attempt that delivered.
    expect(data.attempts).toBe(1);
    expect(mx.accepted).toHaveLength(1);
    expect(mx.stats.mailFrom).toBe(1);
  });
});
