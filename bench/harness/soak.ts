// Memory soak: `sealpost serve` as an operator runs it (a child process with
// all its serving processes and their pipeline workers), next to `sealpost
// devnet` and `sealpost pind`, under a steady load of 10 KB messages to many
// wallets for `minutes`. Every 10 s the resident memory of serve's whole
// process tree (the supervisor and every serving process) is summed; the
// result is the start, the highest, the end and the least-squares slope.
import { setTimeout as sleep } from 'node:timers/promises';
import { formatReplies, sendLoad } from '../drill/mail.ts';
import { startDrillStack } from '../drill/rig.ts';
import { treeRss } from './proc-tree.ts';

export interface SoakResult {
  minutes: number;
  offeredPerSecond: number;
  acked: number;
  /** Given up at the deadline (never acknowledged). */
  unacked: number;
  /** SMTP replies seen by the load ('250', '451 4.3.0', 'conn' for a failed connection). */
  replies: string;
  /** The last lines serve wrote to standard error (a process that died says so there). */
  serveLog: string;
  /** Serving processes counted (the supervisor's children). */
  processes: number;
  samples: { atSecs: number; rssMb: number }[];
  startMb: number;
  maxMb: number;
  endMb: number;
  /** Least-squares slope of the samples, MB per minute. */
  slopeMbPerMin: number;
}

function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

export async function measureSoak(opts: {
  minutes: number;
  wallets: number;
  /** Offered messages per second. */
  rate: number;
  log: (line: string) => void;
}): Promise<SoakResult> {
  const stack = await startDrillStack({
    label: 'soak',
    wallets: opts.wallets,
    workers: 0,
    workersInServe: true,
  });
  try {
    const serve = stack.serve;
    const to = stack.addresses();
    const durationMs = opts.minutes * 60_000;
    const connections = 10;
    const count = Math.round(opts.rate * (durationMs / 1000));
    opts.log(
      `soak: ${opts.minutes} min at ${opts.rate} msg/s offered (${count} msgs to ${to.length} wallets)`,
    );
    const t0 = Date.now();
    const samples: { atSecs: number; rssMb: number }[] = [];
    let processes = 0;
    const sample = () => {
      const r = treeRss(serve.pid as number);
      processes = r.processes - 1;
      samples.push({ atSecs: Math.round((Date.now() - t0) / 1000), rssMb: r.bytes / 2 ** 20 });
    };
    sample();
    let sending = true;
    const sampler = (async () => {
      while (sending) {
        await sleep(10_000);
        if (sending) sample();
      }
    })();
    const load = await sendLoad({
      mxPort: stack.mxPort,
      to,
      count,
      connections,
      deadlineMs: durationMs + 60_000,
      tag: 'soak',
      bodyBytes: 10 * 1024,
      // Each connection offers rate / connections messages per second.
      paceMs: Math.max(0, (1000 * connections) / opts.rate),
    });
    // The load paces itself to the duration; keep sampling to its end if it finished early.
    while (Date.now() - t0 < durationMs) await sleep(1000);
    sending = false;
    await sampler;
    sample();
    const mb = samples.map((s) => s.rssMb);
    return {
      minutes: opts.minutes,
      offeredPerSecond: opts.rate,
      acked: load.acked.length,
      unacked: load.unacked,
      replies: formatReplies(load.replies),
      serveLog: serve.stderr(),
      processes,
      samples,
      startMb: mb[0] ?? 0,
      maxMb: Math.max(...mb),
      endMb: mb[mb.length - 1] ?? 0,
      slopeMbPerMin: slope(samples.map((s) => ({ x: s.atSecs / 60, y: s.rssMb }))),
    };
  } finally {
    await stack.close();
  }
}
