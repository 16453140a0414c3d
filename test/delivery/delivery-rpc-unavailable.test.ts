// A 429 storm never spends a delivery attempt (issue 30): against a devnet
// in fidelity mode that answers HTTP 429 above one call a second, with
// `rpc_max_wait_secs = 1` (every call gives up with RpcUnavailableError at
// its first 429), a delivery job is run again and again without its
// `attemptsMade` growing, nothing is bounced, no line is logged per job; once
// the limit is lifted the message is delivered exactly once (one Email
// account with its CID). Real devnet, Redis (random prefix), pind.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { createConnection } from '../../src/core/chain-rpc.ts';
import { startDeliveryRig } from '../support/delivery-rig.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('a delivery while the chain RPC answers 429', { timeout: 180_000 }, () => {
  it('spends no attempt, bounces nothing, and delivers exactly once when the limit lifts', async () => {
    const chain = await startTestChain();
    const mail = await prepareMailChain(chain, 'mail.test');
    const bob = await mail.mailbox();
    const wallet = bob.publicKey.toBase58();
    const { logs, deliver, outbound, startWorkers, accept, completed } = await startDeliveryRig(
      chain,
      mail,
      'rpc429',
      cleanups,
    );
    // As src/run/serve/serve.ts makes it, with `rpc_max_wait_secs = 1` and no client-side rate.
    const connection = createConnection(chain.devnet.rpcUrl, {
      maxRps: 0,
      maxWaitMs: 1000,
      log: pino({ level: 'info' }, logs.stream).child({ component: 'chain-rpc' }),
    });
    await startWorkers({ connection });
    // One call a second, Retry-After 1 s: a delivery's calls come faster, so it meets 429s throughout.
    chain.devnet.setFidelity({ maxRps: 1, retryAfterSecs: 1 });
    chain.devnet.resetFidelityStats();

    // Two attempts: one spent on a 429 would show, two would bounce the message.
    const id = `${await accept([wallet], 'storm', 2)}.0`;

    // The storm: the job keeps being run and delayed, never charged an attempt.
    const stormEnds = Date.now() + 8_000;
    let runs = 0;
    while (Date.now() < stormEnds) {
      const job = await deliver.getJob(id);
      // Should it get through between 429s after all, its completion is its one attempt (checked below).
      if (job && (await job.isCompleted())) break;
      if (job) {
        expect(job.attemptsMade, job.failedReason).toBe(0);
        expect(await job.isFailed()).toBe(false);
        runs = Math.max(runs, job.attemptsStarted);
      }
      await sleep(100);
    }
    const storm = chain.devnet.fidelityStats();
    expect(storm.rateLimited).toBeGreaterThan(0);
    // Run more than once: at least one run ended on a 429 and was delayed, not failed.
    expect(runs).toBeGreaterThan(1);

    chain.devnet.setFidelity({ maxRps: 0 });
    const done = await completed(id, 60_000);
    // The completion is the one attempt it spent.
    expect(done.attemptsMade).toBe(1);
    const cid = done.data.stages.pin?.cid;
    expect(cid).toBeTruthy();
    const inbox = await listInbox(chain.connection, chain.programId, bob.publicKey);
    expect(inbox.filter((e) => e.email.cid === cid)).toHaveLength(1);
    expect(inbox).toHaveLength(1);
    expect(await outbound.count()).toBe(0);
    // Logged once a minute at most, never once per job run.
    expect(logs.lines.filter((l) => /status=deferred|status=bounced/.test(String(l.msg)))).toHaveLength(0);
    expect(
      logs.lines.filter((l) => String(l.msg).startsWith('deliveries wait for the chain RPC')),
    ).toHaveLength(1);
    expect(logs.lines.filter((l) => l.component === 'chain-rpc' && l.cause === 'rate-limited')).toHaveLength(
      1,
    );
  });
});
