// Two `sealpost worker` processes deliver a backlog addressed to one wallet
// at the same time. SendMail takes the Email index from the mailbox's
// mail_count, so the wallet-keyed `sendmail` lease must keep them apart:
// every message gets its own index, none fails, none is doubled.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { getMailbox } from '../../chain/client/index.ts';
import { QUEUE_DELIVER } from '../../src/contracts/inbound-jobs.ts';
import { walletLeaseKey } from '../../src/core/limits/redis-keys.ts';
import { MessagesRepo } from '../../src/core/store/index.ts';
import { SmtpClient, startWorkerProcess, waitForInbox } from '../support/cost-guard-helpers.ts';
import { RIG_DOMAIN, startServeRig } from '../support/serve-rig.ts';

const MESSAGES = 24;

describe('wallet leases across worker processes', () => {
  it('two workers delivering to the same recipient never produce the same Email index', async () => {
    const rig = await startServeRig({ serve: { components: { smtp: true, workers: false } } });
    const bob = await rig.mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const deliver = new Queue(QUEUE_DELIVER, { connection: rig.redis, prefix: rig.prefix });

    // The backlog is queued first, on a paused queue, and released once both
    // workers are up: otherwise the first to start can finish all of it
    // before the second is ready (on a loaded machine a start takes seconds).
    await deliver.pause();
    const smtp = await SmtpClient.open(rig.mxPort);
    for (let i = 0; i < MESSAGES; i++) {
      const r = await smtp.send(`s${i}@remote.example`, [`${wallet}@${RIG_DOMAIN}`], `backlog-${i}`);
      expect(r.data?.code).toBe(250);
    }
    await smtp.quit();

    const lease = walletLeaseKey(rig.prefix, wallet, 'sendmail');
    const holders = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const token = await rig.redis.get(lease);
        if (token) holders.add(token);
        await sleep(10);
      }
    })();

    // The workers log at info level, so each one's `status=sent` delivery lines show its share.
    const workerConfig = join(rig.dataDir, 'worker.toml');
    writeFileSync(
      workerConfig,
      readFileSync(rig.configFile, 'utf8').replace('level = "silent"', 'level = "info"'),
    );
    const workers = await Promise.all([
      startWorkerProcess(workerConfig, rig.dataDir, 8),
      startWorkerProcess(workerConfig, rig.dataDir, 8),
    ]);
    await deliver.resume();
    const inbox = await waitForInbox(
      rig.chain.connection,
      rig.chain.programId,
      bob.publicKey,
      MESSAGES,
      150_000,
    );
    const deadline = Date.now() + 30_000;
    let counts = await deliver.getJobCounts('completed', 'failed');
    while ((counts.completed ?? 0) + (counts.failed ?? 0) < MESSAGES && Date.now() < deadline) {
      await sleep(200);
      counts = await deliver.getJobCounts('completed', 'failed');
    }
    watching = false;
    await watcher;
    await Promise.all(workers.map((w) => w.stop()));
    const shares = workers.map(
      (w) => w.stderr().match(/"msg":"inbound delivery to=<[^>]*> status=sent/g)?.length ?? 0,
    );
    await deliver.close();

    expect(counts).toEqual({ completed: MESSAGES, failed: 0 });
    // Both processes delivered part of the backlog.
    expect(shares.every((n) => n > 0)).toBe(true);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(MESSAGES);
    expect(inbox).toHaveLength(MESSAGES);
    expect((await getMailbox(rig.chain.connection, rig.chain.programId, bob.publicKey))?.mailCount).toBe(
      BigInt(MESSAGES),
    );
    const copies = await new MessagesRepo(rig.serving.store.db).listForWallet(wallet, { limit: 1000 });
    const indexes = copies.map((c) => Number(c.chainIndex)).sort((a, b) => a - b);
    expect(indexes).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
    expect(new Set(copies.map((c) => c.emailAddress)).size).toBe(MESSAGES);
    // The sends went through the wallet-keyed lease, held by one send after another; none is left behind.
    expect(holders.size).toBeGreaterThan(1);
    expect(await rig.redis.exists(lease)).toBe(0);
  }, 240_000);
});
