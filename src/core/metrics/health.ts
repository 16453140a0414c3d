// Liveness and readiness for every listener: GET /health answers 200
// {"status":"ok"} whenever the process serves HTTP at all; GET /ready runs
// the process's dependency checks (Redis, store, chain RPC, operator pin, …)
// and answers 200 when every one is up, 503 naming the ones that are down.
//
// Checks run in parallel, each bounded by a timeout, and one run is shared:
// concurrent probes wait for the same run and a result is reused for
// CACHE_MS, so a flood of /ready requests costs the dependencies (a public
// chain RPC has its own rate limit) at most one round per CACHE_MS.

export type DependencyState = 'up' | 'down';

export interface DependencyReport {
  state: DependencyState;
  /** Milliseconds the check took. */
  latency_ms: number;
  /** Why it is down, one short line. */
  error?: string;
  /** What a check reports besides up/down (the spool reconcile: entries recovered, without jobs, corrupt). */
  detail?: Record<string, number | string>;
}

export interface ReadyReport {
  status: 'ok' | 'unavailable';
  dependencies: Record<string, DependencyReport>;
}

export interface DependencyCheck {
  /** `redis`, `store`, `chain_rpc`, `operator_pin`, … */
  name: string;
  /** Resolves when the dependency works (optionally with figures for `detail`); throws with the reason when not. */
  // biome-ignore lint/suspicious/noConfusingVoidType: most checks are `async run() {…}` (Promise<void>).
  run(signal: AbortSignal): Promise<void | Record<string, number | string>>;
}

export const HEALTH_PATH = '/health';
export const READY_PATH = '/ready';
export const HEALTH_BODY = { status: 'ok' } as const;
const CACHE_MS = 1000;
const DEFAULT_TIMEOUT_MS = 2500;

function shortError(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown; cause?: unknown };
  // AggregateError (fetch to localhost tries ::1 and 127.0.0.1) and fetch's `cause` hide the real reason.
  if (Array.isArray(e?.errors) && e.errors.length > 0) return shortError(e.errors[0]);
  if (e?.cause && typeof (e.cause as { message?: unknown }).message === 'string') return shortError(e.cause);
  const text = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  const line = text.split('\n')[0] ?? text;
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

export class Readiness {
  private running: Promise<ReadyReport> | null = null;
  private last: { at: number; report: ReadyReport } | null = null;

  constructor(
    private readonly checks: DependencyCheck[],
    private readonly opts: { timeoutMs?: number; now?: () => number } = {},
  ) {}

  /** The report, from the last run when it is fresh enough. */
  report(): Promise<ReadyReport> {
    const now = (this.opts.now ?? Date.now)();
    if (this.last && now - this.last.at < CACHE_MS) return Promise.resolve(this.last.report);
    this.running ??= this.runAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runAll(): Promise<ReadyReport> {
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const results = await Promise.all(this.checks.map((c) => runOne(c, timeoutMs)));
    const dependencies: Record<string, DependencyReport> = {};
    for (const [i, c] of this.checks.entries()) dependencies[c.name] = results[i] as DependencyReport;
    const report: ReadyReport = {
      status: results.every((r) => r.state === 'up') ? 'ok' : 'unavailable',
      dependencies,
    };
    this.last = { at: (this.opts.now ?? Date.now)(), report };
    return report;
  }
}

async function runOne(check: DependencyCheck, timeoutMs: number): Promise<DependencyReport> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const detail = await Promise.race([check.run(controller.signal), timeout]);
    return {
      state: 'up',
      latency_ms: Math.round(performance.now() - started),
      ...(detail && typeof detail === 'object' ? { detail } : {}),
    };
  } catch (err) {
    return {
      state: 'down',
      latency_ms: Math.round(performance.now() - started),
      error: shortError(err),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** The HTTP status of a readiness report. */
export function readyStatus(report: ReadyReport): 200 | 503 {
  return report.status === 'ok' ? 200 : 503;
}
