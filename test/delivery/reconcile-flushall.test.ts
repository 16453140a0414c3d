// Whatever Redis loses, every acknowledged message is delivered once: the
// MX runs with its workers stopped (a backlog, as during a chain outage),
// the stack's keys are flushed (FLUSHALL of a private Redis; here the
// stack's prefix on the shared one), the reconcile step rebuilds the jobs
// from the spool's manifests with the same ids, and the workers started
// afterwards deliver each message exactly once. An unreadable spool entry is
// moved to spool-corrupt/ and reported, and never stops the others. Real
// serve processes in-process, real devnet, real Redis, real pind.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Keypair } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { DELIVERY_ATTEMPTS } from '../../delivery/backoff.ts';
import { type ReconcileResult, reconcileMetrics, reconcileSpool } from '../../delivery/reconcile.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { MetricsRegistry } from '../../src/core/limits/metrics.ts';
import { startServe } from '../../src/run/serve/serve.ts';
import { LogLines } from '../support/mx-rig.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';
import { eventually } from '../support/spooler-rig.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

function send(rig: ServeRig, to: Keypair[], subject: string): Promise<string> {
  const t = nodemailer.createTransport({
    host: '127.0.0.1',
    port: rig.mxPort,
    secure: false,
    ignoreTLS: true,
  });
  return t
    .sendMail({
      envelope: { from: 'ann@remote.example', to: to.map((k) => `${k.publicKey.toBase58()}@${RIG_DOMAIN}`) },
      raw: `From: ann@remote.example\r\nSubject: ${subject}\r\n\r\nbody of ${subject}\r\n`,
    })
    .then((info) => info.response.split(' ').pop() ?? '')
    .finally(() => t.close());
}

/** Deletes every key of the stack (what a FLUSHALL does to it). */
async function flushStack(rig: ServeRig): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await rig.redis.scan(cursor, 'MATCH', `${rig.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) n += await rig.redis.del(...keys);
  } while (cursor !== '0');
  return n;
}

/** The workers of the deployment, started after the flush (`sealpost worker`). */
async function startWorkers(rig: ServeRig) {
  return startServe({
    config: rig.config,
    logger: pino({ level: 'silent' }),
    components: { smtp: false, workers: true, api: false, spooler: false },
    singletons: false,
    mailAccess: { imap: false, pop3: false },
  });
}

/** Email accounts per wallet on chain, and how many distinct CIDs they hold. */
async function inboxOf(rig: ServeRig, owner: Keypair): Promise<{ count: number; cids: number }> {
  const list = await listInbox(rig.chain.connection, rig.chain.programId, owner.publicKey);
  return { count: list.length, cids: new Set(list.map((e) => e.email.cid)).size };
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('spool reconcile after Redis lost its data', () => {
  it('FLUSHALL with a backlog: every acknowledged message is delivered once after reconcile', async () => {
    const rig = await startServeRig({ serve: { components: { workers: false } } });
    const ann = await rig.mail.mailbox();
    const bob = await rig.mail.mailbox();
    const msgids: string[] = [];
    for (let i = 0; i < 8; i++) msgids.push(await send(rig, [ann], `solo ${i}`));
    for (let i = 0; i < 4; i++) msgids.push(await send(rig, [ann, bob], `pair ${i}`));
    expect(new Set(msgids).size).toBe(12);
    // Every message acknowledged: its jobs are in Redis. Then Redis loses everything of the stack.
    expect(await flushStack(rig)).toBeGreaterThanOrEqual(12);

    const blobs = new BlobStore(join(rig.dataDir, 'blobs'));
    const deps = {
      redis: rig.redis,
      prefix: rig.prefix,
      blobs,
      db: rig.serving.store.db,
      policy: { attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
    };
    // Within the grace period nothing is touched (an acceptance may still be queueing its jobs).
    const young = await reconcileSpool({ ...deps, dryRun: true });
    expect(young).toMatchObject({ scanned: 0, young: 12, recovered: 0 });

    // `sealpost queue reconcile --dry-run --json` reports them, changes nothing.
    const dry = await cli([
      'queue',
      'reconcile',
      '--config',
      rig.configFile,
      '--data-dir',
      rig.dataDir,
      '--dry-run',
      '--json',
      '--grace-secs',
      '0',
    ]);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    const dryResult = JSON.parse(dry.stdout) as ReconcileResult;
    expect(dryResult).toMatchObject({
      dryRun: true,
      scanned: 12,
      withoutJobs: 12,
      recovered: 12,
      recoveredJobs: 16,
    });
    expect(await rig.redis.exists(`${rig.prefix}:deliver:${msgids[0]}.0`)).toBe(0);

    const logs = new LogLines();
    const registry = new MetricsRegistry();
    const metrics = reconcileMetrics(registry);
    const run = await reconcileSpool({
      ...deps,
      graceMs: 0,
      logger: pino({ level: 'info' }, logs.stream),
      metrics,
    });
    expect(run).toMatchObject({
      outcome: 'done',
      scanned: 12,
      withoutJobs: 12,
      recovered: 12,
      recoveredJobs: 16,
      corrupt: 0,
    });
    // Said in the log (warn, with the count), in /metrics and in /ready.
    const warn = logs.lines.find((l) => l.level === 40 && String(l.msg).includes('queued again'));
    expect(warn?.recovered).toBe(12);
    expect(metrics.recovered.get()).toBe(12);
    expect(metrics.withoutJobs.get()).toBe(12);
    expect(registry.render()).toMatch(/sealpost_spool_recovered_total 12/);
    const ready = (await (await fetch(`${rig.serving.apiUrl}/ready`)).json()) as {
      dependencies: Record<string, { state: string; detail?: Record<string, number> }>;
    };
    expect(ready.dependencies.spool_reconcile?.state).toBe('up');
    expect(ready.dependencies.spool_reconcile?.detail).toMatchObject({
      recovered_total: 12,
      without_jobs: 12,
    });

    // A second run finds every entry with its jobs: nothing is queued twice.
    const again = await reconcileSpool({ ...deps, graceMs: 0 });
    expect(again).toMatchObject({ withJobs: 12, recovered: 0 });

    const workers = await startWorkers(rig);
    try {
      await eventually(async () => {
        const a = await inboxOf(rig, ann);
        const b = await inboxOf(rig, bob);
        return a.count >= 12 && b.count >= 4 ? true : undefined;
      }, 90_000);
      // Exactly once: 12 and 4 Email accounts, each with its own CID.
      expect(await inboxOf(rig, ann)).toEqual({ count: 12, cids: 12 });
      expect(await inboxOf(rig, bob)).toEqual({ count: 4, cids: 4 });
      // Every copy stored once; the spool emptied by the jobs (and their parents).
      const rows = await eventually(async () => {
        const r = await rig.serving.store.db.selectFrom('messages').select('id').execute();
        return r.length >= 16 ? r : undefined;
      }, 30_000);
      expect(rows.map((r) => r.id).sort()).toEqual(
        msgids.flatMap((m, i) => (i < 8 ? [`${m}.0`] : [`${m}.0`, `${m}.1`])).sort(),
      );
      await eventually(
        () => (readdirSync(join(blobs.root, 'spool')).length === 0 ? true : undefined),
        20_000,
      );
      // Nothing left to recover.
      expect(await reconcileSpool({ ...deps, graceMs: 0 })).toMatchObject({ scanned: 0, recovered: 0 });
    } finally {
      await workers.close();
      await rig.stop();
    }
  }, 180_000);

  it('an unreadable spool entry is moved to spool-corrupt/ and reported; the others are delivered', async () => {
    const rig = await startServeRig({ serve: { components: { workers: false } } });
    const ann = await rig.mail.mailbox();
    const msgids: string[] = [];
    for (let i = 0; i < 3; i++) msgids.push(await send(rig, [ann], `keep ${i}`));
    await flushStack(rig);
    const blobs = new BlobStore(join(rig.dataDir, 'blobs'));
    const spool = join(blobs.root, 'spool');
    // A torn copy (its index cut, its trailer kept), a truncated one (no trailer left) and a foreign file.
    const whole = readFileSync(join(spool, msgids[0] as string));
    writeFileSync(
      join(spool, 'torn1'),
      Buffer.concat([whole.subarray(0, 40), whole.subarray(whole.length - 12)]),
    );
    copyFileSync(join(spool, msgids[1] as string), join(spool, 'cut1'));
    writeFileSync(join(spool, 'cut1'), readFileSync(join(spool, 'cut1')).subarray(0, 30));
    writeFileSync(join(spool, 'foreign1'), 'not a spool file at all\n');

    const logs = new LogLines();
    const metrics = reconcileMetrics(new MetricsRegistry());
    const run = await reconcileSpool({
      redis: rig.redis,
      prefix: rig.prefix,
      blobs,
      db: rig.serving.store.db,
      policy: { attempts: DELIVERY_ATTEMPTS, backoffMs: 2000 },
      graceMs: 0,
      logger: pino({ level: 'info' }, logs.stream),
      metrics,
    });
    expect(run).toMatchObject({ scanned: 6, recovered: 3, corrupt: 3 });
    expect(metrics.corrupt.get()).toBe(3);
    // Moved aside, byte for byte, never deleted; reported one by one.
    for (const id of ['torn1', 'cut1', 'foreign1']) {
      expect(existsSync(join(spool, id))).toBe(false);
      expect(existsSync(join(blobs.root, 'spool-corrupt', id))).toBe(true);
      expect(logs.lines.some((l) => l.level === 50 && l.spool === id)).toBe(true);
    }
    expect(readFileSync(join(blobs.root, 'spool-corrupt', 'foreign1'), 'utf8')).toBe(
      'not a spool file at all\n',
    );

    const workers = await startWorkers(rig);
    try {
      await eventually(async () => ((await inboxOf(rig, ann)).count >= 3 ? true : undefined), 60_000);
      expect(await inboxOf(rig, ann)).toEqual({ count: 3, cids: 3 });
    } finally {
      await workers.close();
      await rig.stop();
    }
  }, 150_000);
});
