// The chain's RPC node (`sealpost devnet`, its own process) is stopped for
// 30 s while mail flows, then started again on the same ledger. Decision
// (docs/operations.md): the MX resolves recipients on chain before RCPT, so
// during the outage it answers 4xx; mail acknowledged before waits in the
// queue and the pipeline drains once the node is back. Nothing is lost.
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

export const rpcDown: Drill = {
  name: 'rpc-down',
  summary: `stop the chain RPC node for ${OUTAGE_MS / 1000} s while ${MESSAGES} messages flow`,
  budgetMs: 12 * 60_000,
  async run(log) {
    const stack = await startDrillStack({ label: 'rpc', wallets: 5 });
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
        tag: 'rpc',
      });
      await Promise.race([started, sending]);
      await stack.devnet.stop('SIGTERM');
      log('chain RPC node stopped');
      await sleep(OUTAGE_MS);
      await stack.devnet.start();
      log('chain RPC node started again');
      const load = await sending;
      log(
        `sent: ${load.acked.length} acknowledged, ${load.unacked} given up (${formatReplies(load.replies)})`,
      );
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
