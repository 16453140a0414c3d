// 1,000 deliveries while the worker process is SIGKILLed at random moments
// (and started again). Afterwards: every acknowledged message has exactly
// one Email account, opens to what was sent at the right wallet, and has
// exactly one stored copy.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../../src/core/config/index.ts';
import { MessagesRepo, openStore } from '../../../src/core/store/index.ts';
import type { Drill } from '../drill.ts';
import {
  account,
  accountingOk,
  countInboxes,
  describeAccounting,
  formatReplies,
  readInboxes,
  sendLoad,
  waitForInboxes,
} from '../mail.ts';
import { startDrillStack } from '../rig.ts';

const MESSAGES = Number(process.env.DRILL_KILL_MESSAGES ?? 1000);

export const workerKill: Drill = {
  name: 'worker-kill',
  summary: `SIGKILL the worker at random moments during ${MESSAGES} deliveries`,
  budgetMs: 15 * 60_000,
  async run(log) {
    const stack = await startDrillStack({ label: 'kill', wallets: 10 });
    try {
      const worker = stack.workers[0];
      if (!worker) throw new Error('no worker');
      let kills = 0;
      let stopKilling = false;
      const killer = (async () => {
        while (!stopKilling) {
          await sleep(1500 + Math.random() * 4000);
          if (stopKilling) break;
          await worker.stop('SIGKILL');
          kills++;
          await worker.start();
        }
      })();
      const load = await sendLoad({
        mxPort: stack.mxPort,
        to: stack.addresses(),
        count: MESSAGES,
        connections: 10,
        deadlineMs: 5 * 60_000,
        tag: 'kill',
      });
      log(`sent: ${load.acked.length} acknowledged (${formatReplies(load.replies)}); kills so far ${kills}`);
      // Keep killing while the backlog drains, at least 6 kills in all.
      while (
        kills < 6 ||
        (await countInboxes(stack.connection, stack.programId, stack.wallets)) < load.acked.length * 0.8
      ) {
        if (kills >= 40) break;
        await sleep(1000);
      }
      stopKilling = true;
      await killer;
      const count = await waitForInboxes(
        stack.connection,
        stack.programId,
        stack.wallets,
        load.acked.length,
        8 * 60_000,
      );
      // A late duplicate would land after the count is reached: give stragglers a moment.
      await sleep(5000);
      log(`drained: ${count} Email accounts after ${kills} kills`);
      const inbox = await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets);
      const a = account(load.acked, inbox);
      const config = loadConfig(stack.configFile);
      const store = await openStore({ url: config.store.url, dataDir: config.store.data_dir });
      let copies = 0;
      try {
        const repo = new MessagesRepo(store.db);
        for (const w of stack.wallets)
          copies += (await repo.listForWallet(w.address, { limit: 5000 })).length;
      } finally {
        await store.close();
      }
      // Every copy is stored: no spool file may stay (the jobs remove their own, or their parent does).
      const spoolDir = join(config.store.data_dir, 'blobs', 'spool');
      const spoolLeft = async () =>
        (await readdir(spoolDir).catch(() => [] as string[])).filter((n) => !n.startsWith('.')).length;
      for (let i = 0; i < 60 && (await spoolLeft()) > 0; i++) await sleep(1000);
      const leftover = await spoolLeft();
      const pass =
        accountingOk(a) && load.unacked === 0 && copies === load.acked.length && kills >= 6 && leftover === 0;
      return {
        pass,
        detail: `${kills} SIGKILLs; ${describeAccounting(a)}; ${copies} stored copies; ${leftover} spool files left; ${load.unacked} never acknowledged`,
      };
    } finally {
      await stack.close();
    }
  },
};
