// DELETE /v1/admin/accounts/{wallet}: the reference's sweep against real
// Redis (random prefix) and BullMQ queues, on SQLite and PostgreSQL. Checks
// the jobs enqueued, the rows and keys gone, the keys that must stay, and
// the audit rows.
import { Queue } from 'bullmq';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QUEUE_DELETE_MAIL, QUEUE_UNPIN } from '../../src/contracts/inbound-jobs.ts';
import type { Keypair } from '../../src/core/keys/keypair-file.ts';
import {
  accountDeletedKey,
  loginChallengeKey,
  nullSenderPublicationWindowKey,
  senderPublicationWindowKey,
  stepUpChallengeKey,
  walletLeaseKey,
} from '../../src/core/limits/redis-keys.ts';
import { AccountsRepo, type DeliveredCopy, MessagesRepo } from '../../src/core/store/index.ts';
import { type ApiRig, DIALECTS, newWallet, startRig } from '../support/api-rig.ts';

const STEP_UP = 'x-sealpost-step-up';

function copy(wallet: string, id: string, over: Partial<DeliveredCopy>): DeliveredCopy {
  return {
    id,
    wallet,
    blobKey: `sealed/${id}`,
    size: 100,
    receivedAt: 1_770_000_000_000,
    cid: null,
    pinnedByOperator: false,
    chainIndex: null,
    emailAddress: null,
    txSignature: null,
    publishedByUs: false,
    wraps: [{ readerId: 'imap', wrap: `wrap-${id}` }],
    ...over,
  };
}

describe.each(DIALECTS)('admin account sweep on %s', (dialect) => {
  let rig: ApiRig;
  let alice: Keypair;
  let bob: Keypair;

  beforeEach(async () => {
    rig = await startRig(dialect);
    alice = newWallet();
    bob = newWallet();
  });
  afterEach(async () => {
    await rig.close();
  });

  async function populate(owner: Keypair, tag: string): Promise<string> {
    const token = await rig.login(owner);
    await rig.request('POST', '/v1/account', { token });
    await rig.request('PATCH', '/v1/account/settings', {
      token,
      json: { timezone: 'UTC', dnd_schedule: { windows: [{ days: ['sun'], start: '00:00', end: '00:00' }] } },
    });
    await rig.request('PUT', '/v1/account/pin-provider', {
      token,
      json: { kind: 'remote' },
      headers: { [STEP_UP]: (await rig.stepUp(token, owner)).proof },
    });
    await rig.request('POST', '/v1/auth/revoke-sessions', {
      token,
      headers: { [STEP_UP]: (await rig.stepUp(token, owner)).proof },
    });
    const fresh = await rig.login(owner);
    const m = new MessagesRepo(rig.store.db);
    const w = owner.address;
    // pinned + published: unpin and DeleteMail
    await m.storeDelivered(
      copy(w, `${tag}A.1`, {
        cid: `bafkrei${tag}a`,
        pinnedByOperator: true,
        publishedByUs: true,
        emailAddress: `Email${tag}A`,
        chainIndex: '0',
        txSignature: 'sa',
      }),
    );
    // no_ipfs marker held by us: DeleteMail, never an unpin
    await m.storeDelivered(
      copy(w, `${tag}B.1`, {
        cid: `b3:${'ab'.repeat(32)}`,
        pinnedByOperator: true,
        publishedByUs: true,
        emailAddress: `Email${tag}B`,
        chainIndex: '1',
        txSignature: 'sb',
      }),
    );
    // pinned by us, published by another deployment: unpin only
    await m.storeDelivered(
      copy(w, `${tag}C.1`, {
        cid: `bafkrei${tag}c`,
        pinnedByOperator: true,
        publishedByUs: false,
        emailAddress: `Email${tag}C`,
      }),
    );
    // not pinned, not published: nothing to enqueue
    await m.storeDelivered(copy(w, `${tag}D.1`, {}));
    await m.ensureMailbox(w, 'Archive');
    // Redis: a lease, a publication window per local domain, and live challenges.
    await rig.redis.set(walletLeaseKey(rig.prefix, w, 'submit'), '1');
    for (const d of ['mail.test', 'MAIL.TEST.', 'other.test']) {
      await rig.redis.incr(senderPublicationWindowKey(rig.prefix, `${w}@${d}`));
    }
    await rig.request('POST', '/v1/auth/challenge', { json: { wallet: w } });
    await rig.stepUp(fresh, owner);
    return fresh;
  }

  const count = async (
    table:
      | 'messages'
      | 'mailboxes'
      | 'reader_wraps'
      | 'dnd_schedules'
      | 'pin_providers'
      | 'account_sessions'
      | 'accounts',
    wallet: string,
  ) => {
    const r = await sql<{
      n: number | string;
    }>`select count(*) as n from ${sql.table(table)} where wallet = ${wallet}`.execute(rig.store.db);
    return Number(r.rows[0]?.n);
  };
  const TABLES = [
    'messages',
    'mailboxes',
    'reader_wraps',
    'dnd_schedules',
    'pin_providers',
    'account_sessions',
    'accounts',
  ] as const;

  it('enqueues unpin and DeleteMail jobs, removes rows and wallet keys, keeps the rest, audits success', async () => {
    await populate(alice, 'AL');
    const bobToken = await populate(bob, 'BO');
    const w = alice.address;
    // Keys the sweep must not reach.
    const kept = [
      senderPublicationWindowKey(rig.prefix, `${w}@foreign.test`),
      senderPublicationWindowKey(rig.prefix, 'alice@mail.test'),
      nullSenderPublicationWindowKey(rig.prefix),
    ];
    for (const k of kept) await rig.redis.incr(k);
    for (const t of TABLES) expect(await count(t, w)).toBeGreaterThan(0);
    const before = await rig.redisKeys();
    expect(before.filter((k) => k.includes(`:rl:wallet:${w}:`)).length).toBeGreaterThan(0);
    expect(before).toContain(loginChallengeKey(rig.prefix, w));
    expect(before).toContain(stepUpChallengeKey(rig.prefix, w));

    const r = await rig.admin('DELETE', `/v1/admin/accounts/${w}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');

    const connection = { connection: rig.redis, prefix: rig.prefix };
    const unpin = new Queue(QUEUE_UNPIN, connection);
    const deleteMail = new Queue(QUEUE_DELETE_MAIL, connection);
    try {
      const unpins = (await unpin.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => [j.id, j.data]);
      expect(unpins.sort()).toEqual([
        ['unpin-ALA.1', { cid: 'bafkreiALa', wallet: w, messageId: 'ALA.1' }],
        ['unpin-ALC.1', { cid: 'bafkreiALc', wallet: w, messageId: 'ALC.1' }],
      ]);
      const deletes = (await deleteMail.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => [
        j.id,
        j.data,
      ]);
      expect(deletes.sort()).toEqual([
        ['delete-mail-ALA.1', { wallet: w, emailAddress: 'EmailALA', messageId: 'ALA.1' }],
        ['delete-mail-ALB.1', { wallet: w, emailAddress: 'EmailALB', messageId: 'ALB.1' }],
      ]);
    } finally {
      await unpin.close();
      await deleteMail.close();
    }

    for (const t of TABLES) expect(await count(t, w)).toBe(0);
    const after = await rig.redisKeys();
    const walletKeys = after.filter(
      (k) => k.includes(w) && !k.includes(':unpin:') && !k.includes(':delete-mail:'),
    );
    // Left: a window under a foreign domain (not this server's to sweep) and the
    // deletion mark that retires the wallet's tokens, which expires with them.
    const deletedMark = accountDeletedKey(rig.prefix, w);
    expect(walletKeys.sort()).toEqual([...kept.slice(0, 1), deletedMark].sort());
    const markTtl = await rig.redis.ttl(deletedMark);
    expect(markTtl).toBeGreaterThan(3600);
    expect(markTtl).toBeLessThanOrEqual(3900);
    for (const k of kept) expect(after).toContain(k);
    // IP windows are not wallet-keyed and stay.
    expect(after.some((k) => k.includes(':rl:ip:'))).toBe(true);

    // Bob is untouched.
    for (const t of TABLES) expect(await count(t, bob.address)).toBeGreaterThan(0);
    expect(after).toContain(loginChallengeKey(rig.prefix, bob.address));
    expect(after.some((k) => k.includes(`:rl:wallet:${bob.address}:`))).toBe(true);
    expect((await rig.request('GET', '/v1/account', { token: bobToken })).status).toBe(200);

    const audit = await new AccountsRepo(rig.store.db).listAudit({ target: w });
    expect(audit[0]).toMatchObject({
      actor: 'admin',
      action: 'account.delete',
      outcome: 'success',
      detail: { copies: 4, unpin_jobs: 2, delete_mail_jobs: 2 },
    });
    expect((audit[0]?.detail as { redis_keys?: number } | undefined)?.redis_keys).toBeGreaterThanOrEqual(6);

    // Gone: a second delete is a 404, audited as a failure, and enqueues nothing.
    const again = await rig.admin('DELETE', `/v1/admin/accounts/${w}`);
    expect(again.status).toBe(404);
    const audit2 = await new AccountsRepo(rig.store.db).listAudit({ target: w });
    const deletes = audit2.filter((a) => a.action === 'account.delete');
    expect(deletes.map((a) => a.outcome)).toEqual(['failure', 'success']);
    expect(audit2.map((a) => a.action)).toEqual([
      'account.delete',
      'account.delete',
      'sessions.revoke',
      'pin_provider.set',
      'account.create',
    ]);
  });

  it('a store error mid-sweep answers 500, audits a failure and leaves the account row for a retry', async () => {
    await populate(alice, 'AL');
    // Break one satellite table for real: the sweep fails at that step.
    await sql`alter table dnd_schedules rename to dnd_schedules_away`.execute(rig.store.db);
    try {
      const r = await rig.admin('DELETE', `/v1/admin/accounts/${alice.address}`);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: 'internal_error', message: 'internal server error' });
      const audit = await new AccountsRepo(rig.store.db).listAudit({ target: alice.address });
      expect(audit[0]).toMatchObject({ action: 'account.delete', outcome: 'failure', actor: 'admin' });
      expect(await count('accounts', alice.address)).toBe(1);
    } finally {
      await sql`alter table dnd_schedules_away rename to dnd_schedules`.execute(rig.store.db);
    }
    // The retry completes; job ids derived from the copies keep the queues free of duplicates.
    expect((await rig.admin('DELETE', `/v1/admin/accounts/${alice.address}`)).status).toBe(204);
    const unpin = new Queue(QUEUE_UNPIN, { connection: rig.redis, prefix: rig.prefix });
    try {
      expect(await unpin.getJobCounts('waiting')).toEqual({ waiting: 2 });
    } finally {
      await unpin.close();
    }
  });
});
