// Rent recovery (`[chain] rent_recovery_days`, delivery/rent-recovery.ts)
// over the whole pipeline: mail goes in at the MX of `startServe` on a
// devnet, is published (SendMail) and stored; its stored timestamps are
// then aged, and the sweep closes the Email accounts of the old copies with
// the pipeline's own DeleteMail worker. Real Redis under a random prefix, a
// SQLite store in a temp dir.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Keypair, PublicKey } from '@solana/web3.js';
import { Queue } from 'bullmq';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import {
  createMailboxInstruction,
  deleteMailInstruction,
  emailAddress,
  fromHash,
  getEmailAt,
  getMailbox,
  sendMailInstruction,
} from '../../chain/client/index.ts';
import {
  QUEUE_RENT_RECOVERY,
  type RentRecoveryPolicy,
  rentRecoveryMetrics,
  rentRecoveryPolicyOf,
  startRentRecovery,
  sweepRentRecovery,
} from '../../delivery/rent-recovery.ts';
import { readChainRetention } from '../../pinning/pind/retention.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import { MessagesRepo, type StoredMessage } from '../../src/core/store/index.ts';
import { MemoryIndexState } from '../../src/core/store/program-index.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { waitForChainTime } from '../support/devnet.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from '../support/serve-rig.ts';

const DAY_MS = 86_400_000;
const POLICY: RentRecoveryPolicy = { days: 30, batch: 500, intervalSecs: 3600 };

async function deliver(rig: ServeRig, owner: Keypair, n: number, tag: string): Promise<StoredMessage[]> {
  const wallet = owner.publicKey.toBase58();
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: rig.mxPort,
    secure: false,
    ignoreTLS: true,
  });
  for (let i = 0; i < n; i++) {
    await transport.sendMail({
      envelope: { from: 'a@remote.example', to: [`${wallet}@${RIG_DOMAIN}`] },
      raw: `Subject: ${tag}-${i}\r\nMessage-ID: <${tag}-${i}@remote.example>\r\n\r\nbody ${tag}-${i}\r\n`,
    });
  }
  transport.close();
  const messages = new MessagesRepo(rig.serving.store.db);
  for (let i = 0; i < 600; i++) {
    const rows = (await messages.listForWallet(wallet)).filter((m) => m.emailAddress !== null);
    if (rows.length >= n) return rows;
    await sleep(50);
  }
  throw new Error(`${n} messages to ${wallet} were not delivered`);
}

/** Moves copies' stored receipt time back by `days` (the sweep's clock is the store's timestamps). */
async function age(rig: ServeRig, rows: StoredMessage[], days: number): Promise<void> {
  for (const m of rows) {
    await rig.serving.store.db
      .updateTable('messages')
      .set({ received_at: m.receivedAt - days * DAY_MS })
      .where('id', '=', m.id)
      .execute();
  }
}

function sweepDeps(rig: ServeRig, policy: RentRecoveryPolicy = POLICY) {
  return {
    messages: new MessagesRepo(rig.serving.store.db),
    redis: rig.redis,
    prefix: rig.prefix,
    connection: rig.chain.connection,
    programId: rig.chain.programId,
    authority: rig.mail.authority.publicKey,
    policy,
    // The serving process's registry: the DeleteMail worker counts into it too.
    metrics: rentRecoveryMetrics(rig.serving.metrics),
  };
}

async function waitRecovered(rig: ServeRig, ids: string[], timeoutMs = 60_000): Promise<StoredMessage[]> {
  const messages = new MessagesRepo(rig.serving.store.db);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await Promise.all(ids.map((id) => messages.get(id)));
    if (rows.every((r) => r?.rentRecoveredAt != null)) return rows as StoredMessage[];
    if (Date.now() > deadline)
      throw new Error(`${rows.filter((r) => r?.rentRecoveredAt == null).length} rows not marked recovered`);
    await sleep(100);
  }
}

/** How many transactions ever named the account (a SendMail, then at most one DeleteMail). */
async function signaturesOf(rig: ServeRig, address: string): Promise<number> {
  return (await rig.chain.connection.getSignaturesForAddress(new PublicKey(address), {}, 'confirmed')).length;
}

async function readFromStore(rig: ServeRig, owner: Keypair, m: StoredMessage): Promise<string> {
  const blobs = new BlobStore(join(rig.config.store.data_dir, 'blobs'));
  const sealed = await blobs.read(m.blobKey);
  const opened = await openSealed(
    new Uint8Array(sealed.buffer, sealed.byteOffset, sealed.byteLength),
    walletEncryptionKeypair(owner.secretKey),
  );
  return Buffer.from(opened.raw).toString('utf8');
}

describe('rent recovery', () => {
  it('is off by default: no schedule, nothing closed however old the mail', async () => {
    const rig = await startServeRig();
    expect(rig.config.chain.rent_recovery_days).toBe(0);
    const policy = rentRecoveryPolicyOf(rig.config.chain);
    expect(policy).toEqual({ days: 0, batch: 500, intervalSecs: 3600 });
    const owner = await rig.mail.mailbox();
    const rows = await deliver(rig, owner, 2, 'off');
    await age(rig, rows, 400);

    const r = await sweepRentRecovery(sweepDeps(rig, policy));
    expect(r.outcome).toBe('off');
    expect(r.examined).toBe(0);
    const queue = new Queue(QUEUE_RENT_RECOVERY, { connection: rig.redis, prefix: rig.prefix });
    expect(await queue.getJobSchedulers()).toEqual([]);
    await queue.close();
    for (const m of rows) {
      expect(
        await getEmailAt(rig.chain.connection, rig.chain.programId, m.emailAddress as string),
      ).not.toBeNull();
      expect((await new MessagesRepo(rig.serving.store.db).get(m.id))?.rentRecoveredAt).toBeNull();
    }
  }, 90_000);

  it('closes only mail older than N days, returns the rent, marks the rows, and never closes twice', async () => {
    const rig = await startServeRig();
    const owner = await rig.mail.mailbox();
    const rows = await deliver(rig, owner, 5, 'old');
    const old = rows.slice(0, 3);
    const fresh = rows.slice(3);
    await age(rig, old, 31);
    await age(rig, fresh, 29);
    const authority = rig.mail.authority.publicKey;
    const held = await Promise.all(
      old.map(
        async (m) =>
          (await rig.chain.connection.getAccountInfo(new PublicKey(m.emailAddress as string)))?.lamports ?? 0,
      ),
    );
    expect(held).toEqual([2_679_600, 2_679_600, 2_679_600]);
    // pind's chain retention (`pind gc --chain`) keeps the operator pins of CIDs Email accounts name.
    const cids = rows.map((m) => m.cid as string);
    const index = new MemoryIndexState();
    const retention = () =>
      readChainRetention(rig.chain.connection, rig.chain.programId, authority, BigInt(Date.now()), {
        pinned: cids,
        state: index,
      });
    expect([...(await retention()).referenced].sort()).toEqual([...cids].sort());
    const before = await rig.chain.balance(authority);

    // Two sweepers at once: one takes the lease, the other finds it busy.
    const [a, b] = await Promise.all([sweepRentRecovery(sweepDeps(rig)), sweepRentRecovery(sweepDeps(rig))]);
    const done = [a, b].filter((r) => r.outcome === 'done');
    expect(done).toHaveLength(1);
    expect([a, b].filter((r) => r.outcome === 'busy')).toHaveLength(1);
    expect(done[0]).toMatchObject({ examined: 3, queued: 3, gone: 0, bountyLocked: 0, rpcCalls: 1 });
    expect(done[0]?.lamportsQueued).toBe(3 * 2_679_600);
    // A sweep while the jobs are still waiting or running queues none again.
    const again = await sweepRentRecovery(sweepDeps(rig));
    expect(again.queued).toBe(0);

    const marked = await waitRecovered(
      rig,
      old.map((m) => m.id),
    );
    for (const m of old) {
      expect(
        await getEmailAt(rig.chain.connection, rig.chain.programId, m.emailAddress as string),
      ).toBeNull();
      // One SendMail, one DeleteMail: nothing was sent twice.
      expect(await signaturesOf(rig, m.emailAddress as string)).toBe(2);
    }
    for (const m of fresh) {
      expect(
        await getEmailAt(rig.chain.connection, rig.chain.programId, m.emailAddress as string),
      ).not.toBeNull();
    }
    // The rent came back to the authority, less three transaction fees (5000 each, plus a priority fee).
    const delta = (await rig.chain.balance(authority)) - before;
    expect(delta).toBeLessThanOrEqual(3 * 2_679_600 - 3 * 5000);
    expect(delta).toBeGreaterThan(3 * 2_679_600 - 3 * 10_000);
    // The program index follows the DeleteMails and drops the closed accounts: a gc now would
    // release the operator pins of the recovered mail (the store keeps its own sealed copy).
    expect([...(await retention()).referenced].sort()).toEqual(fresh.map((m) => m.cid as string).sort());
    const metrics = rentRecoveryMetrics(rig.serving.metrics);
    expect(metrics.closed.get({ outcome: 'closed' })).toBe(3);
    expect(metrics.lamports.get()).toBe(3 * 2_679_600);

    // Marked rows are never swept again: nothing examined, nothing queued, no RPC.
    const second = await sweepRentRecovery(sweepDeps(rig));
    expect(second).toMatchObject({ outcome: 'done', examined: 0, queued: 0, rpcCalls: 0 });
    // An injected clock that makes the fresh ones old too: only they are left to sweep.
    const later = await sweepRentRecovery({ ...sweepDeps(rig), now: () => Date.now() + 2 * DAY_MS });
    expect(later.examined).toBe(2);
    await waitRecovered(
      rig,
      fresh.map((m) => m.id),
    );

    // The store still serves every message, the recovered ones included.
    const messages = new MessagesRepo(rig.serving.store.db);
    expect(await messages.listForWallet(owner.publicKey.toBase58())).toHaveLength(5);
    for (const m of marked) {
      expect(m.rentRecoveredAt).toBeGreaterThan(0);
      expect(await readFromStore(rig, owner, m)).toMatch(/body old-\d/);
    }
  }, 120_000);

  it('skips a bounty-locked Email until its window ends, and marks one its recipient already deleted', async () => {
    const rig = await startServeRig();
    const bob = await rig.mail.mailbox();
    const rows = await deliver(rig, bob, 2, 'bounty');
    const [ownDeleted, plain] = rows as [StoredMessage, StoredMessage];
    const p = rig.chain.programId;
    const authority = rig.mail.authority;

    // The recipient deletes one itself: the rent still goes to its payer, the authority.
    await rig.chain.send(
      [
        deleteMailInstruction({
          programId: p,
          signer: bob.publicKey,
          email: new PublicKey(ownDeleted.emailAddress as string),
          rentPayer: authority.publicKey,
        }),
      ],
      [bob],
    );
    // An Email of ours with a bounty (direct mail from the authority's own mailbox), its window open for a few seconds.
    await rig.chain.send(
      [createMailboxInstruction({ programId: p, owner: authority.publicKey })],
      [authority],
    );
    const slot = await rig.chain.connection.getSlot('confirmed');
    const chainNow = (await rig.chain.connection.getBlockTime(slot)) ?? Math.floor(Date.now() / 1000);
    const expiresAt = chainNow + 6;
    const index = (await getMailbox(rig.chain.connection, p, bob.publicKey))?.mailCount ?? 0n;
    await rig.chain.send(
      [
        sendMailInstruction({
          programId: p,
          sender: authority.publicKey,
          recipient: bob.publicKey,
          index,
          fromHash: fromHash(authority.publicKey.toBase58()),
          cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
          bountyLamports: 50_000n,
          expiresAt: BigInt(expiresAt),
        }),
      ],
      [authority],
    );
    const bountyEmail = emailAddress(p, bob.publicKey, index)[0].toBase58();
    const messages = new MessagesRepo(rig.serving.store.db);
    const { message: bountyRow } = await messages.storeDelivered({
      id: 'bounty-test.1',
      wallet: bob.publicKey.toBase58(),
      blobKey: plain.blobKey,
      size: plain.size,
      receivedAt: Date.now(),
      cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
      pinnedByOperator: false,
      chainIndex: index.toString(),
      emailAddress: bountyEmail,
      txSignature: null,
      publishedByUs: true,
    });
    await age(rig, [ownDeleted, plain, bountyRow], 31);

    const first = await sweepRentRecovery(sweepDeps(rig));
    expect(first).toMatchObject({ examined: 3, queued: 1, gone: 1, bountyLocked: 1, notOurs: 0 });
    // getMultipleAccounts, and getSlot + getBlockTime once for the bounty's window.
    expect(first.rpcCalls).toBe(3);
    expect((await messages.get(ownDeleted.id))?.rentRecoveredAt).not.toBeNull();
    await waitRecovered(rig, [plain.id]);
    expect((await messages.get(bountyRow.id))?.rentRecoveredAt).toBeNull();
    expect(await getEmailAt(rig.chain.connection, p, bountyEmail)).not.toBeNull();
    // Nothing was sent for the recipient-deleted one: its SendMail and its recipient's DeleteMail only.
    expect(await signaturesOf(rig, ownDeleted.emailAddress as string)).toBe(2);

    // Past the claim window the sender may close it: the next sweep does, bounty and rent back to the authority.
    await waitForChainTime(rig.chain.connection, expiresAt + 1);
    const before = await rig.chain.balance(authority.publicKey);
    const second = await sweepRentRecovery(sweepDeps(rig));
    expect(second).toMatchObject({ examined: 1, queued: 1, bountyLocked: 0 });
    await waitRecovered(rig, [bountyRow.id]);
    expect(await getEmailAt(rig.chain.connection, p, bountyEmail)).toBeNull();
    const delta = (await rig.chain.balance(authority.publicKey)) - before;
    expect(delta).toBeGreaterThan(2_679_600 + 50_000 - 10_000);
    const metrics = rentRecoveryMetrics(rig.serving.metrics);
    expect(metrics.closed.get({ outcome: 'gone' })).toBe(1);
    expect(metrics.closed.get({ outcome: 'closed' })).toBe(2);
    expect(await readFromStore(rig, bob, (await messages.get(plain.id)) as StoredMessage)).toMatch(
      /body bounty-1/,
    );
  }, 120_000);

  it('runs on one schedule from several worker processes, and removing the policy removes it', async () => {
    const rig = await startServeRig();
    const owner = await rig.mail.mailbox();
    const rows = await deliver(rig, owner, 4, 'sched');
    await age(rig, rows, 31);
    const policy: RentRecoveryPolicy = { days: 30, batch: 500, intervalSecs: 1 };
    const runner = (p: RentRecoveryPolicy) =>
      startRentRecovery({
        ...sweepDeps(rig, p),
        redis: () => createRedis(rig.config.redis, { maxRetriesPerRequest: null }),
      });
    // Two "processes" each upsert the schedule and run a sweep worker.
    const one = await runner(policy);
    const two = await runner(policy);
    try {
      const queue = new Queue(QUEUE_RENT_RECOVERY, { connection: rig.redis, prefix: rig.prefix });
      expect(await queue.getJobSchedulers()).toHaveLength(1);
      await waitRecovered(
        rig,
        rows.map((m) => m.id),
      );
      // Let a few more sweeps run over the marked rows.
      await sleep(3000);
      for (const m of rows) expect(await signaturesOf(rig, m.emailAddress as string)).toBe(2);
      expect(rentRecoveryMetrics(rig.serving.metrics).closed.get({ outcome: 'closed' })).toBe(4);
      await one.close();
      await two.close();
      // Turned off (rent_recovery_days = 0 at the next start): the schedule goes.
      const off = await runner({ ...policy, days: 0 });
      await off.close();
      expect(await queue.getJobSchedulers()).toEqual([]);
      await queue.close();
    } finally {
      await one.close().catch(() => {});
      await two.close().catch(() => {});
    }
  }, 120_000);
});
