// Whatever Redis loses, a message accepted on submission for remote
// recipients still leaves, once per domain: the submission records it in the
// outbound ledger before its 250, Redis loses every key of the stack while the
// spooler is stopped (a backlog), the reconcile step queues it again from the
// ledger, and the spooler started afterwards delivers each message to each
// remote exactly once. A domain already delivered before the loss is not sent
// to again; `queue reconcile --dry-run` reports without queueing. Real
// submission listener (SMTP AUTH over TLS), real Redis, real SQLite store,
// real spooler, remote MX doubles at their SMTP wire protocol.
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { DELIVERY_ATTEMPTS } from '../../delivery/backoff.ts';
import { reconcileSpool } from '../../delivery/reconcile.ts';
import { type Spooler, startSpooler } from '../../spooler/index.ts';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../src/contracts/inbound-jobs.ts';
import { createLogger } from '../../src/core/log.ts';
import { OutboundLedger } from '../../src/core/store/outbound-ledger.ts';
import { type DnsDouble, startDnsDouble } from '../support/doubles/dns-server.ts';
import { type RemoteMx, startRemoteMx } from '../support/doubles/remote-mx.ts';
import { eventually, PROBE_NAME, REDIS_URL, spoolerConfig } from '../support/spooler-rig.ts';
import { message, PASSWORD, type SubmissionRig, startSubmissionRig } from '../support/submission-rig.ts';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

interface World {
  rig: SubmissionRig;
  dns: DnsDouble;
  one: RemoteMx;
  two: RemoteMx;
  ledger: OutboundLedger;
  startSpooler(): Promise<Spooler>;
  submit(to: string[], subject: string): Promise<void>;
  flush(): Promise<number>;
  reconcile(dryRun?: boolean): ReturnType<typeof reconcileSpool>;
}

/** Remote domains one.test (127.0.0.41) and two.test (127.0.0.42, deferring while `twoDefers`). */
async function world(state: { twoDefers: boolean }): Promise<World> {
  const rig = await startSubmissionRig({ ledger: true });
  const one = await startRemoteMx({ host: '127.0.0.41' });
  cleanup.push(() => one.close());
  const two = await startRemoteMx({
    host: '127.0.0.42',
    port: one.port,
    rcpt: () => (state.twoDefers ? { code: 451, message: '4.3.0 try again later' } : null),
  });
  cleanup.push(() => two.close());
  const dns = await startDnsDouble({
    'one.test': { MX: [{ preference: 5, exchange: 'mx.one.test' }] },
    'mx.one.test': { A: ['127.0.0.41'] },
    'two.test': { MX: [{ preference: 5, exchange: 'mx.two.test' }] },
    'mx.two.test': { A: ['127.0.0.42'] },
  });
  dns.set(PROBE_NAME, 'A', ['127.0.0.1']);
  cleanup.push(() => dns.close());
  const { Redis } = await import('ioredis');
  const started: Spooler[] = [];
  cleanup.push(async () => {
    for (const s of started) await s.close();
  });
  const ledger = new OutboundLedger(rig.store.db);
  return {
    rig,
    dns,
    one,
    two,
    ledger,
    async startSpooler() {
      const s = await startSpooler({
        redis: () => new Redis(REDIS_URL, { maxRetriesPerRequest: null }),
        prefix: rig.prefix,
        blobs: rig.blobs,
        resolver: { servers: [{ host: dns.host, port: dns.port }] },
        config: spoolerConfig({ smtp_port: one.port, retry_schedule_secs: [1], mta_sts: false, dane: false }),
        logger: createLogger({ level: 'silent' }),
        db: rig.store.db,
        daneProbe: { name: PROBE_NAME, type: 'A' },
        dnsTimeoutMs: 1500,
      });
      started.push(s);
      return s;
    },
    async submit(to, subject) {
      const t = nodemailer.createTransport({
        host: '127.0.0.1',
        port: rig.port,
        secure: true,
        auth: { user: rig.aliceAddress, pass: PASSWORD },
        tls: { rejectUnauthorized: false },
      });
      try {
        const info = await t.sendMail({
          envelope: { from: rig.aliceAddress, to },
          raw: message(rig.aliceAddress, to.join(', '), subject),
        });
        expect(info.response).toMatch(/^250 /);
      } finally {
        t.close();
      }
    },
    async flush() {
      const keys = await rig.redis.keys(`${rig.prefix}:*`);
      return keys.length ? rig.redis.del(...keys) : 0;
    },
    reconcile(dryRun = false) {
      return reconcileSpool({
        redis: rig.redis,
        prefix: rig.prefix,
        blobs: rig.blobs,
        db: rig.store.db,
        policy: { attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
        graceMs: 0,
        dryRun,
      });
    },
  };
}

const subjectsAt = (mx: RemoteMx) => mx.accepted.map((m) => /^Subject: (.*)$/m.exec(m.raw.toString())?.[1]);

describe('outbound reconcile after Redis lost its data', () => {
  it('a backlog of submitted mail is rebuilt from the outbound ledger and each remote gets each message once', async () => {
    const w = await world({ twoDefers: false });
    for (let i = 0; i < 4; i++) await w.submit([`kim${i}@one.test`], `solo ${i}`);
    await w.submit(['lee@one.test', 'max@two.test'], 'pair');
    const open = await w.ledger.listBefore(Date.now(), 100);
    expect(open.map((e) => e.data.kind)).toEqual(Array(5).fill('submission'));

    // Redis loses every key of the stack while nothing has been sent.
    expect(await w.flush()).toBeGreaterThan(0);
    const intake = new Queue<OutboundJobData>(QUEUE_OUTBOUND, {
      connection: w.rig.redis,
      prefix: w.rig.prefix,
    });
    cleanup.push(() => intake.close());
    expect(await intake.getJobCounts('wait', 'delayed')).toEqual({ wait: 0, delayed: 0 });

    // A dry run reports and queues nothing.
    const dry = await w.reconcile(true);
    expect(dry.outbound).toMatchObject({ scanned: 5, withJobs: 0, recovered: 5, recoveredRecipients: 6 });
    expect((await intake.getJobCounts('wait')).wait).toBe(0);

    const run = await w.reconcile();
    expect(run.outbound).toMatchObject({ scanned: 5, withJobs: 0, recovered: 5, recoveredRecipients: 6 });
    // Run again before anything was sent: every message now has its job, nothing is queued twice.
    expect((await w.reconcile()).outbound).toMatchObject({ scanned: 5, withJobs: 5, recovered: 0 });

    await w.startSpooler();
    await eventually(
      () => (w.one.accepted.length >= 5 && w.two.accepted.length >= 1 ? true : undefined),
      30_000,
    );
    // The spooler is done with every message: the ledger is empty.
    await eventually(async () =>
      (await w.ledger.listBefore(Date.now(), 100)).length === 0 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(subjectsAt(w.one).sort()).toEqual(['pair', 'solo 0', 'solo 1', 'solo 2', 'solo 3']);
    expect(subjectsAt(w.two)).toEqual(['pair']);
    expect(w.one.accepted.find((m) => m.raw.toString().includes('Subject: pair'))?.to).toEqual([
      'lee@one.test',
    ]);
    // Nothing left to rebuild.
    expect((await w.reconcile()).outbound).toMatchObject({ scanned: 0, recovered: 0 });
  }, 90_000);

  it('a domain already delivered before the loss is not sent to again; the open one is', async () => {
    const state = { twoDefers: true };
    const w = await world(state);
    await w.submit(['ann@one.test', 'bob@two.test'], 'split');
    const [entry] = await w.ledger.listBefore(Date.now(), 10);
    const msgid = entry?.msgid as string;
    const spooler = await w.startSpooler();
    // one.test takes it; two.test defers (the job waits for its next attempt).
    await eventually(
      () => (w.one.accepted.length === 1 && w.two.seen.length === 0 ? true : undefined),
      20_000,
    );
    await eventually(async () =>
      (await w.ledger.doneDomains([msgid])).get(msgid)?.has('one.test') ? true : undefined,
    );
    await spooler.close();

    expect(await w.flush()).toBeGreaterThan(0);
    const run = await w.reconcile();
    expect(run.outbound).toMatchObject({ recovered: 1, recoveredRecipients: 1 });
    expect(run.outbound.entries).toEqual([
      { msgid, kind: 'submission', action: 'recovered', to: ['bob@two.test'] },
    ]);

    state.twoDefers = false;
    await w.startSpooler();
    await eventually(() => (w.two.accepted.length === 1 ? true : undefined), 30_000);
    await eventually(async () => ((await w.ledger.isOpen(msgid)) ? undefined : true));
    await new Promise((r) => setTimeout(r, 500));
    expect(w.one.accepted).toHaveLength(1);
    expect(w.two.accepted).toHaveLength(1);
    expect(w.two.accepted[0]?.to).toEqual(['bob@two.test']);
  }, 90_000);

  it('a message whose every domain ended is finished by reconcile, not sent again', async () => {
    const w = await world({ twoDefers: false });
    await w.submit(['cat@one.test'], 'ended');
    const [entry] = await w.ledger.listBefore(Date.now(), 10);
    const msgid = entry?.msgid as string;
    // As if the domain job ended and the process died before finishing the row, then Redis lost it all.
    await w.ledger.domainsDone(msgid, ['one.test'], 'delivered');
    await w.flush();
    const run = await w.reconcile();
    expect(run.outbound).toMatchObject({ recovered: 0, finished: 1 });
    expect(await w.ledger.isOpen(msgid)).toBe(false);
    expect(await w.rig.blobs.exists(entry?.data.blobKey as string)).toBe(false);
    await w.startSpooler();
    await new Promise((r) => setTimeout(r, 1000));
    expect(w.one.seen).toHaveLength(0);
  }, 60_000);
});
