// IMAP IDLE push (src/edge/imap/push.ts, docs/imap-pop3.md "IDLE") against the
// whole stack over real sockets: with the IDLE poll at 60 s, a session in
// IDLE hears within a second of the store write of new mail delivered over
// SMTP, of flags set by another IMAP session and by the webmail, and of
// expunges made over IMAP and POP3; a `sealpost worker` process that stores
// the mail reaches the IDLE session held by another process through Redis;
// and when the subscription is lost (its connection killed, or Redis
// refusing the channel) the poll still tells, and push comes back with it.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { mailChangeChannel } from '../../src/core/limits/redis-keys.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { MessagesRepo, openStore } from '../../src/core/store/index.ts';
import { setMailChangeSink } from '../../src/core/store/mail-events.ts';
import { MailPush, pushSubscriberName } from '../../src/edge/imap/push.ts';
import { startWorkerProcess } from '../support/cost-guard-helpers.ts';
import {
  apiToken,
  deliver,
  imapFlow,
  LineClient,
  type MailUser,
  mailUser,
  rawMessage,
  waitForCopies,
} from '../support/imap-rig.ts';
import { type ServeRig, startServeRig } from '../support/serve-rig.ts';

/** Only push can explain an answer within a second: the poll would take a minute. */
const NO_POLL = '\n[imap]\nidle_poll_ms = 60000\nidle_push_poll_ms = 60000\n';
/** Generous for CI (three test files at once on two cores); the bench measures the real figure. */
const PUSH_BOUND_MS = 1000;

/** When the store's notifications for each wallet were seen on Redis (the moment of the store write). */
class ChangeLog {
  private readonly seen: { wallet: string; at: number }[] = [];
  private constructor(private readonly sub: Redis) {}

  static async open(rig: ServeRig, redisUrl?: string): Promise<ChangeLog> {
    const sub = createRedis(redisUrl ?? rig.config.redis);
    const log = new ChangeLog(sub);
    sub.on('message', (_channel: string, text: string) => {
      log.seen.push({ wallet: (JSON.parse(text) as { w: string }).w, at: Date.now() });
    });
    await sub.subscribe(mailChangeChannel(rig.prefix));
    return log;
  }

  /** The first notification for `wallet` at or after `since`. */
  async next(wallet: string, since: number, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.seen.find((s) => s.wallet === wallet && s.at >= since);
      if (hit) return hit.at;
      if (Date.now() > deadline) throw new Error(`no notification for ${wallet}`);
      await sleep(10);
    }
  }

  close(): void {
    this.sub.disconnect();
  }
}

/** A logged-in session with INBOX selected, in IDLE. */
async function idling(rig: ServeRig, user: MailUser, exists: number): Promise<LineClient> {
  const c = await LineClient.open(rig.imapPort as number);
  await c.until(/^\* OK/);
  await c.command('a', `LOGIN "${user.address}" "${user.password}"`);
  expect(await c.command('b', 'SELECT INBOX')).toMatch(new RegExp(`^\\* ${exists} EXISTS$`, 'm'));
  c.write('c IDLE\r\n');
  await c.until(/^\+ /);
  return c;
}

/** Ends IDLE and the session. */
async function done(c: LineClient): Promise<void> {
  c.write('DONE\r\n');
  expect(await c.until(/^c /)).toMatch(/^c OK IDLE terminated$/m);
  c.close();
}

/** The value of one series of the process's /metrics (0 when absent). */
async function metric(rig: ServeRig, series: string): Promise<number> {
  const text = await rig.serving.prometheus.render();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function plain(user: string, password: string): string {
  return Buffer.from(`\u0000${user}\u0000${password}`).toString('base64');
}

describe('IMAP IDLE push', () => {
  it('tells IDLE sessions of new mail, flags and expunges at once, with the poll at 60 s', async () => {
    const rig = await startServeRig({ mailAccess: true, extraToml: NO_POLL });
    const user = await mailUser(rig);
    await deliver(rig, user.address, rawMessage('already here'));
    await waitForCopies(rig, user.wallet, 1);
    const changes = await ChangeLog.open(rig);
    // Two devices of one account: one push wakes both (they share the store reads, not the answers).
    const watchers = [await idling(rig, user, 1), await idling(rig, user, 1)];
    /** Waits until every watcher got a line matching `re`; returns the last one's text and the time taken. */
    const heard = async (re: RegExp, timeoutMs = PUSH_BOUND_MS * 5) => {
      const t = Date.now();
      const texts = await Promise.all(watchers.map((w) => w.until(re, timeoutMs)));
      return { text: texts.at(-1) as string, ms: Date.now() - t, at: Date.now() };
    };
    const other = imapFlow(rig, user.address, user.password);
    try {
      // New mail over SMTP: EXISTS follows the store write.
      const sent = Date.now();
      await deliver(rig, user.address, rawMessage('pushed'));
      const arrived = await heard(/^\* 2 EXISTS$/, 60_000);
      const stored = await changes.next(user.wallet, sent);
      expect(arrived.at - stored).toBeLessThan(PUSH_BOUND_MS);

      // Another IMAP session's flags.
      await other.connect();
      await other.mailboxOpen('INBOX');
      await other.messageFlagsAdd('1', ['\\Flagged']);
      let r = await heard(/^\* 1 FETCH/);
      expect(r.text).toMatch(/^\* 1 FETCH \(UID \d+ FLAGS \(\\Flagged\)\)$/m);
      expect(r.ms).toBeLessThan(PUSH_BOUND_MS);

      // The webmail's flag route.
      const token = await apiToken(rig, user);
      const rows = (await (
        await fetch(`${rig.serving.apiUrl}/v1/mail/messages?mailbox=INBOX`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as { messages: { id: string; uid: number }[] };
      const second = rows.messages.reduce((a, b) => (a.uid > b.uid ? a : b));
      const patched = await fetch(`${rig.serving.apiUrl}/v1/mail/messages/${encodeURIComponent(second.id)}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ flags: ['\\Seen'] }),
      });
      expect(patched.status).toBeLessThan(300);
      r = await heard(/^\* 2 FETCH/);
      expect(r.text).toMatch(/FLAGS \(\\Seen\)\)$/m);
      expect(r.ms).toBeLessThan(PUSH_BOUND_MS);

      // An expunge by the other IMAP session.
      await other.messageDelete('1');
      r = await heard(/^\* 1 EXPUNGE$/);
      expect(r.ms).toBeLessThan(PUSH_BOUND_MS);

      // A POP3 DELE, committed at QUIT.
      const pop = await LineClient.open(rig.pop3Port as number);
      await pop.until(/^\+OK/);
      pop.write(`AUTH PLAIN ${plain(user.address, user.password)}\r\n`);
      expect(await pop.until(/^[+-]/)).toMatch(/^\+OK Logged in/m);
      pop.write('DELE 1\r\n');
      expect(await pop.until(/^[+-]/)).toMatch(/^\+OK/m);
      pop.write('QUIT\r\n');
      expect(await pop.until(/^[+-]/)).toMatch(/^\+OK/m);
      r = await heard(/^\* 1 EXPUNGE$/);
      expect(r.ms).toBeLessThan(PUSH_BOUND_MS);
      pop.close();

      for (const w of watchers) await done(w);
      // Every answer came from a push; the one-minute poll never found anything.
      expect(
        await metric(rig, 'sealpost_imap_idle_wakeups_total{cause="push",result="changed"}'),
      ).toBeGreaterThanOrEqual(10);
      expect(await metric(rig, 'sealpost_imap_idle_wakeups_total{cause="poll",result="changed"}')).toBe(0);
      expect(await metric(rig, 'sealpost_imap_push_subscribed')).toBe(1);
    } finally {
      for (const w of watchers) w.close();
      changes.close();
      await other.logout().catch(() => other.close());
    }
  }, 180_000);

  it('reaches an IDLE session in one process when a `sealpost worker` process stores the mail', async () => {
    // The rig's serve holds the IMAP sessions and runs no pipeline workers: only the worker process stores.
    const rig = await startServeRig({
      mailAccess: true,
      extraToml: NO_POLL,
      serve: { components: { smtp: true, workers: false, api: true } },
    });
    const worker = await startWorkerProcess(rig.configFile, rig.dataDir, 4);
    const user = await mailUser(rig);
    const changes = await ChangeLog.open(rig);
    const watcher = await idling(rig, user, 0);
    try {
      for (let i = 1; i <= 2; i++) {
        const sent = Date.now();
        await deliver(rig, user.address, rawMessage(`from the worker ${i}`));
        await watcher.until(new RegExp(`^\\* ${i} EXISTS$`), 60_000);
        const seen = Date.now();
        expect(seen - (await changes.next(user.wallet, sent))).toBeLessThan(PUSH_BOUND_MS);
      }
      await done(watcher);
      // Heard from the other process over Redis (this process stored nothing).
      expect(
        await metric(rig, 'sealpost_imap_push_notifications_total{event="received"}'),
      ).toBeGreaterThanOrEqual(2);
      expect(await metric(rig, 'sealpost_imap_push_notifications_total{event="published"}')).toBe(0);
      expect(await metric(rig, 'sealpost_imap_idle_wakeups_total{cause="poll",result="changed"}')).toBe(0);
    } finally {
      watcher.close();
      changes.close();
      await worker.stop();
    }
  }, 180_000);

  it('falls back to the poll while the subscription is lost, and pushes again once it is back', async () => {
    // serve logs in to Redis as a user of its own, so this test can take the mail channel away from it alone.
    const base = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const admin = createRedis(base.toString());
    const aclUser = `sptest-push-${randomBytes(6).toString('hex')}`;
    const aclPassword = randomBytes(16).toString('hex');
    await admin.acl('SETUSER', aclUser, 'on', `>${aclPassword}`, '~*', '&*', '+@all');
    // After the rig's own clean-up (afterEach), whose client logs in as this user.
    onTestFinished(async () => {
      await admin.acl('DELUSER', aclUser).catch(() => {});
      admin.disconnect();
    });
    const url = new URL(base.toString());
    url.username = aclUser;
    url.password = aclPassword;
    const closers: (() => Promise<unknown> | unknown)[] = [];
    try {
      const r = await startServeRig({
        mailAccess: true,
        redisToml: `url = "${url.toString()}"`,
        extraToml: '\n[imap]\nidle_poll_ms = 300\nidle_push_poll_ms = 60000\n',
      });
      const user = await mailUser(r);
      await deliver(r, user.address, rawMessage('watched'));
      const [row] = await waitForCopies(r, user.wallet, 1);
      const id = row?.id as string;
      // "Another process": a store handle of its own with its own publisher.
      const store = await openStore({ url: r.config.store.url, dataDir: r.config.store.data_dir });
      closers.push(() => store.close());
      const elsewhere = new MailPush({
        redis: r.config.redis,
        prefix: r.prefix,
        logger: pino({ level: 'silent' }),
        livePollMs: 60_000,
        fallbackPollMs: 300,
      });
      closers.push(() => elsewhere.close());
      setMailChangeSink(store.db, elsewhere);
      const messages = new MessagesRepo(store.db);
      const watcher = await idling(r, user, 1);
      closers.push(() => watcher.close());
      const subscribed = () => metric(r, 'sealpost_imap_push_subscribed');
      const flag = async (flags: string[], boundMs: number) => {
        await messages.setFlags(id, flags);
        const t = Date.now();
        const text = await watcher.until(/^\* 1 FETCH/, Math.max(boundMs * 5, 10_000));
        expect(Date.now() - t).toBeLessThan(boundMs);
        const listed = flags.map((f) => f.replace('\\', '\\\\')).join(' ');
        expect(text).toMatch(new RegExp(`FLAGS \\(${listed}\\)\\)$`, 'm'));
      };
      await until('the subscription', async () => (await subscribed()) === 1);
      // Live: a change stored elsewhere comes by push.
      await flag(['\\Answered'], PUSH_BOUND_MS);

      // The subscription's connection is killed; a change made meanwhile still arrives.
      const list = (await admin.client('LIST')) as string;
      const ids = list
        .split('\n')
        .filter((l) => l.includes(` name=${pushSubscriberName(r.prefix)} `))
        .map((l) => /(?:^| )id=(\d+)/.exec(l)?.[1] as string);
      expect(ids).toHaveLength(1);
      await admin.client('KILL', 'ID', ids[0] as string);
      await flag(['\\Flagged'], 5_000);
      await until('the subscription again', async () => (await subscribed()) === 1);
      await flag(['\\Answered', '\\Flagged'], PUSH_BOUND_MS);

      // Redis refuses the mail channel (serve's own connections and the API's channel keep working):
      // nothing is published or heard, and the 300 ms poll tells the session.
      const pollsBefore = await metric(r, 'sealpost_imap_idle_wakeups_total{cause="poll",result="changed"}');
      await admin.acl('SETUSER', aclUser, 'resetchannels', `&${r.prefix}:api:*`);
      await until('the subscription to drop', async () => (await subscribed()) === 0);
      await flag(['\\Seen'], 5_000);
      expect(
        await metric(r, 'sealpost_imap_idle_wakeups_total{cause="poll",result="changed"}'),
      ).toBeGreaterThan(pollsBefore);
      // The channel back: serve subscribes again by itself and push resumes.
      await admin.acl('SETUSER', aclUser, '&*');
      await until('the subscription to return', async () => (await subscribed()) === 1);
      await flag(['\\Draft'], PUSH_BOUND_MS);
      await done(watcher);
    } finally {
      for (const fn of closers.reverse()) await Promise.resolve(fn()).catch(() => {});
    }
  }, 180_000);
});
