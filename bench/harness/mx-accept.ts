// The MX-accept rows: one smtp-source load against Sealpost's MX (the
// `serve --no-workers` shape: 250 after the spool fsync and the jobs in
// Redis), Postfix queueing on hold and Haraka with a disk queue, one after
// another in this run. A load either reuses each session's connection for
// its messages (-d) or opens a connection per message.
import { startHarakaPeer } from './haraka-peer.ts';
import { freePort } from './net.ts';
import { startPostfixPeer } from './postfix-peer.ts';
import { startSealpostMx } from './sealpost-mx.ts';
import { type SourceResult, smtpSource } from './smtp-source.ts';
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
  stop(): Promise<void>;
}

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
  const warm = { ...load, messages: Math.min(200, load.messages) };
  const systems: [key: 'sealpost' | 'postfix' | 'haraka', label: string, start: () => Promise<Target>][] = [
    [
      'sealpost',
      'Sealpost (serve --no-workers shape)',
      async () => {
        const sp = await startSealpostMx();
        return {
          port: sp.port,
          rcpt: sp.rcpt,
          held: () => sp.queued(),
          what: 'jobs in Redis',
          stop: () => sp.stop(),
        };
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
  ];
  for (const [key, label, start] of systems) {
    if (key === 'haraka' && !peers.get('haraka')?.startsWith('ok')) {
      row.haraka = cut(peers.get('haraka') ?? 'not installed');
      continue;
    }
    try {
      log(`MX accept (${shape}): ${label}`);
      const target = await start();
      try {
        await smtpSource({ port: target.port, rcpt: target.rcpt, ...warm });
        const r: SourceResult = await smtpSource({ port: target.port, rcpt: target.rcpt, ...load });
        const have = await target.held();
        const sent = warm.messages + load.messages;
        results[key] = { ...r, held: have };
        // What the system holds after the run: every message sent (warm-up included), or how many short.
        row[key] = {
          value: r.perSecond,
          note: have === sent ? `all ${sent} ${target.what}` : `ONLY ${have} of ${sent} ${target.what}`,
        };
      } finally {
        await target.stop();
      }
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      errors[`${part}.${key}`] = text;
      row[key] = cut(text.split('\n')[0] ?? '');
    }
  }
  return { row, results, errors };
}
