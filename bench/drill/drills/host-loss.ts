// Two hosts' worth of processes on PostgreSQL blobs (`[blobs] backend =
// "postgres"`), each `sealpost serve` (MX and workers) with its own data
// directory, one PostgreSQL schema and one Redis prefix between them. Mail
// goes to both MXs; mid-load host A's whole process tree is SIGKILLed and
// its data directory deleted (the host and its disk are gone). Host B's
// workers (and its reconcile step) deliver everything either MX
// acknowledged: acknowledged / delivered / lost / doubled, lost and doubled 0.
import { rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { loadConfig } from '../../../src/core/config/index.ts';
import { openStore } from '../../../src/core/store/index.ts';
import { freePort } from '../../harness/net.ts';
import { treePids } from '../../harness/proc-tree.ts';
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
import { Proc } from '../procs.ts';
import { startDrillStack } from '../rig.ts';

const MESSAGES = Number(process.env.DRILL_HOST_LOSS_MESSAGES ?? 400);
const PG_URL = process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const hostLoss: Drill = {
  name: 'host-loss',
  summary: `two hosts on PostgreSQL blobs; SIGKILL one and delete its data directory during ${MESSAGES} deliveries`,
  budgetMs: 15 * 60_000,
  async run(log) {
    const stack = await startDrillStack({
      label: 'hostloss',
      wallets: 10,
      workersInServe: true,
      workers: 0,
      serveArgs: ['--workers', '1'],
      postgresUrl: PG_URL,
      extraToml: '[blobs]\nbackend = "postgres"',
    });
    let hostB: Proc | undefined;
    try {
      // Host B: the same config but its own data directory, MX and API ports.
      const text = await readFile(stack.configFile, 'utf8');
      const dirA = loadConfig(stack.configFile).store.data_dir;
      const dirB = join(stack.dir, 'data-b');
      const [mxB, apiB] = [await freePort(), await freePort()];
      const configB = join(stack.dir, 'sealpost-b.toml');
      writeFileSync(
        configB,
        text
          .replace(`data_dir = "${dirA}"`, `data_dir = "${dirB}"`)
          .replace(`port = ${stack.mxPort}\n`, `port = ${mxB}\n`)
          .replace(`port = ${new URL(stack.apiUrl).port}\n`, `port = ${apiB}\n`),
      );
      hostB = Proc.sealpost('serve-b', ['serve', '--config', configB, '--workers', '1'], /pipeline workers:/);
      await hostB.start();

      const pidA = stack.serve.pid;
      let killedAt = -1;
      const kill = () => {
        if (killedAt >= 0 || pidA === undefined) return;
        const pids = treePids(pidA);
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        // The host's disk is gone with it.
        rmSync(dirA, { recursive: true, force: true });
        killedAt = Date.now();
        log(`host A: SIGKILLed ${pids.length} processes, ${dirA} deleted`);
      };
      const half = Math.floor(MESSAGES / 2);
      const to = stack.addresses();
      const [loadA, loadB] = await Promise.all([
        sendLoad({
          mxPort: stack.mxPort,
          to,
          count: half,
          connections: 5,
          deadlineMs: 60_000,
          tag: 'hostloss-a',
          onAck: (n) => {
            if (n >= half / 2) kill();
          },
        }),
        sendLoad({
          mxPort: mxB,
          to,
          count: MESSAGES - half,
          connections: 5,
          deadlineMs: 5 * 60_000,
          tag: 'hostloss-b',
        }),
      ]);
      kill();
      const acked = [...loadA.acked, ...loadB.acked];
      log(
        `acknowledged: host A ${loadA.acked.length} (${formatReplies(loadA.replies)}), host B ${loadB.acked.length} (${formatReplies(loadB.replies)})`,
      );
      const count = await waitForInboxes(
        stack.connection,
        stack.programId,
        stack.wallets,
        acked.length,
        8 * 60_000,
      );
      await sleep(5000);
      log(`drained: ${count} Email accounts`);
      const inbox = await readInboxes(stack.connection, stack.programId, stack.gatewayUrl, stack.wallets);
      const a = account(acked, inbox);
      // Every acknowledged message's spool row removed by host B's jobs. A row
      // host A wrote in the group commit it was killed in (no 250, no jobs) is
      // the reconcile step's after its grace period: counted apart.
      const config = loadConfig(configB);
      const store = await openStore({ url: config.store.url, dataDir: dirB, migrate: false });
      const ackedIds = new Set(acked.map((s) => s.msgid));
      let ackedLeft = -1;
      let unackedLeft = 0;
      try {
        for (let i = 0; i < 60; i++) {
          const r = await sql<{ id: string }>`select id from blob_spool`.execute(store.db);
          ackedLeft = r.rows.filter((row) => ackedIds.has(row.id)).length;
          unackedLeft = r.rows.length - ackedLeft;
          if (ackedLeft === 0) break;
          await sleep(1000);
        }
      } finally {
        await store.close();
      }
      const pass = accountingOk(a) && killedAt >= 0 && loadA.acked.length > 0 && ackedLeft === 0;
      return {
        pass,
        detail: `${a.acked} acknowledged / ${a.delivered} delivered / ${a.lost.length} lost / ${a.duplicates.length} doubled (${describeAccounting(a)}); ${ackedLeft} spool rows of acknowledged mail left, ${unackedLeft} of unacknowledged (reconcile's after its grace period)`,
      };
    } finally {
      await hostB?.stop('SIGTERM').catch(() => undefined);
      await stack.close();
    }
  },
};
