// `sealpost serve --workers N`: N serving processes (node:cluster) forked
// from a small supervising process. The serving processes share every
// listening port (Node's cluster hands each accepted connection to one of
// them, round robin) and each runs what `serve` runs in one process: MX,
// submission, IMAP/POP3, the account API, and unless --no-workers its own
// pipeline and spooler workers. The supervisor (the primary) serves nothing:
//   - it forks the processes and reports the listeners once all are ready;
//   - a process that dies is forked again after a back-off (1 s doubling to
//     30 s; a process that ran 60 s starts the count again), logged;
//   - a slot whose process dies before it was ever ready `maxStartFailures`
//     times in a row ends the supervisor with exit code 1, after stopping the
//     others (a bad config or a taken port would otherwise loop forever);
//   - SIGTERM/SIGINT go to every process as SIGTERM: listeners stop
//     accepting and drain, workers finish their running jobs; a process
//     still running after `stopTimeoutMs` is killed;
//   - SIGHUP (a reload, src/run/serve/reload.ts) is passed on to every ready
//     process over the IPC channel; their reports come back and are merged
//     into one (onReload), so `sealpost reload` learns every process's outcome;
//   - GET /metrics on any process sums all of them: the process that got the
//     scrape asks the primary, which collects every process's figures and
//     aggregates them (prom-client's cluster aggregation rules).
// Parts a deployment needs once (maintenance schedules, the domain check at
// start) run in the process of slot 0 only (serveWorkerIndex() === 0).
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from '../../core/log.ts';
import type { MetricsSource } from '../../core/metrics/route.ts';
import type { SealpostMetrics } from '../../core/metrics/sealpost-metrics.ts';
import { childEnv } from './child-env.ts';
import { mergeReloadReports, type ProcessReload, type ReloadReport } from './reload.ts';

/** Environment variable telling a forked serving process its slot (0..N-1). */
export const SERVE_SLOT_ENV = 'SEALPOST_SERVE_SLOT';

const READY = 'sealpost:ready';
const METRICS_REQ = 'sealpost:metrics-req';
const METRICS_COLLECT = 'sealpost:metrics-collect';
const METRICS_PART = 'sealpost:metrics-part';
const METRICS_RES = 'sealpost:metrics-res';
const RELOAD = 'sealpost:reload';
const RELOADED = 'sealpost:reloaded';

type ToPrimary =
  | { t: typeof READY; text: string }
  | { t: typeof METRICS_REQ; id: number }
  | { t: typeof METRICS_PART; rid: number; metrics?: unknown[]; error?: string }
  | { t: typeof RELOADED; rid: number; report: ReloadReport };
type ToWorker =
  | { t: typeof METRICS_COLLECT; rid: number }
  | { t: typeof METRICS_RES; id: number; text?: string; error?: string }
  | { t: typeof RELOAD; rid: number };

/** `--workers` / `[serve] workers` to a process count: 0 means one per core. */
export function serveProcessCount(configured: number): number {
  return configured === 0 ? availableParallelism() : configured;
}

/** This process's slot when it is one of serve's forked processes, else undefined. */
export function serveSlot(): number | undefined {
  if (!cluster.isWorker) return undefined;
  const slot = Number(process.env[SERVE_SLOT_ENV]);
  return Number.isInteger(slot) && slot >= 0 ? slot : undefined;
}

function send(message: ToPrimary): void {
  process.send?.(message);
}

/** In a serving process: tells the primary it is ready, with the lines serve prints. */
export function reportReady(text: string): void {
  send({ t: READY, text });
}

/** In a serving process: runs `reload` for each reload the primary passes on and answers with its report. */
export function answerReloads(reload: () => ReloadReport): void {
  process.on('message', (raw: unknown) => {
    const m = raw as ToWorker;
    if (m?.t === RELOAD) send({ t: RELOADED, rid: m.rid, report: reload() });
  });
}

/**
 * In a serving process: GET /metrics answers with the whole deployment's
 * figures (asked of the primary), and this process answers the primary's
 * collection requests with its own.
 */
export function clusterMetricsSource(own: SealpostMetrics, timeoutMs = 5000): MetricsSource {
  let nextId = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  process.on('message', (raw: unknown) => {
    const m = raw as ToWorker;
    if (m?.t === METRICS_COLLECT) {
      own.snapshot().then(
        (metrics) => send({ t: METRICS_PART, rid: m.rid, metrics }),
        (err: Error) => send({ t: METRICS_PART, rid: m.rid, error: err.message }),
      );
    } else if (m?.t === METRICS_RES) {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (!w) return;
      if (m.text !== undefined) w.resolve(m.text);
      else w.reject(new Error(m.error ?? 'no metrics from the serve supervisor'));
    }
  });
  return {
    render() {
      const id = nextId++;
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the serve supervisor did not answer with metrics within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(id, {
          resolve: (text) => {
            clearTimeout(timer);
            resolve(text);
          },
          reject: (err) => {
            clearTimeout(timer);
            reject(err);
          },
        });
        send({ t: METRICS_REQ, id });
      });
    },
  };
}

export interface ServePrimaryOptions {
  processes: number;
  logger: Logger;
  /** Receives the listener lines once every process is ready (serve writes them to stdout). */
  onReady: (text: string) => void;
  /** How long a graceful stop may take before the remaining processes are killed. */
  stopTimeoutMs: number;
  /** Deaths before first readiness, in a row, that end the supervisor (default 5). */
  maxStartFailures?: number;
  /** Restart back-off: first delay and cap (default 1 s, 30 s). */
  backoffMs?: { first: number; max: number };
  /** A process that ran this long starts its back-off count again (default 60 s). */
  stableMs?: number;
  /** At SIGHUP, before the processes are asked (the supervisor's own log level). */
  onSighup?: () => void;
  /** The merged outcome of a SIGHUP's reload across the ready processes. */
  onReload?: (report: ReloadReport, processes: number) => void;
  /** How long a reload waits for the processes' answers (default 30 s). */
  reloadTimeoutMs?: number;
}

interface Slot {
  index: number;
  worker?: Worker;
  ready: boolean;
  readyAt: number;
  /** Deaths before readiness, in a row. */
  startFailures: number;
  /** Deaths after readiness within stableMs of each other. */
  crashes: number;
  restartTimer?: ReturnType<typeof setTimeout>;
}

/**
 * Runs the supervisor until SIGTERM/SIGINT (resolves 0 once every process
 * has stopped) or until a slot keeps failing at start (resolves 1).
 */
export function runServePrimary(opts: ServePrimaryOptions): Promise<number> {
  const log = opts.logger;
  const maxStartFailures = opts.maxStartFailures ?? 5;
  const backoff = opts.backoffMs ?? { first: 1000, max: 30_000 };
  const stableMs = opts.stableMs ?? 60_000;
  const slots: Slot[] = Array.from({ length: opts.processes }, (_, index) => ({
    index,
    ready: false,
    readyAt: 0,
    startFailures: 0,
    crashes: 0,
  }));
  let announced = false;
  let stopping = false;
  let exitCode = 0;
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });

  // GET /metrics: collect every process's snapshot, aggregate, answer the asking process.
  let nextCollect = 0;
  const collecting = new Map<number, { parts: unknown[][]; pending: Set<number>; finish: () => void }>();
  const collect = (asker: Worker, id: number) => {
    const rid = nextCollect++;
    const targets = slots.flatMap((s) => (s.worker?.isConnected() && s.ready ? [s.worker] : []));
    const entry = { parts: [] as unknown[][], pending: new Set(targets.map((w) => w.id)), finish: () => {} };
    const timer = setTimeout(() => entry.finish(), 3000);
    entry.finish = () => {
      clearTimeout(timer);
      if (!collecting.delete(rid)) return;
      const reply = (m: ToWorker) => {
        if (asker.isConnected()) asker.send(m);
      };
      try {
        const registry = AggregatorRegistry.aggregate(entry.parts);
        registry.metrics().then(
          (text) => reply({ t: METRICS_RES, id, text }),
          (err: Error) => reply({ t: METRICS_RES, id, error: err.message }),
        );
      } catch (err) {
        reply({ t: METRICS_RES, id, error: (err as Error).message });
      }
    };
    collecting.set(rid, entry);
    if (targets.length === 0) entry.finish();
    for (const w of targets) w.send({ t: METRICS_COLLECT, rid } satisfies ToWorker);
  };
  // SIGHUP: every ready process reloads; their answers are merged into one report.
  let nextReload = 0;
  const reloading = new Map<
    number,
    { parts: ProcessReload[]; pending: Map<number, Slot>; finish: () => void }
  >();
  const reload = () => {
    if (stopping) return;
    opts.onSighup?.();
    const rid = nextReload++;
    const targets = slots.filter((s) => s.worker?.isConnected() && s.ready);
    const entry = {
      parts: [] as ProcessReload[],
      pending: new Map(targets.map((s) => [s.worker?.id as number, s])),
      finish: () => {},
    };
    const timeoutMs = opts.reloadTimeoutMs ?? 30_000;
    const timer = setTimeout(() => entry.finish(), timeoutMs);
    entry.finish = () => {
      clearTimeout(timer);
      if (!reloading.delete(rid)) return;
      for (const slot of entry.pending.values())
        entry.parts.push({
          slot: slot.index,
          error: `the serving process did not report its reload within ${timeoutMs / 1000} s (it ended or is stuck)`,
        });
      entry.parts.sort((a, b) => a.slot - b.slot);
      const report = mergeReloadReports(entry.parts, new Date().toISOString());
      if (report.ok) log.info({ processes: entry.parts.length }, 'every serving process reloaded');
      else log.error({ errors: report.errors }, `reload failed: ${report.errors.join('; ')}`);
      opts.onReload?.(report, entry.parts.length);
    };
    reloading.set(rid, entry);
    if (targets.length === 0) entry.finish();
    for (const s of targets) s.worker?.send({ t: RELOAD, rid } satisfies ToWorker);
  };
  const reloaded = (from: Worker, m: Extract<ToPrimary, { t: typeof RELOADED }>) => {
    const entry = reloading.get(m.rid);
    const slot = entry?.pending.get(from.id);
    if (!entry || !slot) return;
    entry.pending.delete(from.id);
    entry.parts.push({ slot: slot.index, report: m.report });
    if (entry.pending.size === 0) entry.finish();
  };

  const collected = (from: Worker, m: Extract<ToPrimary, { t: typeof METRICS_PART }>) => {
    const entry = collecting.get(m.rid);
    if (!entry) return;
    if (m.metrics) entry.parts.push(m.metrics);
    else log.warn({ pid: from.process.pid, err: m.error }, 'a serving process could not read its metrics');
    entry.pending.delete(from.id);
    if (entry.pending.size === 0) entry.finish();
  };

  const fork = (slot: Slot) => {
    slot.restartTimer = undefined;
    slot.ready = false;
    const worker = cluster.fork(childEnv({ [SERVE_SLOT_ENV]: String(slot.index) }));
    slot.worker = worker;
    worker.on('message', (raw: unknown) => {
      const m = raw as ToPrimary;
      if (m?.t === READY) {
        slot.ready = true;
        slot.readyAt = Date.now();
        slot.startFailures = 0;
        log.info({ slot: slot.index, pid: worker.process.pid }, 'serving process ready');
        if (!announced && slots.every((s) => s.ready)) {
          announced = true;
          opts.onReady(m.text);
        }
      } else if (m?.t === METRICS_REQ) {
        collect(worker, m.id);
      } else if (m?.t === METRICS_PART) {
        collected(worker, m);
      } else if (m?.t === RELOADED) {
        reloaded(worker, m);
      }
    });
    worker.on('exit', (code, signal) => exited(slot, worker, code, signal));
  };

  const exited = (slot: Slot, worker: Worker, code: number | null, signal: string | null) => {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    for (const entry of collecting.values())
      if (entry.pending.delete(worker.id) && entry.pending.size === 0) entry.finish();
    // A process that ends mid-reload is reported as such; the others are still waited for.
    for (const entry of reloading.values()) {
      if (!entry.pending.delete(worker.id)) continue;
      entry.parts.push({
        slot: slot.index,
        error: `the serving process ended (${signal ?? code}) during the reload`,
      });
      if (entry.pending.size === 0) entry.finish();
    }
    if (stopping) {
      if (slots.every((s) => !s.worker)) finish(exitCode);
      return;
    }
    const wasReady = slot.ready;
    slot.ready = false;
    if (!wasReady) {
      slot.startFailures++;
      if (slot.startFailures >= maxStartFailures) {
        log.error(
          { slot: slot.index, code, signal, failures: slot.startFailures },
          'a serving process keeps failing at start; stopping serve',
        );
        exitCode = 1;
        stop();
        return;
      }
    }
    slot.crashes = wasReady && Date.now() - slot.readyAt >= stableMs ? 1 : slot.crashes + 1;
    const delay = Math.min(backoff.max, backoff.first * 2 ** (slot.crashes - 1));
    log.warn(
      { slot: slot.index, pid: worker.process.pid, code, signal, restartInMs: delay, ready: wasReady },
      'a serving process died; starting it again',
    );
    slot.restartTimer = setTimeout(() => fork(slot), delay);
  };

  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const s of slots) {
      if (s.restartTimer) clearTimeout(s.restartTimer);
      s.restartTimer = undefined;
    }
    const live = slots.flatMap((s) => (s.worker ? [s.worker] : []));
    if (live.length === 0) {
      finish(exitCode);
      return;
    }
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(() => {
      for (const s of slots) {
        if (!s.worker) continue;
        log.warn(
          { slot: s.index, pid: s.worker.process.pid },
          'a serving process did not stop in time; killing it',
        );
        s.worker.process.kill('SIGKILL');
      }
    }, opts.stopTimeoutMs).unref();
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) log.info({ signal }, 'shutting down the serving processes');
    stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', reload);
  for (const slot of slots) fork(slot);
  return done.finally(() => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGHUP', reload);
  });
}
