// Outbound routing over real sockets: MX lookups at the DNS double, remote
// MX hosts as smtp-server instances on loopback addresses (127.0.0.x, one
// port), and the outcome of each case named: delivered, deferred, bounced.
import { simpleParser } from 'mailparser';
import { afterEach, describe, expect, it } from 'vitest';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { eventually, type SpoolerRig, startSpoolerRig } from '../support/spooler-rig.ts';

const cleanup: (() => Promise<void>)[] = [];
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

/** The sender's domain, whose MX (on 127.0.0.9) collects the DSNs the spooler sends back. */
async function senderDomain(r: SpoolerRig, port: number): Promise<RemoteMx> {
  const mx = await remote({ host: '127.0.0.9', port });
  r.dns.set('sealpost.test', 'MX', [{ preference: 10, exchange: 'mx.sealpost.test' }]);
  r.dns.set('mx.sealpost.test', 'A', ['127.0.0.9']);
  return mx;
}

describe('spooler routing', () => {
  it('delivered: MX hosts in preference order, the unreachable primary skipped', async () => {
    const backup = await remote({ host: '127.0.0.3' });
    const r = await rig({
      config: { smtp_port: backup.port },
      zone: {
        'remote.test': {
          MX: [
            { preference: 20, exchange: 'backup.remote.test' },
            { preference: 10, exchange: 'primary.remote.test' },
          ],
        },
        // Nothing listens on 127.0.0.2 at this port: connection refused.
        'primary.remote.test': { A: ['127.0.0.2'] },
        'backup.remote.test': { A: ['127.0.0.3'] },
      },
    });
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['bob@remote.test', 'carol@REMOTE.test'] });
    const data = await r.done(msgid, 'remote.test');
    expect(data.final['bob@remote.test']?.state).toBe('delivered');
    expect(data.final['carol@REMOTE.test']?.state).toBe('delivered');
    expect(data.attempts).toBe(1);
    expect(backup.accepted).toHaveLength(1);
    expect(backup.accepted[0]?.to.sort()).toEqual(['bob@remote.test', 'carol@REMOTE.test'].sort());
    expect(backup.accepted[0]?.from).toBe('ann@sealpost.test');
    // Preference order: the primary was asked for first.
    const order = r.dns.queries.filter((q) => q.type === 'A').map((q) => q.name);
    expect(order.indexOf('primary.remote.test')).toBeLessThan(order.indexOf('backup.remote.test'));
  });

  it('delivered: equal preferences are tried in random order (the injected randomness decides)', async () => {
    const a = await remote({ host: '127.0.0.4' });
    const b = await remote({ host: '127.0.0.5', port: a.port });
    const zone = {
      'eq.test': {
        MX: [
          { preference: 10, exchange: 'a.eq.test' },
          { preference: 10, exchange: 'b.eq.test' },
        ],
      },
      'a.eq.test': { A: ['127.0.0.4'] },
      'b.eq.test': { A: ['127.0.0.5'] },
    };
    // random() → 0 swaps the two; 0.99 keeps the answer's order.
    const first = await rig({ config: { smtp_port: a.port }, zone, extra: { random: () => 0 } });
    await first.done(await first.send({ from: 'ann@sealpost.test', to: ['x@eq.test'] }), 'eq.test');
    const second = await rig({ config: { smtp_port: a.port }, zone, extra: { random: () => 0.99 } });
    await second.done(await second.send({ from: 'ann@sealpost.test', to: ['y@eq.test'] }), 'eq.test');
    expect([a.accepted.length, b.accepted.length]).toEqual([1, 1]);
    expect(a.accepted[0]?.to).not.toEqual(b.accepted[0]?.to);
  });

  it('delivered: implicit MX (no MX records, the domain has an address)', async () => {
    const mx = await remote({ host: '127.0.0.6' });
    const r = await rig({
      config: { smtp_port: mx.port },
      zone: { 'plain.test': { A: ['127.0.0.6'], TXT: ['v=spf1 -all'] } },
    });
    const data = await r.done(
      await r.send({ from: 'ann@sealpost.test', to: ['dan@plain.test'] }),
      'plain.test',
    );
    expect(data.final['dan@plain.test']?.state).toBe('delivered');
    expect(mx.accepted).toHaveLength(1);
  });

  it('bounced at once: null MX (RFC 7505), and the sender gets a failure DSN', async () => {
    const port = (await remote({ host: '127.0.0.8' })).port;
    const r = await rig({
      config: { smtp_port: port },
      zone: { 'nomail.test': { MX: [{ preference: 0, exchange: '.' }] } },
    });
    const senderMx = await senderDomain(r, port);
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['eve@nomail.test'] });
    const data = await r.done(msgid, 'nomail.test');
    expect(data.final['eve@nomail.test']).toMatchObject({ state: 'failed', status: '5.1.10' });
    expect(data.attempts).toBe(1);
    const dsn = await eventually(() => senderMx.accepted[0]);
    expect(dsn.from).toBe('');
    expect(dsn.to).toEqual(['ann@sealpost.test']);
    const parsed = await simpleParser(dsn.raw);
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/report' });
    expect(dsn.raw.toString()).toMatch(/Action: failed\r\nStatus: 5\.1\.10/);
    expect(dsn.raw.toString()).toContain('Final-Recipient: rfc822; eve@nomail.test');
  });

  it('bounced at once: the domain does not exist (NXDOMAIN); a bad address fails without a lookup', async () => {
    const r = await rig({});
    const msgid = await r.send({ from: '', to: ['who@nowhere.test', 'not-an-address'] });
    const data = await r.done(msgid, 'nowhere.test');
    expect(data.final['who@nowhere.test']).toMatchObject({ state: 'failed', status: '5.1.2' });
    const bad = await r.done(msgid, 'invalid');
    expect(bad.final['not-an-address']).toMatchObject({ state: 'failed', status: '5.1.3' });
    // Null sender: no DSN at all.
    expect(await r.intake.getJobCounts('wait', 'active', 'completed', 'delayed')).toMatchObject({
      completed: 1,
    });
  });

  it('deferred then delivered: 4xx at RCPT is retried on the schedule', async () => {
    let tries = 0;
    const mx = await remote({
      host: '127.0.0.10',
      rcpt: () => (++tries < 3 ? { code: 451, message: '4.3.0 greylisted, try later' } : null),
    });
    const r = await rig({
      config: { smtp_port: mx.port, retry_schedule_secs: [1] },
      zone: {
        'grey.test': { MX: [{ preference: 1, exchange: 'mx.grey.test' }] },
        'mx.grey.test': { A: ['127.0.0.10'] },
      },
    });
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['fred@grey.test'] });
    const after1 = await r.jobWhere(msgid, 'grey.test', (d) => d.attempts >= 1);
    expect(after1.lastTemporary['fred@grey.test']).toMatchObject({ status: '4.3.0' });
    expect(after1.final['fred@grey.test']).toBeUndefined();
    const data = await r.done(msgid, 'grey.test');
    expect(data.attempts).toBe(3);
    expect(data.final['fred@grey.test']?.state).toBe('delivered');
    expect(mx.accepted).toHaveLength(1);
  });

  it('bounced now for 5xx recipients, delivered for the rest of the same message', async () => {
    const mx = await remote({
      host: '127.0.0.11',
      rcpt: (a) => (a === 'nobody@mixed.test' ? { code: 550, message: '5.1.1 no such user' } : null),
    });
    const r = await rig({
      config: { smtp_port: mx.port },
      zone: {
        'mixed.test': { MX: [{ preference: 1, exchange: 'mx.mixed.test' }] },
        'mx.mixed.test': { A: ['127.0.0.11'] },
      },
    });
    const senderMx = await senderDomain(r, mx.port);
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['nobody@mixed.test', 'gina@mixed.test'] });
    const data = await r.done(msgid, 'mixed.test');
    expect(data.final['gina@mixed.test']?.state).toBe('delivered');
    expect(data.final['nobody@mixed.test']).toMatchObject({ state: 'failed', status: '5.1.1' });
    expect(mx.accepted[0]?.to).toEqual(['gina@mixed.test']);
    const dsn = await eventually(() => senderMx.accepted[0]);
    const text = dsn.raw.toString();
    expect(text).toContain('Final-Recipient: rfc822; nobody@mixed.test');
    expect(text).not.toContain('Final-Recipient: rfc822; gina@mixed.test');
    expect(text).toMatch(/Diagnostic-Code: smtp; mx\.mixed\.test said: 550 5\.1\.1 no such user/);
    expect(text).toContain('Remote-MTA: dns; mx.mixed.test');
  });

  it('bounced now: 5xx at the end of DATA', async () => {
    const mx = await remote({
      host: '127.0.0.12',
      data: () => ({ code: 554, message: '5.7.1 message refused' }),
    });
    const r = await rig({
      config: { smtp_port: mx.port },
      zone: {
        'refuse.test': { MX: [{ preference: 1, exchange: 'mx.refuse.test' }] },
        'mx.refuse.test': { A: ['127.0.0.12'] },
      },
    });
    const data = await r.done(await r.send({ from: '', to: ['h@refuse.test'] }), 'refuse.test');
    expect(data.final['h@refuse.test']).toMatchObject({ state: 'failed', status: '5.7.1' });
    expect(mx.accepted).toHaveLength(0);
  });

  it('deferred then delivered: the remote drops the connection in the middle of DATA', async () => {
    const mx = await remote({ host: '127.0.0.13', dropMidData: (n) => n === 0 });
    const r = await rig({
      config: { smtp_port: mx.port, retry_schedule_secs: [1] },
      zone: {
        'drop.test': { MX: [{ preference: 1, exchange: 'mx.drop.test' }] },
        'mx.drop.test': { A: ['127.0.0.13'] },
      },
    });
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['ivy@drop.test'] });
    const first = await r.jobWhere(msgid, 'drop.test', (d) => d.attempts >= 1);
    expect(first.final['ivy@drop.test']).toBeUndefined();
    expect(first.lastTemporary['ivy@drop.test']?.status).toMatch(/^4\./);
    const data = await r.done(msgid, 'drop.test');
    expect(data.final['ivy@drop.test']?.state).toBe('delivered');
    expect(data.attempts).toBe(2);
    expect(mx.accepted).toHaveLength(1);
  });

  it('delivered over one connection: a burst to one MX reuses the session; one the remote dropped is replaced', async () => {
    const mx = await remote({ host: '127.0.0.14', idleTimeoutMs: 700 });
    const r = await rig({
      config: { smtp_port: mx.port },
      zone: {
        'burst.test': { MX: [{ preference: 1, exchange: 'mx.burst.test' }] },
        'mx.burst.test': { A: ['127.0.0.14'] },
      },
    });
    for (const who of ['k1', 'k2', 'k3'])
      await r.done(await r.send({ from: 'ann@sealpost.test', to: [`${who}@burst.test`] }), 'burst.test');
    expect(mx.accepted.map((m) => m.to[0])).toEqual(['k1@burst.test', 'k2@burst.test', 'k3@burst.test']);
    expect(mx.stats.connections).toBe(1);
    // The remote closes the idle session before the spooler's cache would.
    await eventually(() => (mx.stats.open === 0 ? true : undefined));
    const data = await r.done(
      await r.send({ from: 'ann@sealpost.test', to: ['k4@burst.test'] }),
      'burst.test',
    );
    expect(data.final['k4@burst.test']?.state).toBe('delivered');
    expect(data.attempts).toBe(1);
    expect(mx.stats.connections).toBe(2);
  });

  it('delivered once: a cached session that dies at MAIL FROM is replaced at once, the message sent once', async () => {
    // The second MAIL FROM (the first over the cached session) finds the remote gone.
    const mx = await remote({ host: '127.0.0.15', dropAtMailFrom: (n) => n === 1 });
    const r = await rig({
      config: { smtp_port: mx.port },
      zone: {
        'lost.test': { MX: [{ preference: 1, exchange: 'mx.lost.test' }] },
        'mx.lost.test': { A: ['127.0.0.15'] },
      },
    });
    await r.done(await r.send({ from: 'ann@sealpost.test', to: ['m1@lost.test'] }), 'lost.test');
    const data = await r.done(await r.send({ from: 'ann@sealpost.test', to: ['m2@lost.test'] }), 'lost.test');
    expect(data.final['m2@lost.test']?.state).toBe('delivered');
    expect(data.attempts).toBe(1);
    expect(mx.accepted.map((m) => m.to[0])).toEqual(['m1@lost.test', 'm2@lost.test']);
    expect(mx.stats.connections).toBe(2);
    expect(mx.stats.mailFrom).toBe(3);
  });

  it('deferred: a DNS failure (SERVFAIL) at the MX lookup is temporary', async () => {
    const r = await rig({ zone: { 'broken.test': { MX: [{ preference: 1, exchange: 'mx.broken.test' }] } } });
    r.dns.setFault('broken.test', 'servfail');
    const msgid = await r.send({ from: 'ann@sealpost.test', to: ['jo@broken.test'] });
    const data = await r.jobWhere(msgid, 'broken.test', (d) => d.attempts >= 1);
    expect(data.lastTemporary['jo@broken.test']).toMatchObject({ status: '4.4.3' });
    expect(data.final['jo@broken.test']).toBeUndefined();
  });
});
