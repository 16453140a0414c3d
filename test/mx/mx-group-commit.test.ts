// The MX's group commit (delivery/intake/group-commit.ts) over real SMTP, a devnet,
// real Redis and the real blob store: sessions whose DATA ends together share
// one segment file, one directory fsync and one MULTI; every 250 stands for a
// message whose bytes read back exactly from its spool key and whose jobs are
// in Redis; a failing disk step or MULTI answers 4xx to exactly the sessions
// of that batch and leaves nothing of them behind. Faults are injected at the
// disk and Redis boundary by wrapping the real steps (GroupCommitSteps).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkJobsPresent,
  flowJobKeys,
  GroupCommit,
  type GroupCommitSteps,
} from '../../delivery/intake/group-commit.ts';
import {
  type DeliverJobData,
  QUEUE_DELIVER,
  QUEUE_SPOOL,
  type SpoolJobData,
} from '../../src/contracts/inbound-jobs.ts';
import { BlobStore, SPOOL_SEGMENT_MESSAGE_BYTES } from '../../src/core/blobs/blob-store.ts';
import { createDnsResolver } from '../../src/core/dns/resolver.ts';
import { reverseNameLookup } from '../../src/edge/mx/reverse-name.ts';
import { startDnsDouble } from '../support/doubles/dns-server.ts';
import { type MxRig, startMxRig } from '../support/mx-rig.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface Rig extends MxRig {
  spoolDir: string;
  commit: GroupCommit;
  deliver: Queue<DeliverJobData>;
  spool: Queue<SpoolJobData>;
}

async function rig(wrap?: (real: GroupCommitSteps) => GroupCommitSteps): Promise<Rig> {
  let commit: GroupCommit | undefined;
  const mx = await startMxRig({
    logLevel: 'silent',
    commit: (flow) => {
      const real = GroupCommit.steps(flow);
      commit = new GroupCommit(wrap ? wrap(real) : real);
      return commit;
    },
  });
  if (!commit) throw new Error('the rig made no group commit');
  const deliver = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection: mx.redis, prefix: mx.prefix });
  const spool = new Queue<SpoolJobData>(QUEUE_SPOOL, { connection: mx.redis, prefix: mx.prefix });
  cleanups.push(async () => {
    await deliver.close();
    await spool.close();
  });
  return { ...mx, spoolDir: join(mx.blobs.root, 'spool'), commit, deliver, spool };
}

/**
 * Steps whose first directory fsync waits until `open()` (a slow disk), so
 * that the sessions ending meanwhile all form the next batch; `then` may
 * change the later fsyncs (the nth, counted from 1 after the held one).
 */
function holdFirstBatch(then?: (n: number) => void): {
  wrap: (real: GroupCommitSteps) => GroupCommitSteps;
  open: () => void;
} {
  let open = () => {};
  const held = new Promise<void>((resolve) => {
    open = resolve;
  });
  let syncs = 0;
  return {
    open,
    wrap: (real) => ({
      ...real,
      sync: async (blobs) => {
        const n = syncs++;
        if (n === 0) await held;
        else then?.(n);
        await real.sync(blobs);
      },
    }),
  };
}

/** One message on its own connection; resolves with the reply code and text (a 4xx/5xx too). */
async function send(r: Rig, raw: string): Promise<{ code: number; text: string }> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: r.port,
    secure: false,
    ignoreTLS: true,
  });
  try {
    const info = await transport.sendMail({ envelope: { from: 'a@remote.example', to: [r.rcpt] }, raw });
    return { code: Number(info.response.slice(0, 3)), text: info.response };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; message: string };
    return { code: e.responseCode ?? 0, text: e.response ?? e.message };
  } finally {
    transport.close();
  }
}

function message(i: number, bodyBytes = 200): string {
  const line = `${'m'.repeat(70)}\r\n`;
  return `Subject: message ${i}\r\n\r\n${line.repeat(Math.ceil(bodyBytes / line.length))}end of ${i}\r\n`;
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Names in the spool directory, temp files included. */
function spoolNames(r: Rig): string[] {
  return existsSync(r.spoolDir) ? readdirSync(r.spoolDir).sort() : [];
}

const msgidOf = (text: string) => text.split(' ').pop() ?? '';

describe('MX group commit', () => {
  it('commits sessions that end together in one batch; every 250 has its exact bytes and its jobs', async () => {
    const first = holdFirstBatch();
    const r = await rig(first.wrap);
    const raws = new Map<number, string>();
    raws.set(0, message(0));
    const lone = send(r, raws.get(0) as string);
    await until('the first batch', () => r.commit.stats.batches === 1);
    // 24 small messages (one segment) and 4 over the segment limit (their own files).
    for (let i = 1; i <= 28; i++)
      raws.set(i, message(i, i > 24 ? SPOOL_SEGMENT_MESSAGE_BYTES + 1000 : 300 + i));
    const rest = [...raws]
      .filter(([i]) => i > 0)
      .map(([i, raw]) => send(r, raw).then((reply) => [i, reply] as const));
    await until('28 sessions waiting for the next batch', () => r.commit.waitingCount === 28);
    first.open();
    const replies = new Map([[0, await lone] as const, ...(await Promise.all(rest))]);

    expect([...replies.values()].map((x) => x.code)).toEqual(Array(29).fill(250));
    expect(r.commit.stats).toEqual({ batches: 2, messages: 29, segments: 2 });
    expect(await r.deliver.count()).toBe(29);
    const inodes = new Set<number>();
    for (const [i, reply] of replies) {
      const msgid = msgidOf(reply.text);
      // One recipient: its only job removes the spool file itself, so no spool-cleanup parent is queued.
      expect(await r.spool.getJob(msgid)).toBeUndefined();
      const only = await r.deliver.getJob(`${msgid}.0`);
      expect(only?.data.removesSpool).toBe(true);
      expect(only?.parentKey).toBeUndefined();
      const key = only?.data.spoolKey ?? '';
      expect((await r.blobs.read(key)).toString('latin1')).toBe(raws.get(i));
      // A large message has its own file, and its key names its range too (the index follows it).
      if (i > 24) expect(key).toBe(`spool/${msgid}@0+${Buffer.byteLength(raws.get(i) ?? '', 'latin1')}`);
      else {
        expect(key).toMatch(new RegExp(`^spool/${msgid}@\\d+\\+\\d+$`));
        if (i > 0) inodes.add(statSync(join(r.spoolDir, msgid)).ino);
      }
    }
    // The 24 small messages of the second batch are names of one segment file.
    expect(inodes.size).toBe(1);
    expect(spoolNames(r).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('answers 452 to exactly the sessions of a batch whose disk step fails, and keeps nothing of them', async () => {
    // The second batch's directory fsync fails (an I/O error on the spool disk).
    const first = holdFirstBatch((n) => {
      if (n === 1) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    const r = await rig(first.wrap);
    const accepted = send(r, message(0));
    await until('the first batch', () => r.commit.stats.batches === 1);
    const failing = Array.from({ length: 6 }, (_, i) => send(r, message(i + 1)));
    await until('6 sessions waiting', () => r.commit.waitingCount === 6);
    first.open();
    expect((await accepted).code).toBe(250);
    const refused = await Promise.all(failing);
    for (const reply of refused) expect(reply.text).toMatch(/^452 4\.3\.1 /);
    // The disk is back: the next message is accepted.
    const after = await send(r, message(7));
    expect(after.code).toBe(250);

    const kept = [msgidOf((await accepted).text), msgidOf(after.text)].sort();
    expect(spoolNames(r)).toEqual(kept);
    expect(await r.deliver.count()).toBe(2);
    const queued = (await r.deliver.getJobs(['waiting', 'waiting-children', 'prioritized', 'delayed'])).map(
      (j) => j.data.msgid,
    );
    expect(queued.sort()).toEqual(kept);
  });

  it('answers 451 and keeps no spool file when Redis is gone when the batch is queued', async () => {
    const r = await rig();
    expect((await send(r, message(0))).code).toBe(250);
    const before = spoolNames(r);
    r.flowRedis.disconnect();
    const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => send(r, message(i + 1, 5000))));
    for (const reply of replies) expect(reply.text).toMatch(/^451 4\.3\.0 /);
    expect(spoolNames(r)).toEqual(before);
    expect(await r.deliver.count()).toBe(1);
  });

  it('retries a failed MULTI message by message: every session still gets its 250, each job once', async () => {
    const first = holdFirstBatch();
    let multiFailures = 0;
    const r = await rig((real) => ({
      ...first.wrap(real),
      // The first MULTI carrying several messages fails after adding the jobs of the first one.
      queue: async (flows) => {
        if (flows.length > 1 && multiFailures === 0) {
          multiFailures++;
          await real.queue(flows.slice(0, 1));
          throw new Error('MULTI failed: connection reset');
        }
        await real.queue(flows);
      },
    }));
    const lone = send(r, message(0));
    await until('the first batch', () => r.commit.stats.batches === 1);
    const batch = Array.from({ length: 5 }, (_, i) => send(r, message(i + 1)));
    await until('5 sessions waiting', () => r.commit.waitingCount === 5);
    first.open();
    const replies = [await lone, ...(await Promise.all(batch))];
    expect(multiFailures).toBe(1);
    expect(replies.map((x) => x.code)).toEqual(Array(6).fill(250));
    const msgids = replies.map((x) => msgidOf(x.text)).sort();
    const queued = (await r.deliver.getJobs(['waiting', 'waiting-children', 'prioritized', 'delayed'])).map(
      (j) => j.data.msgid,
    );
    expect(queued.sort()).toEqual(msgids);
    expect(spoolNames(r)).toEqual(msgids);
  });
});

describe('the queue step proves its jobs are in', () => {
  it('refuses when a job of the MULTI failed on its own, or when the producer is closing', async () => {
    const prefix = `test-gc-${Math.random().toString(36).slice(2, 10)}`;
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
      maxRetriesPerRequest: null,
    });
    const flowRedis = redis.duplicate();
    const flow = new FlowProducer({ connection: flowRedis, prefix });
    cleanups.push(async () => {
      await flow.close().catch(() => {});
      flowRedis.disconnect();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const steps = GroupCommit.steps(flow);
    const flowOf = (id: string) => ({
      name: 'spool-cleanup',
      queueName: QUEUE_SPOOL,
      data: { msgid: id, spoolKey: `spool/${id}` },
      opts: { jobId: id },
      children: [{ name: 'deliver', queueName: QUEUE_DELIVER, data: {}, opts: { jobId: `${id}.0` } }],
    });
    expect(flowJobKeys([flowOf('a')], prefix)).toEqual([
      `${prefix}:${QUEUE_SPOOL}:a`,
      `${prefix}:${QUEUE_DELIVER}:a.0`,
    ]);
    await steps.queue([flowOf('a')]);
    expect(await redis.exists(`${prefix}:${QUEUE_SPOOL}:a`, `${prefix}:${QUEUE_DELIVER}:a.0`)).toBe(2);
    // A key of the wrong type where one child job goes: that command of the MULTI fails alone.
    await redis.set(`${prefix}:${QUEUE_DELIVER}:b.0`, 'not a job');
    await expect(steps.queue([flowOf('c'), flowOf('b')])).rejects.toThrow();
    // The check itself, through the producer's own client: every job hash with its data, or how many are not.
    const client = await flow.getBackend().client;
    const aKeys = flowJobKeys([flowOf('a')], prefix);
    await expect(checkJobsPresent(client, aKeys)).resolves.toBeUndefined();
    await redis.hset(`${prefix}:${QUEUE_DELIVER}:e.0`, 'name', 'deliver');
    await expect(
      checkJobsPresent(client, [...aKeys, `${prefix}:${QUEUE_DELIVER}:e.0`, `${prefix}:${QUEUE_SPOOL}:nope`]),
    ).rejects.toThrow('2 of 4 jobs missing after the MULTI');
    await flow.close();
    await expect(steps.queue([flowOf('d')])).rejects.toThrow(/closing/);
    expect(await redis.exists(`${prefix}:${QUEUE_SPOOL}:d`)).toBe(0);
  });
});

describe('spool segments', () => {
  it('reads, streams and deletes each message of a segment on its own', async () => {
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    const texts = ['first message\r\n', '', 'third, a little longer\r\n'];
    const keys = await blobs.writeSegment(
      texts.map((t, i) => ({ id: `seg-${i}`, chunks: [Buffer.from(t)], size: Buffer.byteLength(t) })),
    );
    await blobs.syncSpool();
    expect(keys).toEqual(['spool/seg-0@0+15', 'spool/seg-1@15+0', 'spool/seg-2@15+24']);
    for (const [i, key] of keys.entries()) {
      expect((await blobs.read(key)).toString()).toBe(texts[i]);
      const streamed: Buffer[] = [];
      for await (const chunk of blobs.stream(key)) streamed.push(chunk as Buffer);
      expect(Buffer.concat(streamed).toString()).toBe(texts[i]);
    }
    await blobs.delete(keys[0] as string);
    expect(await blobs.exists(keys[0] as string)).toBe(false);
    expect((await blobs.read(keys[2] as string)).toString()).toBe(texts[2]);
    expect(readdirSync(join(blobs.root, 'spool')).sort()).toEqual(['seg-1', 'seg-2']);
  });

  it("leaves none of a segment's names, nor its temp file, when one name cannot be made", async () => {
    const blobs = new BlobStore(join(tempDir(), 'blobs'));
    await blobs.writeSegment([{ id: 'taken', chunks: [Buffer.from('older\r\n')], size: 7 }]);
    const batch = ['new-a', 'taken', 'new-c'].map((id) => ({
      id,
      chunks: [Buffer.from(`${id}\r\n`)],
      size: id.length + 2,
    }));
    await expect(blobs.writeSegment(batch)).rejects.toThrow(/EEXIST/);
    // The name made before the failure is gone, the one after was never made, the older message is untouched.
    expect(readdirSync(join(blobs.root, 'spool'))).toEqual(['taken']);
    expect((await blobs.read('spool/taken@0+7')).toString()).toBe('older\r\n');
  });
});

describe('reverse names per IP', () => {
  it('looks an IP up once for many connections, shares a lookup under way, and asks again after the TTL', async () => {
    const dns = await startDnsDouble({
      '1.0.0.127.in-addr.arpa': { PTR: ['client.example'] },
      'client.example': { A: ['127.0.0.1'] },
      '2.0.0.127.in-addr.arpa': { PTR: ['liar.example'] },
      'liar.example': { A: ['192.0.2.1'] },
    });
    cleanups.push(() => dns.close());
    let clock = 1_000_000;
    const lookup = reverseNameLookup(
      createDnsResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 }),
      2000,
      {
        ttlMs: 60_000,
        now: () => clock,
      },
    );
    const asked = () => dns.queries.filter((q) => q.type === 'PTR').length;
    // Ten connections at once from one IP: one PTR query.
    expect(await Promise.all(Array.from({ length: 10 }, () => lookup('127.0.0.1')))).toEqual(
      Array(10).fill('client.example'),
    );
    expect(asked()).toBe(1);
    // A name that does not confirm is kept too (as none).
    expect(await lookup('127.0.0.2')).toBeUndefined();
    expect(await lookup('127.0.0.2')).toBeUndefined();
    expect(asked()).toBe(2);
    // No PTR record (NXDOMAIN): an answer, kept as none, not asked again per connection.
    expect(await lookup('127.0.0.3')).toBeUndefined();
    expect(await lookup('127.0.0.3')).toBeUndefined();
    expect(asked()).toBe(3);
    // A resolver failure is not kept: the next connection asks again.
    dns.setFault('4.0.0.127.in-addr.arpa', 'servfail');
    expect(await lookup('127.0.0.4')).toBeUndefined();
    expect(await lookup('127.0.0.4')).toBeUndefined();
    expect(asked()).toBe(5);
    clock += 59_000;
    expect(await lookup('127.0.0.1')).toBe('client.example');
    expect(asked()).toBe(5);
    clock += 2_000;
    dns.set('client.example', 'A', ['192.0.2.7']);
    expect(await lookup('127.0.0.1')).toBeUndefined();
    expect(asked()).toBe(6);
  });
});
