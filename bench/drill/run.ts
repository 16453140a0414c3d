// `npm run drill`: the fault drills, one after another, each over real
// processes on loopback with a bounded run time and one PASS/FAIL line.
//
//   npm run drill -- [--only worker-kill,redis-restart,sentinel-failover,rpc-down,pin-down,provider-hang,disk-full,smtp-fuzz,
//                             rent-recovery,chain-lag,chain-drops,chain-congestion,chain-429,chain-rollback]
//
// The chain-* drills run the devnet in this process in fidelity mode
// (docs/devnet.md "Fidelity mode": lagging status reads, dropped sends, a
// minimum priority fee, HTTP 429s, rolled-back slots) and report, besides
// lost and doubled mail, RPC calls per message, the peak calls/s at the node
// and the lamports the authority paid per message (rent and fees).
//
// Exit code 1 when any drill failed. What each proves: docs/operations.md.
import { parseArgs } from 'node:util';
import type { Drill, DrillResult } from './drill.ts';
import { chain429 } from './drills/chain-429.ts';
import { chainCongestion } from './drills/chain-congestion.ts';
import { chainDrops } from './drills/chain-drops.ts';
import { chainLag } from './drills/chain-lag.ts';
import { chainRollback } from './drills/chain-rollback.ts';
import { diskFull } from './drills/disk-full.ts';
import { hostLoss } from './drills/host-loss.ts';
import { pinDown } from './drills/pin-down.ts';
import { providerHang } from './drills/provider-hang.ts';
import { redisEverysecCrash } from './drills/redis-everysec-crash.ts';
import { redisFlush } from './drills/redis-flush.ts';
import { redisRestart } from './drills/redis-restart.ts';
import { rentRecovery } from './drills/rent-recovery.ts';
import { rpcDown } from './drills/rpc-down.ts';
import { sentinelFailover } from './drills/sentinel-failover.ts';
import { smtpFuzz } from './drills/smtp-fuzz.ts';
import { workerKill } from './drills/worker-kill.ts';

const ALL: Drill[] = [
  workerKill,
  redisRestart,
  sentinelFailover,
  rpcDown,
  pinDown,
  providerHang,
  diskFull,
  smtpFuzz,
  rentRecovery,
  chainLag,
  chainDrops,
  chainCongestion,
  chain429,
  chainRollback,
  redisFlush,
  redisEverysecCrash,
  hostLoss,
];
const { values } = parseArgs({ options: { only: { type: 'string' } } });
const wanted = values.only ? new Set(values.only.split(',')) : null;
const unknown = [...(wanted ?? [])].filter((n) => !ALL.some((d) => d.name === n));
if (unknown.length) {
  process.stderr.write(`unknown drill ${unknown.join(', ')}; drills: ${ALL.map((d) => d.name).join(', ')}\n`);
  process.exit(2);
}
const drills = ALL.filter((d) => !wanted || wanted.has(d.name));

const results: { drill: Drill; result: DrillResult; seconds: number }[] = [];
for (const drill of drills) {
  process.stdout.write(
    `▶ ${drill.name}: ${drill.summary} (at most ${Math.round(drill.budgetMs / 60_000)} min)\n`,
  );
  const t0 = Date.now();
  const log = (line: string) => process.stdout.write(`    ${line}\n`);
  let timer: NodeJS.Timeout | undefined;
  const overBudget = new Promise<DrillResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ pass: false, detail: `did not finish within ${drill.budgetMs / 1000} s` }),
      drill.budgetMs,
    );
  });
  const result = await Promise.race([
    drill.run(log).catch((err: unknown) => ({
      pass: false,
      detail: `error: ${err instanceof Error ? err.message : String(err)}`,
    })),
    overBudget,
  ]);
  clearTimeout(timer);
  const seconds = (Date.now() - t0) / 1000;
  results.push({ drill, result, seconds });
  process.stdout.write(
    `${result.pass ? 'PASS' : 'FAIL'} ${drill.name} (${seconds.toFixed(0)} s): ${result.detail}\n\n`,
  );
}

const failed = results.filter((r) => !r.result.pass);
process.stdout.write('drill summary\n');
for (const r of results)
  process.stdout.write(
    `  ${r.result.pass ? 'PASS' : 'FAIL'}  ${r.drill.name.padEnd(16)} ${r.seconds.toFixed(0).padStart(4)} s\n`,
  );
process.stdout.write(`drills: ${results.length - failed.length} passed, ${failed.length} failed\n`);
process.exit(failed.length ? 1 : 0);
