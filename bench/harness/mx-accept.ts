// The MX-accept rows: one smtp-source load against Sealpost's MX, Postfix
// queueing on hold and Haraka with a disk queue, one after another in this
// run. A load either reuses each session's connection for its messages (-d)
// or opens a connection per message.
// Sealpost runs the way an operator runs it: `sealpost serve --no-workers
// --workers N` (N = the machine's cores) as a child process, a supervisor
// and N serving processes sharing the MX port (node:cluster hands out the
// connections round robin), with `sealpost devnet` and `sealpost pind` as
// processes too (bench/drill/rig.ts). The 250 comes after the spool fsync and
// the delivery jobs in Redis. It runs twice, with `[blobs] backend = "fs"`
// (the spool on the local disk) and `"postgres"` (the spool in PostgreSQL, one
// commit per group, for hosts that share no disk), and a third time with
// `[spam]` scoring every message in a private rspamd before the 250: all in
// Sealpost's cell.
// The CPU time each serve process used during the
// measured load is read from /proc: the CPU per accepted message, and the
// share of each serving process (both must have taken connections).
// The last column is the ceiling of the library itself under the same load:
// smtp-server with the MX's listener options in as many processes, reading
// each message and answering 250 with nothing durable (./bare-smtp.ts).
// Its note also gives the durable floor: the same library with Sealpost's
// own acceptance step behind each 250 (the spool group commit and the BullMQ
// job in Redis, delivery/intake/accept.ts) and nothing else of the MX, so the gap
// from the library to Sealpost splits into the durable step and the MX's
// own checks.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeRspamdDir, startRspamd } from '../../src/run/dev/rspamd.ts';
import { startDrillStack } from '../drill/rig.ts';
import { startBareSmtp } from './bare-smtp.ts';
import { startHarakaPeer } from './haraka-peer.ts';
import { freePort } from './net.ts';
import { startPostfixPeer } from './postfix-peer.ts';
import { processCpuMs, treePids } from './proc-tree.ts';
import { deliverJobCount } from './sealpost-mx.ts';
import { type SourceResult, smtpSource } from './smtp-source.ts';
import { dropRedisPrefix, randomPrefix } from './stack.ts';
import type { Cell, Row } from './table.ts';

export interface MxLoad {
  sessions: number;
  messages: number;
  bytes: number;
  /** Many messages per connection (smtp-source -d), or one connection per message. */
  reuse: boolean;
}

export interface MxAcceptResult {
  row: Row;
  /** Raw figures per system, for the JSON. */
  results: Record<string, unknown>;
  /** Whole error texts of the systems that failed, by part. */
  errors: Record<string, string>;
}

interface Target {
  port: number;
  rcpt: string;
  /** Messages the system holds after the run, and what they are. */
  held(): Promise<number>;
  what: string;
  /** CPU milliseconds used so far, by process (pid → ms), where the harness can read them. */
  cpu?(): Map<number, number>;
  stop(): Promise<void>;
}

/** CPU used between two readings: the total, and each process's part (pids present in both). */
function cpuSpent(
  before: Map<number, number>,
  after: Map<number, number>,
): { total: number; parts: number[] } {
  const parts: number[] = [];
  for (const [pid, ms] of after) parts.push(ms - (before.get(pid) ?? 0));
  return { total: parts.reduce((a, b) => a + b, 0), parts };
}

/** Serving processes of Sealpost's MX: one per core, as `serve` defaults to. */
const PG_URL = process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SERVE_PROCESSES = availableParallelism();

const cut = (why: string): Cell => ({ missing: why.length > 90 ? `${why.slice(0, 87)}...` : why });

export async function measureMxAccept(
  load: MxLoad,
  peers: Map<string, string>,
  log: (line: string) => void,
): Promise<MxAcceptResult> {
  const shape = load.reuse
    ? `${load.sessions} sessions × 10 KB`
    : `${load.sessions} sessions, one msg per connection, 10 KB`;
  const part = load.reuse ? 'mx' : 'mx.perConnection';
  const row: Row = {
    name: `MX accept: smtp-source ${shape}, ${load.messages} msgs`,
    unit: 'msg/s',
    fromFloor: load.reuse,
    sealpost: cut('not run'),
  };
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  if (!peers.get('postfix')?.startsWith('ok')) {
    row.sealpost = cut(`no smtp-source: postfix ${peers.get('postfix')}`);
    return { row, results, errors };
  }
  // Every system is warmed the same way before the measured run: runs of
  // the same load (1,000 messages each) until it stops getting faster. A
  // JIT-compiled server (Sealpost, Haraka, the bare library) needs thousands
  // of messages to reach its steady state (`npm run bench:mx` shows Sealpost's
  // CPU per message falling by about half over the first 5,000); Postfix is
  // steady after the first run. A run no more than 5% faster than the best
  // before it counts as steady; two such runs in a row, or 15 runs, end it.
  const warm = { ...load, messages: Math.min(1000, load.messages) };
  const warmUp = async (target: Target): Promise<number> => {
    let best = 0;
    let flat = 0;
    let sent = 0;
    for (let run = 0; run < 15 && flat < 2; run++) {
      const r = await smtpSource({ port: target.port, rcpt: target.rcpt, ...warm });
      sent += warm.messages;
      flat = run > 0 && r.perSecond <= best * 1.05 ? flat + 1 : 0;
      best = Math.max(best, r.perSecond);
    }
    return sent;
  };
  const treeCpu = (root: number) => () => {
    const out = new Map<number, number>();
    for (const pid of treePids(root)) {
      const ms = processCpuMs(pid);
      if (ms !== undefined) out.set(pid, ms);
    }
    return out;
  };
  // One of Sealpost's rows: the drill stack's serve, its MX port, the jobs it queued, its process tree's CPU.
  const sealpostTarget = async (
    label: string,
    extra: { postgresUrl?: string; extraToml?: string } = {},
    after: () => Promise<void> = async () => {},
  ): Promise<Target> => {
    const stack = await startDrillStack({
      label,
      wallets: 1,
      workers: 0,
      serveArgs: ['--workers', String(SERVE_PROCESSES)],
      ...extra,
    });
    return {
      port: stack.mxPort,
      rcpt: stack.addresses()[0] as string,
      held: () => deliverJobCount(stack.redisUrl, stack.prefix),
      what: 'jobs in Redis',
      cpu: treeCpu(stack.serve.pid as number),
      stop: async () => {
        await stack.close();
        await after();
      },
    };
  };
  const systems: [
    key: 'sealpost' | 'sealpostPg' | 'sealpostSpam' | 'postfix' | 'haraka' | 'bare' | 'floor',
    label: string,
    start: () => Promise<Target>,
  ][] = [
    ['sealpost', `Sealpost (serve --no-workers --workers ${SERVE_PROCESSES})`, () => sealpostTarget('mx')],
    [
      'sealpostPg',
      `Sealpost with [blobs] backend = "postgres" (serve --no-workers --workers ${SERVE_PROCESSES})`,
      // The same stack with the spool in PostgreSQL (a schema of its own, dropped after).
      () => sealpostTarget('mx-pg', { postgresUrl: PG_URL, extraToml: '[blobs]\nbackend = "postgres"' }),
    ],
    [
      'sealpostSpam',
      `Sealpost with [spam] (a private rspamd scoring every message before the 250; serve --no-workers --workers ${SERVE_PROCESSES})`,
      async () => {
        const rspamdDir = mkdtempSync(join(tmpdir(), 'sealpost-bench-rspamd-'));
        const rspamd = await startRspamd({ dir: rspamdDir, timeoutMs: 180_000 });
        try {
          // rspamd's own processes are not counted: this is the MX's CPU.
          return await sealpostTarget(
            'mx-spam',
            {
              extraToml: `[spam]\nenabled = true\nrspamd_url = "${rspamd.url}"\npassword_file = "${rspamd.passwordFile}"\n`,
            },
            async () => {
              await rspamd.close();
              removeRspamdDir(rspamdDir);
            },
          );
        } catch (err) {
          await rspamd.close();
          removeRspamdDir(rspamdDir);
          throw err;
        }
      },
    ],
    [
      'postfix',
      'Postfix (hold queue)',
      async () => {
        const pf = await startPostfixPeer({ port: await freePort(), domain: 'bench.test' });
        const held = async () => pf.held();
        return { port: pf.port, rcpt: 'rcpt@bench.test', held, what: 'on hold', stop: () => pf.stop() };
      },
    ],
    [
      'haraka',
      'Haraka (disk queue plugin)',
      async () => {
        const hk = await startHarakaPeer({ port: await freePort(), domain: 'bench.test' });
        const held = async () => hk.queued();
        return { port: hk.port, rcpt: 'rcpt@bench.test', held, what: 'files fsynced', stop: () => hk.stop() };
      },
    ],
    [
      'bare',
      `bare smtp-server (${SERVE_PROCESSES} processes, nothing durable)`,
      async () => {
        const bare = await startBareSmtp(await freePort(), SERVE_PROCESSES);
        return {
          port: bare.port,
          rcpt: 'rcpt@bench.test',
          held: () => bare.accepted(),
          what: 'read and dropped',
          cpu: treeCpu(bare.pid),
          stop: () => bare.stop(),
        };
      },
    ],
    [
      'floor',
      `durable floor: smtp-server (${SERVE_PROCESSES} processes) + Sealpost's spool group commit and BullMQ job`,
      async () => {
        const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
        const durable = {
          redisUrl,
          prefix: randomPrefix('bench-floor'),
          dir: mkdtempSync(join(tmpdir(), 'sealpost-bench-floor-')),
        };
        const floor = await startBareSmtp(await freePort(), SERVE_PROCESSES, durable);
        return {
          port: floor.port,
          rcpt: 'rcpt@bench.test',
          held: () => deliverJobCount(redisUrl, durable.prefix),
          what: 'jobs in Redis',
          cpu: treeCpu(floor.pid),
          stop: async () => {
            await floor.stop();
            await dropRedisPrefix(redisUrl, durable.prefix);
            rmSync(durable.dir, { recursive: true, force: true });
          },
        };
      },
    ],
  ];
  // The floor has no column of its own: it is shown in the library's cell, after the library bare;
  // Sealpost on PostgreSQL blobs likewise in Sealpost's cell, after the filesystem run.
  const put = (key: (typeof systems)[number][0], cell: Cell) => {
    if (key === 'sealpostPg' || key === 'sealpostSpam') {
      const what = key === 'sealpostPg' ? '[blobs] backend = "postgres"' : 'with rspamd ([spam] enabled)';
      const pg =
        'value' in cell
          ? `${what}: ${cell.value.toFixed(0)} msg/s (${cell.note})`
          : `${what}: ${'missing' in cell ? `failed: ${cell.missing}` : cell.text}`;
      row.sealpost =
        row.sealpost && 'value' in row.sealpost
          ? {
              value: row.sealpost.value,
              note: `${key === 'sealpostPg' ? '[blobs] backend = "fs": ' : ''}${row.sealpost.note}; ${pg}`,
            }
          : { text: pg };
      return;
    }
    if (key !== 'floor') {
      row[key] = cell;
      return;
    }
    const floor =
      'value' in cell
        ? `durable floor ${cell.value.toFixed(0)} msg/s (${cell.note})`
        : `durable floor ${'missing' in cell ? `failed: ${cell.missing}` : cell.text}`;
    row.bare =
      row.bare && 'value' in row.bare
        ? { value: row.bare.value, note: `${row.bare.note}; ${floor}` }
        : { text: floor };
  };
  for (const [key, label, start] of systems) {
    if (key === 'haraka' && !peers.get('haraka')?.startsWith('ok')) {
      row.haraka = cut(peers.get('haraka') ?? 'not installed');
      continue;
    }
    try {
      log(`MX accept (${shape}): ${label}`);
      const target = await start();
      try {
        const warmed = await warmUp(target);
        const cpuBefore = target.cpu?.();
        const r: SourceResult = await smtpSource({ port: target.port, rcpt: target.rcpt, ...load });
        const cpuAfter = target.cpu?.();
        const have = await target.held();
        const sent = warmed + load.messages;
        // What the system holds after the run: every message sent (warm-up included), or how many short.
        let note = `warmed with ${warmed}; `;
        note += have === sent ? `all ${sent} ${target.what}` : `ONLY ${have} of ${sent} ${target.what}`;
        let cpu: { msPerMessage: number; processMs: number[] } | undefined;
        if (cpuBefore && cpuAfter) {
          const spent = cpuSpent(cpuBefore, cpuAfter);
          cpu = { msPerMessage: spent.total / load.messages, processMs: spent.parts };
          // The supervisor first, then the serving processes: each must have had its share of the load.
          note += `; ${cpu.msPerMessage.toFixed(2)} CPU ms/msg (${spent.parts.map((ms) => ms.toFixed(0)).join(' + ')} ms by process)`;
        }
        results[key] = { ...r, warmed, held: have, ...(cpu ? { cpu } : {}) };
        put(key, { value: r.perSecond, note });
      } finally {
        await target.stop();
      }
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      errors[`${part}.${key}`] = text;
      put(key, cut(text.split('\n')[0] ?? ''));
    }
  }
  return { row, results, errors };
}
