// The operator pin (`sealpost pind`, its own process) is stopped for 30 s
// while mail flows, then started again on the same store. The MX keeps
// accepting (pinning is not on the accept path); pin stages fail and retry;
// afterwards the pipeline drains and nothing is lost or doubled.
import type { Drill } from '../drill.ts';
import { accountingOk, describeAccounting, formatReplies } from '../mail.ts';
import { outageDuringLoad } from '../outage.ts';
import { startDrillStack } from '../rig.ts';

const MESSAGES = 200;
const OUTAGE_MS = 30_000;

export const pinDown: Drill = {
  name: 'pin-down',
  summary: `stop the operator pin (pind) for ${OUTAGE_MS / 1000} s while ${MESSAGES} messages flow`,
  budgetMs: 12 * 60_000,
  async run(log) {
    const stack = await startDrillStack({ label: 'pin', wallets: 5 });
    try {
      const { load, accounting: a } = await outageDuringLoad(stack, log, {
        messages: MESSAGES,
        outageMs: OUTAGE_MS,
        tag: 'pin',
        what: 'operator pin (pind)',
        stop: () => stack.pind.stop('SIGTERM'),
        start: () => stack.pind.start(),
      });
      log(`sent: ${load.acked.length} acknowledged (${formatReplies(load.replies)})`);
      const deferred = [...load.replies.entries()]
        .filter(([c]) => c !== '250')
        .reduce((s, [, v]) => s + v, 0);
      return {
        pass: accountingOk(a) && load.unacked === 0 && deferred === 0,
        detail: `MX kept accepting: ${formatReplies(load.replies)}; ${describeAccounting(a)}`,
      };
    } finally {
      await stack.close();
    }
  },
};
