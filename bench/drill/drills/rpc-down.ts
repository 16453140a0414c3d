// The chain's RPC node (`sealpost devnet`, its own process) is stopped for
// 30 s while mail flows, then started again on the same ledger. Decision
// (docs/operations.md): the MX resolves recipients on chain before RCPT, so
// during the outage it answers 4xx; mail acknowledged before waits in the
// queue and the pipeline drains once the node is back. Nothing is lost.
import type { Drill } from '../drill.ts';
import { accountingOk, describeAccounting, formatReplies } from '../mail.ts';
import { outageDuringLoad } from '../outage.ts';
import { startDrillStack } from '../rig.ts';

const MESSAGES = 200;
const OUTAGE_MS = 30_000;

export const rpcDown: Drill = {
  name: 'rpc-down',
  summary: `stop the chain RPC node for ${OUTAGE_MS / 1000} s while ${MESSAGES} messages flow`,
  budgetMs: 12 * 60_000,
  async run(log) {
    const stack = await startDrillStack({ label: 'rpc', wallets: 5 });
    try {
      const { load, accounting: a } = await outageDuringLoad(stack, log, {
        messages: MESSAGES,
        outageMs: OUTAGE_MS,
        tag: 'rpc',
        what: 'chain RPC node',
        stop: () => stack.devnet.stop('SIGTERM'),
        start: () => stack.devnet.start(),
      });
      log(
        `sent: ${load.acked.length} acknowledged, ${load.unacked} given up (${formatReplies(load.replies)})`,
      );
      const deferred = [...load.replies.entries()]
        .filter(([c]) => c.startsWith('4'))
        .reduce((s, [, v]) => s + v, 0);
      return {
        pass: accountingOk(a) && load.unacked === 0,
        detail: `MX during the outage: ${deferred} attempts deferred with 4xx (${formatReplies(load.replies)}); ${describeAccounting(a)}`,
      };
    } finally {
      await stack.close();
    }
  },
};
