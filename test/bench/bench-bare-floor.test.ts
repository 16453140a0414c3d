// The MX rows' durable floor (bench/harness/bare-smtp.ts with `durable`):
// smtp-server with Sealpost's acceptance step behind each 250. A message it
// answers 250 for has its delivery job in Redis, naming a spool key whose
// bytes are on disk as sent; the plain ceiling keeps nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startBareSmtp } from '../../bench/harness/bare-smtp.ts';
import { freePort } from '../../bench/harness/net.ts';
import { deliverJobCount } from '../../bench/harness/sealpost-mx.ts';
import { SmtpLoad } from '../../bench/harness/smtp-load.ts';
import { dropRedisPrefix, randomPrefix } from '../../bench/harness/stack.ts';
import { type DeliverJobData, QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe('bench MX durable floor', () => {
  it('answers 250 only with the job in Redis and the bytes in the spool', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealpost-floor-test-'));
    const prefix = randomPrefix('floor-test');
    cleanups.push(async () => {
      await dropRedisPrefix(REDIS_URL, prefix);
      rmSync(dir, { recursive: true, force: true });
    });
    const floor = await startBareSmtp(await freePort(), 2, { redisUrl: REDIS_URL, prefix, dir });
    cleanups.push(() => floor.stop());
    const load = new SmtpLoad({ host: '127.0.0.1', port: floor.port, sessions: 3 });
    cleanups.push(async () => load.close());
    const body = (i: number) => `Subject: floor ${i}\r\n\r\nbody ${i}\r\n`;
    const replies = await Promise.all(
      Array.from({ length: 9 }, (_, i) => load.send('a@load.example', `r${i}@bench.test`, body(i))),
    );
    expect(replies.every((r) => r.startsWith('250 '))).toBe(true);
    expect(await floor.accepted()).toBe(9);
    expect(await deliverJobCount(REDIS_URL, prefix)).toBe(9);

    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue<DeliverJobData>(QUEUE_DELIVER, { connection, prefix });
    try {
      const jobs = await queue.getJobs(['wait']);
      expect(jobs).toHaveLength(9);
      const blobs = new BlobStore(dir);
      for (const job of jobs) {
        const i = Number(job.data.envelope.to.slice(1, job.data.envelope.to.indexOf('@')));
        expect(job.data.envelope.from).toBe('a@load.example');
        expect(job.data.removesSpool).toBe(true);
        expect((await blobs.read(job.data.spoolKey)).toString()).toBe(body(i));
      }
    } finally {
      await queue.close();
      connection.disconnect();
    }
  }, 60_000);

  it('keeps nothing without `durable`', async () => {
    const bare = await startBareSmtp(await freePort(), 1);
    cleanups.push(() => bare.stop());
    const load = new SmtpLoad({ host: '127.0.0.1', port: bare.port, sessions: 1 });
    cleanups.push(async () => load.close());
    expect(await load.send('a@load.example', 'r@bench.test', 'Subject: x\r\n\r\ny\r\n')).toMatch(/^250 /);
    expect(await bare.accepted()).toBe(1);
  }, 60_000);
});
