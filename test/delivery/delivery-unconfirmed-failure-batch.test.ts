// Issue 30 part 6, the batched path (the single send is
// test/delivery/delivery-unconfirmed-failure.test.ts): one message to three wallets
// makes three delivery jobs whose SendMails go out in one batched
// transaction; devnet fidelity drops every send (dropRate 1), so that
// transaction never confirms. Each job of the batch runs out of attempts, is
// proven not landed (its own search for its CID) and fails for good exactly
// as a single send does: one component=delivery line per job, the metric
// counted once per job, nobody left awaiting the proof, a 5.4.7 DSN per
// copy to the envelope sender, each listed by `sealpost queue list --failed`
// with the batch's signature. `sealpost queue retry` with drops off then
// delivers each message once (one Email account per CID) and sends no
// second DSN. Real devnet, Redis (random prefix), pind, child CLI processes.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import type { DeliverJobData } from '../../src/contracts/inbound-jobs.ts';
import { SealpostMetrics } from '../../src/core/metrics/index.ts';
import { startDeliveryRig } from '../support/delivery-rig.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { eventually, REDIS_URL } from '../support/spooler-rig.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

function sealpost(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('deliveries whose batched SendMail never confirmed', { timeout: 240_000 }, () => {
  it('each job of the batch fails loudly after its proof, bounces 5.4.7, is listed, and is retried into one delivery', async () => {
    const chain = await startTestChain({ fidelity: { dropRate: 0 } });
    const mail = await prepareMailChain(chain, 'mail.test');
    const owners = [await mail.mailbox(), await mail.mailbox(), await mail.mailbox()];
    const wallets = owners.map((o) => o.publicKey.toBase58());
    const { dir, prefix, blobs, logs, deliver, outbound, startWorkers, accept } = await startDeliveryRig(
      chain,
      mail,
      'unconfb',
      cleanups,
    );
    const metrics = new SealpostMetrics({ processMetrics: false });
    // Batched: the three copies reach SendMail within the wait and share a transaction.
    const batched = { metrics, sendMailBatch: { max: 4, waitMs: 250 } };
    // No re-sign within an attempt: the one batched transaction is what each job ends with.
    const first = await startWorkers({ ...batched, maxResigns: 0 });
    chain.devnet.setFidelity({ dropRate: 1 });

    await accept(wallets, 'lost', 1);
    const jobOf = async (wallet: string): Promise<Job<DeliverJobData>> => {
      const all = await deliver.getJobs(['waiting', 'active', 'delayed', 'failed', 'completed']);
      const job = all.find((j) => j?.data.wallet === wallet);
      if (!job) throw new Error(`no delivery job for ${wallet}`);
      return job;
    };

    const failed = await eventually(async () => {
      const jobs = await Promise.all(wallets.map(jobOf));
      const states = await Promise.all(jobs.map((j) => j.isFailed()));
      return states.every(Boolean) ? jobs : undefined;
    }, 150_000);
    const ids = failed.map((j) => j.id as string);
    expect(new Set(ids).size).toBe(3);
    // One transaction carried all three: the same signature at positions 0, 1, 2 of a batch of 3.
    const sig = failed[0]?.data.stages.submit?.signature ?? '';
    expect(sig).not.toBe('');
    for (const job of failed) {
      const submit = job.data.stages.submit;
      expect(submit?.signature).toBe(sig);
      expect(submit?.confirmed).toBeFalsy();
      expect(submit?.batch?.size).toBe(3);
      // Each resolved on its own, the same way: proven expired, its DSN queued, nothing awaiting.
      expect(job.data.finalFailure).toMatchObject({ reason: 'expired', signature: sig, dsn: 'queued' });
      expect(job.data.exhausted).toBeUndefined();
    }
    expect(failed.map((j) => j.data.stages.submit?.batch?.position).sort()).toEqual([0, 1, 2]);
    // Three different CIDs (each copy sealed for its own recipient), none on chain.
    const cids = failed.map((j) => j.data.stages.pin?.cid as string);
    expect(new Set(cids).size).toBe(3);
    for (const owner of owners)
      expect(await listInbox(chain.connection, chain.programId, owner.publicKey)).toEqual([]);
    expect(chain.devnet.fidelityStats().dropped).toBeGreaterThan(0);

    for (const [i, job] of failed.entries()) {
      const lines = logs.lines.filter((l) => l.component === 'delivery' && l.job === job.id);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ wallet: wallets[i], sig, reason: 'expired', level: 50 });
      expect(String(lines[0]?.msg)).toContain(
        `delivery failed for good with an unconfirmed SendMail: job=${job.id}`,
      );
    }
    const rendered = await metrics.render();
    expect(rendered).toMatch(/sealpost_delivery_unconfirmed_failures_total\{reason="expired"\} 3/);
    expect(rendered).toMatch(/sealpost_delivery_awaiting_expiry_proof 0/);

    // One DSN per failed copy, to the envelope sender, each naming its own recipient.
    const dsns = (await outbound.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.data);
    expect(dsns).toHaveLength(3);
    const texts: string[] = [];
    for (const d of dsns) {
      expect(d).toMatchObject({ from: '', to: ['ann@remote.test'], kind: 'dsn' });
      const text = (await blobs.read(d.blobKey)).toString();
      expect(text).toMatch(/Status: 5\.4\.7/);
      expect(text).toContain('delivery time expired, the message was not recorded');
      texts.push(text);
    }
    for (const w of wallets)
      expect(texts.filter((t) => t.includes(`Final-Recipient: rfc822; ${w}@mail.test`))).toHaveLength(1);

    // The CLI, as an operator runs it.
    writeFileSync(
      join(dir, 'sealpost.toml'),
      `[redis]\nurl = "${REDIS_URL}"\nprefix = "${prefix}"\n\n[store]\ndata_dir = "."\n`,
    );
    const list = await sealpost(['queue', 'list', '--failed', '--json'], dir);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    for (const row of rows) {
      expect(row).toMatchObject({ state: 'failed', signature: sig, unconfirmed: true });
      expect(String(row.reason)).toContain(`expired: SendMail ${sig} never confirmed; DSN 5.4.7 sent`);
    }

    // The workers restarted with the default re-signs, drops off, and the operator retries each job.
    await first.close();
    await startWorkers(batched);
    chain.devnet.setFidelity({ dropRate: 0 });
    for (const id of ids) {
      const retry = await sealpost(['queue', 'retry', id], dir);
      expect(retry.code, retry.stderr).toBe(0);
      expect(retry.stdout).toBe(`${id}: retried, runs now\n`);
    }
    const done = await eventually(async () => {
      const jobs = await Promise.all(ids.map((id) => deliver.getJob(id)));
      for (const job of jobs)
        if (job && (await job.isFailed()) && job.attemptsMade > 0)
          throw new Error(`failed: ${job.failedReason}`);
      const completed = await Promise.all(jobs.map((j) => j?.isCompleted()));
      return completed.every(Boolean) ? (jobs as Job<DeliverJobData>[]) : undefined;
    }, 120_000);
    // Each message once, in its own recipient's inbox, at the index its job recorded.
    for (const [i, job] of done.entries()) {
      const owner = owners[i];
      if (!owner) throw new Error('no owner');
      const inbox = await listInbox(chain.connection, chain.programId, owner.publicKey);
      expect(inbox.map((e) => e.email.cid)).toEqual([cids[i]]);
      expect(job.data.wallet).toBe(wallets[i]);
    }
    // No second DSN for the retried jobs, and no further failure counted.
    expect(await outbound.count()).toBe(3);
    expect(await metrics.render()).toMatch(
      /sealpost_delivery_unconfirmed_failures_total\{reason="expired"\} 3/,
    );
  });
});
