// Silent failures made loud (issue 30, part 6): a delivery whose SendMail
// never lands (devnet fidelity dropRate 1) runs out of attempts, is proven
// not landed, fails for good with one component=delivery line, a metric and
// a 5.4.7 DSN to the sender; `sealpost queue list --failed` / `show` (a
// child process) show it with its signature and checkpoint; `retry` with
// drops switched off delivers it exactly once (one Email account with its
// CID) and sends no second DSN. Real devnet, Redis (random prefix), pind.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
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

describe('a delivery whose SendMail never confirmed', { timeout: 180_000 }, () => {
  it('fails loudly after the proof, bounces 5.4.7, is listed, shown, and retried into one delivery', async () => {
    const chain = await startTestChain({ fidelity: { dropRate: 0 } });
    const mail = await prepareMailChain(chain, 'mail.test');
    const bob = await mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const { dir, prefix, blobs, logs, deliver, outbound, startWorkers, accept, completed } =
      await startDeliveryRig(chain, mail, 'unconf', cleanups);
    const metrics = new SealpostMetrics({ processMetrics: false });
    await startWorkers({ metrics, maxResigns: 1 });
    chain.devnet.setFidelity({ dropRate: 1 });

    const id = `${await accept([wallet], 'lost', 2)}.0`;

    const failed = await eventually(async () => {
      const job = await deliver.getJob(id);
      return job && (await job.isFailed()) ? job : undefined;
    }, 90_000);
    const sig = failed.data.stages.submit?.signature ?? '';
    expect(sig).not.toBe('');
    expect(failed.data.finalFailure).toMatchObject({ reason: 'expired', signature: sig, dsn: 'queued' });

    const line = logs.lines.find((l) => l.component === 'delivery' && l.job === id);
    expect(line).toMatchObject({ wallet, sig, reason: 'expired', level: 50 });
    expect(String(line?.msg)).toContain(`delivery failed for good with an unconfirmed SendMail: job=${id}`);
    expect(await metrics.render()).toMatch(
      /sealpost_delivery_unconfirmed_failures_total\{reason="expired"\} 1/,
    );
    expect(await metrics.render()).toMatch(/sealpost_delivery_awaiting_expiry_proof 0/);

    const dsns = (await outbound.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.data);
    expect(dsns).toHaveLength(1);
    expect(dsns[0]).toMatchObject({ from: '', to: ['ann@remote.test'], kind: 'dsn' });
    const dsn = (await blobs.read(dsns[0]?.blobKey ?? '')).toString();
    expect(dsn).toMatch(/Status: 5\.4\.7/);
    expect(dsn).toContain('delivery time expired, the message was not recorded');

    // The CLI, as an operator runs it.
    writeFileSync(
      join(dir, 'sealpost.toml'),
      `[redis]\nurl = "${REDIS_URL}"\nprefix = "${prefix}"\n\n[store]\ndata_dir = "."\n`,
    );
    const list = await sealpost(['queue', 'list', '--failed', '--json'], dir);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, state: 'failed', signature: sig, unconfirmed: true });
    expect(String(rows[0]?.reason)).toContain(`expired: SendMail ${sig} never confirmed; DSN 5.4.7 sent`);
    const show = await sealpost(['queue', 'show', id], dir);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`  signature:    ${sig}`);
    expect(show.stdout).toContain('  confirmed:    no');
    expect(show.stdout).toContain('final failure: expired');

    chain.devnet.setFidelity({ dropRate: 0 });
    const retry = await sealpost(['queue', 'retry', id], dir);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toBe(`${id}: retried, runs now\n`);
    const done = await completed(id, 90_000, (job) => job.attemptsMade > 0);
    const cid = done.data.stages.pin?.cid;
    const inbox = await listInbox(chain.connection, chain.programId, bob.publicKey);
    expect(inbox.filter((e) => e.email.cid === cid)).toHaveLength(1);
    // No second DSN for the retried job.
    expect(await outbound.count()).toBe(1);
  });
});
