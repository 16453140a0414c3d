// The operator pin (`sealpost pind`, its own process) is stopped for 30 s
// while mail flows, then started again on the same store. The MX keeps
// accepting (pinning is not on the accept path); pin stages fail and retry;
// afterwards the pipeline drains and nothing is lost or doubled.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Drill } from '../drill.ts';
import {
  account,
  accountingOk,
  describeAccounting,
  formatReplies,
  readInboxes,
  sendLoad,
  waitForInboxes,
} from '../mail.ts';
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
      // The fault starts once a quarter of the run is acknowledged.
      let quarter: () => void = () => {};
      const started = new Promise<void>((r) => {
        quarter = r;
      });
      const sending = sendLoad({
        mxPort: stack.mxPort,
        to: stack.addresses(),
        count: MESSAGES,
        connections: 4,
        paceMs: 250,
        onAck: (n) => n >= MESSAGES / 4 && quarter(),
        deadlineMs: 5 * 60_000,
        tag: 'pin',
      });
      await Promise.race([started, sending]);
      await stack.pind.stop('SIGTERM');
      log('operator pin (pind) stopped');
      await sleep(OUTAGE_MS);
      await stack.pind.start();
      log('operator pin started again');
      const load = await sending;
      log(`sent: ${load.acked.length} acknowledged (${formatReplies(load.replies)})`);
      const n = await waitForInboxes(
        stack.connection,
        stack.programId,
        stack.wallets,
        load.acked.length,
        6 * 60_000,
      );
      log(`drained: ${n} Email accounts`);
      await sleep(3000);
      const a = account(
        load.acked,
        await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets),
      );
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
