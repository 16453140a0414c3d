// Redis Sentinel under load: `serve` (MX + pipeline workers, in this
// process) on a devnet against a real Sentinel deployment (a master and a
// replica, appendonly, `min-replicas-to-write 1`, one sentinel), with
// `[redis] sentinels` and `name` in its config. Senders that behave like
// MTAs (a 4xx or a lost connection means "the same message again later")
// send mail the whole time; mid-load the operator's `SENTINEL FAILOVER`
// promotes the replica. Proven: every message that got a 250 is on chain
// exactly once (one Email account each), the MX answered 4xx (never 5xx)
// during the failover and no reply took longer than a bound, and mail is
// acknowledged again after it without restarting anything.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair } from '@solana/web3.js';
import { Redis } from 'ioredis';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { startSentinelRedis } from '../support/redis-sentinel.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

/** No SMTP reply may take longer than this, failover or not. */
const REPLY_BOUND_MS = 20_000;

interface Attempt {
  subject: string;
  reply: string;
  ms: number;
  at: number;
}

/** One message per attempt over its own connection; the reply code (or 'conn') and how long it took. */
async function attempt(port: number, to: string, subject: string): Promise<Omit<Attempt, 'at'>> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: REPLY_BOUND_MS,
    greetingTimeout: REPLY_BOUND_MS,
    socketTimeout: REPLY_BOUND_MS,
  });
  const t0 = Date.now();
  try {
    await transport.sendMail({
      envelope: { from: 'sender@remote.example', to: [to] },
      raw: `From: sender@remote.example\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@remote.example>\r\n\r\nfailover load ${subject}\r\n`,
    });
    return { subject, reply: '250', ms: Date.now() - t0 };
  } catch (err) {
    const code = (err as { responseCode?: number }).responseCode;
    return { subject, reply: code ? String(code) : `conn ${(err as Error).message}`, ms: Date.now() - t0 };
  } finally {
    transport.close();
  }
}

/** Subjects of every Email account of `owners`, once at least `count` exist (waits up to `timeoutMs`). */
async function deliveredSubjects(
  rig: ServeRig,
  owners: Keypair[],
  count: number,
  timeoutMs: number,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const inboxes = await Promise.all(
      owners.map(async (o) => ({
        owner: o,
        entries: await listInbox(rig.chain.connection, rig.chain.programId, o.publicKey, { limit: 5000 }),
      })),
    );
    const total = inboxes.reduce((n, i) => n + i.entries.length, 0);
    if (total >= count || Date.now() > deadline) {
      const subjects: string[] = [];
      for (const { owner, entries } of inboxes) {
        for (const entry of entries) {
          const res = await fetch(`${rig.gatewayUrl}/ipfs/${entry.email.cid}`);
          const opened = await openSealed(
            new Uint8Array(await res.arrayBuffer()),
            walletEncryptionKeypair(owner.secretKey),
          );
          subjects.push(/^Subject: (\S+)/m.exec(Buffer.from(opened.raw).toString('utf8'))?.[1] ?? '?');
        }
      }
      return subjects;
    }
    await sleep(500);
  }
}

/** Client connections a sentinel holds now. */
async function sentinelClients(sentinel: string): Promise<number> {
  const [host, port] = sentinel.split(':');
  const r = new Redis({ host, port: Number(port), maxRetriesPerRequest: 0 });
  try {
    const list = (await r.call('CLIENT', 'LIST')) as string;
    return list.trim().split('\n').length - 1; // less this one
  } finally {
    r.disconnect();
  }
}

describe('Redis Sentinel clients', () => {
  it("quit() closes the failover detector's sentinel subscriptions too, also of duplicates", async () => {
    const sentinel = await startSentinelRedis();
    try {
      const [at] = sentinel.sentinels as [string];
      const baseline = await sentinelClients(at);
      const client = createRedis({ sentinels: sentinel.sentinels, name: sentinel.name });
      const dup = client.duplicate();
      await client.set('k', '1');
      expect(await dup.get('k')).toBe('1');
      await sleep(300);
      expect(await sentinelClients(at)).toBeGreaterThan(baseline);
      await client.quit();
      await dup.quit();
      await sleep(300);
      // Left open, these keep a process from exiting after it closed everything (redis/ioredis#1362).
      expect(await sentinelClients(at)).toBe(baseline);
    } finally {
      await sentinel.close();
    }
  });
});

describe('Redis Sentinel failover under load', () => {
  it('is a 4xx burst: every 250 is delivered exactly once and mail is accepted again after', async () => {
    const sentinel = await startSentinelRedis({ replicas: 1, sentinels: 1 });
    let rig: ServeRig | undefined;
    try {
      rig = await startServeRig({ redisToml: sentinel.toml() });
      expect(rig.config.redis.url).toBeUndefined();
      const r = rig;
      const owners = [await r.mail.mailbox(), await r.mail.mailbox()];
      const attempts: Attempt[] = [];
      const acked: string[] = [];
      let failedOverAt = 0;
      let stopAt = Number.POSITIVE_INFINITY;
      let next = 0;
      // Three MTAs: each sends its next message once the last got a 250 (or gave up at the end).
      const sender = async () => {
        while (Date.now() < stopAt) {
          const i = next++;
          const subject = `sentinel-${i}`;
          const to = `${owners[i % owners.length]?.publicKey.toBase58()}@${RIG_DOMAIN}`;
          for (;;) {
            const a = await attempt(r.mxPort, to, subject);
            attempts.push({ ...a, at: Date.now() });
            if (a.reply === '250') {
              acked.push(subject);
              break;
            }
            if (a.reply.startsWith('5') || Date.now() > stopAt + 60_000) break;
            await sleep(200);
          }
          await sleep(50);
        }
      };
      const senders = Promise.all([sender(), sender(), sender()]);
      // The failover starts once mail flows, and the load runs on for a while after it.
      while (acked.length < 10) await sleep(100);
      const before = acked.length;
      const failoverStartedAt = Date.now();
      const { from, to } = await sentinel.failover();
      failedOverAt = Date.now();
      expect(to).not.toBe(from);
      const ackedAtFailover = acked.length;
      while (acked.length < ackedAtFailover + 10 && Date.now() - failedOverAt < 60_000) await sleep(100);
      stopAt = Date.now();
      await senders;

      const during = attempts.filter((a) => a.at >= failoverStartedAt && a.at <= failedOverAt + 2000);
      const replies = attempts.reduce<Record<string, number>>((m, a) => {
        const key = a.reply.startsWith('conn') ? 'conn' : a.reply;
        m[key] = (m[key] ?? 0) + 1;
        return m;
      }, {});
      const summary = `${before} acked before the failover, ${acked.length} in all; replies ${JSON.stringify(replies)}`;
      // Deferred during the failover, never refused, never left hanging.
      expect(
        during.filter((a) => a.reply.startsWith('4')).length,
        `no 4xx during the failover: ${summary}`,
      ).toBeGreaterThan(0);
      expect(
        attempts.filter((a) => a.reply.startsWith('5')),
        summary,
      ).toEqual([]);
      expect(Math.max(...attempts.map((a) => a.ms)), summary).toBeLessThan(REPLY_BOUND_MS);
      // Accepted again after it, by the same processes.
      expect(
        attempts.filter((a) => a.reply === '250' && a.at > failedOverAt).length,
        summary,
      ).toBeGreaterThanOrEqual(10);

      // Exactly once: one Email account per acknowledged message, and nothing else.
      const subjects = await deliveredSubjects(r, owners, acked.length, 120_000);
      await sleep(3000);
      const settled = await deliveredSubjects(r, owners, acked.length, 0);
      const counts = new Map<string, number>();
      for (const s of settled) counts.set(s, (counts.get(s) ?? 0) + 1);
      const lost = acked.filter((s) => !counts.has(s));
      const doubled = [...counts].filter(([, n]) => n > 1).map(([s]) => s);
      expect(subjects.length, summary).toBeGreaterThanOrEqual(acked.length);
      expect({ lost, doubled }, summary).toEqual({ lost: [], doubled: [] });
      // A message delivered without a 250 could only be one whose last attempt was cut off: none here.
      expect(
        settled.filter((s) => !acked.includes(s)),
        summary,
      ).toEqual([]);
    } finally {
      await rig?.stop();
      // The rig's own cleanup scans Redis after this test; the deployment is gone by then.
      rig?.redis.disconnect();
      await sentinel.close();
    }
  }, 300_000);
});
