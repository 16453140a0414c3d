// End to end on the in-process stack with its pipeline workers and pind as
// the operator pin: `clients` SMTP sessions (reused) send `messages` 10 KB
// messages; each message's latency runs from its 250 to its delivery job
// finishing (Email account confirmed on devnet and the copy stored), read
// from the job's own finishedOn, so no completion event can be missed.
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { QUEUE_DELIVER } from '../../delivery/jobs.ts';
import { startSealpostMx } from './sealpost-mx.ts';

export interface EndToEndResult {
  messages: number;
  acceptPerSecond: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Not delivered (failed, or still not finished at the deadline). */
  undelivered: number;
  /** Mean ms per pipeline stage (from the stack's /metrics histograms). */
  stages: Record<string, { count: number; meanMs: number }>;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function measureEndToEnd(opts: {
  messages: number;
  clients: number;
  bytes: number;
  recipients: number;
}): Promise<EndToEndResult> {
  const stack = await startSealpostMx({ workers: true, wallets: opts.recipients });
  const connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUE_DELIVER, { connection, prefix: stack.prefix });
  try {
    const body = `${'0123456789abcdef'.repeat(4)}\r\n`.repeat(Math.ceil(opts.bytes / 66));
    const ackedAt = new Map<string, number>();
    let next = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: opts.clients }, async (_, c) => {
        const transport = nodemailer.createTransport({
          host: '127.0.0.1',
          port: stack.port,
          secure: false,
          ignoreTLS: true,
          pool: true,
          maxConnections: 1,
          maxMessages: Number.POSITIVE_INFINITY,
        });
        for (let i = next++; i < opts.messages; i = next++) {
          const to = stack.rcpts[i % stack.rcpts.length] as string;
          const info = await transport.sendMail({
            envelope: { from: `client${c}@load.example`, to: [to] },
            raw: `From: client${c}@load.example\r\nTo: ${to}\r\nSubject: e2e ${i}\r\n\r\n${body}`,
          });
          ackedAt.set(info.response.split(' ').pop() ?? '', Date.now());
        }
        transport.close();
      }),
    );
    const acceptSecs = (Date.now() - t0) / 1000;
    const deadline = Date.now() + 20 * 60_000;
    for (;;) {
      const c = await queue.getJobCounts('completed', 'failed');
      if ((c.completed ?? 0) + (c.failed ?? 0) >= opts.messages || Date.now() > deadline) break;
      await sleep(250);
    }
    const done = await queue.getJobs(['completed'], 0, opts.messages);
    const latencies: number[] = [];
    let last = t0;
    for (const job of done) {
      const at = ackedAt.get(job.data.msgid);
      if (at === undefined || !job.finishedOn) continue;
      latencies.push(job.finishedOn - at);
      last = Math.max(last, job.finishedOn);
    }
    latencies.sort((a, b) => a - b);
    return {
      messages: opts.messages,
      acceptPerSecond: opts.messages / acceptSecs,
      perSecond: latencies.length / ((last - t0) / 1000),
      p50Ms: pct(latencies, 50),
      p99Ms: pct(latencies, 99),
      undelivered: opts.messages - latencies.length,
      stages: await stack.stageMeans(),
    };
  } finally {
    await queue.close();
    connection.disconnect();
    await stack.stop();
  }
}
