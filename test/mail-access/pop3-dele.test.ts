// POP3 delete-after-download over real TLS sockets against the whole stack
// (devnet, MX, workers, a Kubo RPC double as the operator pin): by default
// DELE + QUIT removes only the copy in the operator's store, the Email
// account stays on chain and the operator pin stays; with the holder's
// setting `pop3_dele_closes_on_chain` (set through the account API) the
// copy is also released: the pin goes and DeleteMail closes the account.
// RSET and a dropped connection commit nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { getEmailAt, listInbox } from '../../chain/client/index.ts';
import { QUEUE_DELETE_MAIL, QUEUE_UNPIN } from '../../src/contracts/inbound-jobs.ts';
import { MessagesRepo, type StoredMessage } from '../../src/core/store/index.ts';
import { type KuboRpcDouble, startKuboRpcDouble } from '../support/doubles/kubo-rpc-double.ts';
import {
  apiToken,
  deliver,
  LineClient,
  type MailUser,
  mailUser,
  rawMessage,
  startMailRig,
  waitForCopies,
} from '../support/imap-rig.ts';
import type { ServeRig } from '../support/serve-rig.ts';

const doubles: KuboRpcDouble[] = [];
afterEach(async () => {
  for (const d of doubles.splice(0)) await d.close().catch(() => {});
});

async function rigWithKubo(): Promise<{ rig: ServeRig; kubo: KuboRpcDouble }> {
  const kubo = await startKuboRpcDouble();
  doubles.push(kubo);
  const rig = await startMailRig({ serve: { kuboUrl: kubo.url } });
  return { rig, kubo };
}

function plain(user: string, password: string): string {
  return Buffer.from(`\u0000${user}\u0000${password}`).toString('base64');
}

interface Pop {
  c: LineClient;
  say(line: string): Promise<string>;
  /** A multi-line answer, up to its terminating dot. */
  multi(line: string): Promise<string>;
}

/** A logged-in POP3 session over TLS (waits out the lock of a session that just ended). */
async function pop(rig: ServeRig, user: MailUser): Promise<Pop> {
  for (let attempt = 0; ; attempt++) {
    const c = await LineClient.open(rig.pop3Port as number);
    await c.until(/^\+OK/);
    const say = async (line: string) => {
      c.write(`${line}\r\n`);
      return c.until(/^[+-]/);
    };
    const multi = async (line: string) => {
      c.write(`${line}\r\n`);
      return c.until(/^\.$/);
    };
    const reply = await say(`AUTH PLAIN ${plain(user.address, user.password)}`);
    if (reply.startsWith('+OK Logged in')) return { c, say, multi };
    c.close();
    if (!reply.includes('[IN-USE]') || attempt > 100) throw new Error(`POP3 login: ${reply}`);
    await sleep(100);
  }
}

/** Logs the wallet in through the serve process's account API; returns the token. */
async function patchSettings(rig: ServeRig, token: string, body: unknown) {
  const res = await fetch(`${rig.serving.apiUrl}/v1/account/settings`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { account: Record<string, unknown> } };
}

async function twoMessages(rig: ServeRig, user: MailUser): Promise<[StoredMessage, StoredMessage]> {
  await deliver(rig, user.address, rawMessage('pop keep one'));
  await waitForCopies(rig, user.wallet, 1);
  await deliver(rig, user.address, rawMessage('pop keep two'));
  const rows = await waitForCopies(rig, user.wallet, 2);
  const first = rows.find((r) => r.uid === 1);
  const second = rows.find((r) => r.uid === 2);
  if (!first?.cid || !first.emailAddress || !second?.cid || !second.emailAddress)
    throw new Error('not delivered through the chain');
  return [first, second];
}

async function emailExists(rig: ServeRig, address: string): Promise<boolean> {
  return (await getEmailAt(rig.chain.connection, rig.chain.programId, address)) !== null;
}

/** Queued release jobs for a copy (the ids createCopyReleaser gives them). */
async function releaseJobs(rig: ServeRig, id: string): Promise<string[]> {
  const found: string[] = [];
  for (const [queue, job] of [
    [QUEUE_UNPIN, `unpin-${id}`],
    [QUEUE_DELETE_MAIL, `delete-mail-${id}`],
  ] as const) {
    if (await rig.redis.exists(`${rig.prefix}:${queue}:${job}`)) found.push(job);
  }
  return found;
}

describe('POP3 delete-after-download', () => {
  it('by default DELE + QUIT removes only the store copy: the Email account and the operator pin stay', async () => {
    const { rig, kubo } = await rigWithKubo();
    const user = await mailUser(rig);
    const [first, second] = await twoMessages(rig, user);
    expect(kubo.pins.has(first.cid as string)).toBe(true);

    const a = await pop(rig, user);
    const retr = await a.multi('RETR 1');
    expect(retr).toMatch(/^\+OK \d+ octets/);
    expect(retr).toContain('Subject: pop keep one');
    expect(await a.say('DELE 1')).toBe('+OK Message 1 deleted');
    expect(await a.say('QUIT')).toBe('+OK Sealpost POP3 signing off (1 messages deleted)');
    expect(await a.c.closedWithin(3000)).toBe(true);

    // Gone from the store: the row and its wraps.
    const rows = await new MessagesRepo(rig.serving.store.db).listForWallet(user.wallet);
    expect(rows.map((r) => r.id)).toEqual([second.id]);
    const wraps = await rig.serving.store.db
      .selectFrom('reader_wraps')
      .select('message_id')
      .where('message_id', '=', first.id)
      .execute();
    expect(wraps).toEqual([]);
    // Gone from a new POP3 session's maildrop.
    const b = await pop(rig, user);
    expect(await b.multi('LIST')).toMatch(/^\+OK 1 messages\r\n1 \d+$/m);
    expect(await b.multi('UIDL')).not.toMatch(/ \d+\.1$/m);
    expect(await b.say('QUIT')).toBe('+OK Sealpost POP3 signing off');

    // Nothing was queued for release; give the workers time anyway, then
    // the Email account is still on chain and the operator pin still there.
    expect(await releaseJobs(rig, first.id)).toEqual([]);
    await sleep(2000);
    expect(await emailExists(rig, first.emailAddress as string)).toBe(true);
    expect(await listInbox(rig.chain.connection, rig.chain.programId, user.key.publicKey)).toHaveLength(2);
    expect(kubo.pins.has(first.cid as string)).toBe(true);
  }, 180_000);

  it('with pop3_dele_closes_on_chain on, RSET and a dropped connection keep everything; QUIT closes on chain', async () => {
    const { rig, kubo } = await rigWithKubo();
    const user = await mailUser(rig);
    const [first, second] = await twoMessages(rig, user);
    const token = await apiToken(rig, user);
    const set = await patchSettings(rig, token, { pop3_dele_closes_on_chain: true });
    expect(set.status).toBe(200);
    expect(set.body.account.pop3_dele_closes_on_chain).toBe(true);
    const messages = new MessagesRepo(rig.serving.store.db);

    // DELE then RSET: QUIT removes nothing.
    const a = await pop(rig, user);
    expect(await a.say('DELE 1')).toBe('+OK Message 1 deleted');
    expect(await a.say('DELE 2')).toBe('+OK Message 2 deleted');
    expect(await a.say('RSET')).toBe('+OK 2 messages');
    expect(await a.say('QUIT')).toBe('+OK Sealpost POP3 signing off');
    // DELE then a dropped connection (no QUIT): nothing removed (RFC 1939 §6).
    const b = await pop(rig, user);
    expect(await b.say('DELE 1')).toBe('+OK Message 1 deleted');
    b.c.close();
    expect(await b.c.closedWithin(3000)).toBe(true);
    await sleep(1500);
    expect((await messages.listForWallet(user.wallet)).map((r) => r.id).sort()).toEqual(
      [first.id, second.id].sort(),
    );
    expect(await releaseJobs(rig, first.id)).toEqual([]);
    expect(await emailExists(rig, first.emailAddress as string)).toBe(true);
    expect(kubo.pins.has(first.cid as string)).toBe(true);

    // DELE + QUIT with the setting on: the old behaviour, unpin and DeleteMail.
    const c = await pop(rig, user);
    expect(await c.multi('LIST')).toMatch(/^\+OK 2 messages/);
    expect(await c.multi('RETR 1')).toContain('Subject: pop keep one');
    expect(await c.say('DELE 1')).toBe('+OK Message 1 deleted');
    expect(await c.say('QUIT')).toBe('+OK Sealpost POP3 signing off (1 messages deleted)');
    expect((await messages.listForWallet(user.wallet)).map((r) => r.id)).toEqual([second.id]);
    let closed = false;
    for (let i = 0; i < 300 && !closed; i++) {
      closed = !(await emailExists(rig, first.emailAddress as string));
      if (!closed) await sleep(100);
    }
    expect(closed).toBe(true);
    for (let i = 0; i < 300 && kubo.pins.has(first.cid as string); i++) await sleep(100);
    expect(kubo.pins.has(first.cid as string)).toBe(false);
    // The other message is untouched on chain and at the pin.
    expect(await emailExists(rig, second.emailAddress as string)).toBe(true);
    expect(kubo.pins.has(second.cid as string)).toBe(true);

    // Turning it off again restores the default for the next session.
    expect((await patchSettings(rig, token, { pop3_dele_closes_on_chain: false })).status).toBe(200);
    const d = await pop(rig, user);
    expect(await d.say('DELE 1')).toBe('+OK Message 1 deleted');
    expect(await d.say('QUIT')).toBe('+OK Sealpost POP3 signing off (1 messages deleted)');
    expect(await messages.listForWallet(user.wallet)).toEqual([]);
    await sleep(2000);
    expect(await emailExists(rig, second.emailAddress as string)).toBe(true);
    expect(kubo.pins.has(second.cid as string)).toBe(true);
  }, 240_000);
});
