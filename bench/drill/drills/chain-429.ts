// A 429 storm, then the same stack kept under the node's limit.
//
// Storm: the node allows 20 calls/s (HTTP 429, Retry-After: 1 above it) and
// the stack's `[chain] max_rps` is 40, so the stack really runs into 429s.
// The stack is one process here (serve with the pipeline workers in it), so
// every request the node sees comes from the one client a 429 was answered
// to: a request arriving inside a Retry-After window can only be one already
// on its way when the 429 was answered (a few ms after it), unless the
// client ignores Retry-After (then up to 1000 ms after it).
// fidelityStats().requestsInRetryAfter counts the former too, so the proof is
// retryAfterLatestArrivalMs, well under the Retry-After.
//
// Under: `max_rps` is set to 10 and a second process (a `sealpost worker`)
// joins serve; the node allows 30 calls/s. Each process keeps any one-second
// window at 10 calls, so the node must see no 429 and a peak of at most
// 10 × 2 calls/s.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Drill } from '../drill.ts';
import { Proc } from '../procs.ts';
import { describePhase, finish, type Phase, phaseOk, runPhase, startChainStack } from './chain-load.ts';

const STORM_MESSAGES = 200;
const UNDER_MESSAGES = 100;
const NODE_RPS = 20;
const STACK_RPS = 40;
const UNDER_NODE_RPS = 30;
const UNDER_STACK_RPS = 10;
const UNDER_PROCESSES = 2;
/** A request later than this after the latest 429, inside its Retry-After, was sent after the 429 arrived. */
const IN_FLIGHT_MS = 250;

export const chain429: Drill = {
  name: 'chain-429',
  summary: `${STORM_MESSAGES} messages against a node limited to ${NODE_RPS} calls/s with [chain] max_rps = ${STACK_RPS}, then ${UNDER_MESSAGES} with max_rps = ${UNDER_STACK_RPS} × ${UNDER_PROCESSES} processes under a limit of ${UNDER_NODE_RPS}`,
  budgetMs: 10 * 60_000,
  async run(log) {
    const stack = await startChainStack({
      label: 'chain-429',
      fidelity: { maxRps: NODE_RPS, retryAfterSecs: 1 },
      chain: { max_rps: STACK_RPS },
      oneProcess: true,
    });
    const extraWorker = Proc.sealpost(
      'worker-under',
      ['worker', '--config', stack.configFile],
      /pipeline workers running/,
    );
    try {
      const storm = await runPhase(stack, log, {
        tag: 'storm',
        messages: STORM_MESSAGES,
        drainMs: 5 * 60_000,
      });
      // Under the limit: the new max_rps in the config, serve restarted, a worker process beside it.
      stack.devnet.setFidelity({ maxRps: UNDER_NODE_RPS });
      const config = readFileSync(stack.configFile, 'utf8');
      if (!/^max_rps = \d+$/m.test(config)) throw new Error('no max_rps line in the stack config');
      writeFileSync(stack.configFile, config.replace(/^max_rps = \d+$/m, `max_rps = ${UNDER_STACK_RPS}`));
      await stack.serve.stop('SIGTERM');
      await stack.serve.start();
      await extraWorker.start();
      log(
        `max_rps = ${UNDER_STACK_RPS}: serve restarted, a worker process beside it; node limit ${UNDER_NODE_RPS}`,
      );
      const under = await runPhase(stack, log, { tag: 'under', messages: UNDER_MESSAGES });
      await finish(stack, [storm, under]);
      const s = storm.stats;
      const u = under.stats;
      const stormHonoured = s.rateLimited > 0 && s.retryAfterLatestArrivalMs < IN_FLIGHT_MS;
      const bound = UNDER_STACK_RPS * UNDER_PROCESSES;
      const underOk = u.rateLimited === 0 && u.peakCallsPerSecond <= bound;
      const line = (p: Phase) => describePhase(p);
      return {
        pass: phaseOk(storm) && phaseOk(under) && stormHonoured && underOk,
        detail:
          `storm (node ${NODE_RPS}/s, max_rps ${STACK_RPS}, 1 process): ${line(storm)}; ` +
          `${s.rateLimited} answered 429; ${s.requestsInRetryAfter} requests arrived inside a Retry-After window, ` +
          `the latest ${s.retryAfterLatestArrivalMs} ms after the 429 before it (in flight when it was answered; ` +
          `a client ignoring Retry-After: up to 1000 ms)` +
          ` | under (node ${UNDER_NODE_RPS}/s, max_rps ${UNDER_STACK_RPS} × ${UNDER_PROCESSES} processes): ${line(under)}; ` +
          `${u.rateLimited} answered 429, peak ${u.peakCallsPerSecond} calls/s ≤ ${bound}: ${u.peakCallsPerSecond <= bound ? 'yes' : 'NO'}`,
      };
    } finally {
      await extraWorker.stop('SIGTERM').catch(() => undefined);
      await stack.close();
    }
  },
};
