// How `sealpost reload` finds a running serve and learns what its reload
// did. serve writes its process id to a pid file (default
// <data_dir>/serve.pid, `--pid-file`) once it listens and removes it when it
// exits; next to it a status file (<name>.reload.json) holds the outcome of
// the latest reload with a sequence number (0: serve has just started), so
// the CLI can send SIGHUP and wait for the entry that answers it. With
// `--workers N` the supervisor writes both, with the serving processes'
// results merged. Only node:fs here: the reload command loads nothing else.
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../../core/log.ts';
import type { ReloadReport } from './reload.ts';

export const PID_FILE_NAME = 'serve.pid';

/** The pid file of a serve: `--pid-file`, else `<data_dir>/serve.pid`. */
export function servePidFilePath(explicit: string | undefined, dataDir: string): string {
  return explicit ?? join(dataDir, PID_FILE_NAME);
}

/** The status file beside a pid file: `serve.pid` → `serve.reload.json`. */
export function reloadStatusPath(pidFile: string): string {
  const name = basename(pidFile).replace(/\.pid$/, '');
  return join(dirname(pidFile), `${name}.reload.json`);
}

/** One entry of the status file. */
export interface ReloadStatus extends ReloadReport {
  pid: number;
  /** 0 when serve started, then one more per reload. */
  seq: number;
  event: 'start' | 'reload';
  /** Serving processes whose results are merged here. */
  processes: number;
}

function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, file);
}

/** The pid a pid file names, or null when it is absent; throws on unreadable or garbled content. */
export function readPidFile(file: string): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`pid file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  const pid = Number(text.trim());
  if (!/^\d+$/.test(text.trim()) || pid <= 0)
    throw new Error(`pid file ${file} does not hold a process id (${JSON.stringify(text.slice(0, 40))})`);
  return pid;
}

/** The latest status entry, or null when there is none (or it does not parse). */
export function readReloadStatus(file: string): ReloadStatus | null {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as ReloadStatus;
    return typeof value?.pid === 'number' && typeof value.seq === 'number' ? value : null;
  } catch {
    return null;
  }
}

/** Whether `pid` runs; `foreign`: it runs but this user may not signal it. */
export function processState(pid: number): 'running' | 'gone' | 'foreign' {
  try {
    process.kill(pid, 0);
    return 'running';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? 'foreign' : 'gone';
  }
}

/**
 * Whether a running pid is a `sealpost serve` (Linux /proc); undefined where
 * that cannot be told. Guards against a pid file left by a serve that
 * crashed, whose pid a new, unrelated process now has: SIGHUP would end it.
 */
export function looksLikeServe(pid: number): boolean | undefined {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  return cmdline.split('\0').includes('serve');
}

/** serve's side: writes the pid file and the status entries, removes both at exit. */
export class ServePidFile {
  readonly statusFile: string;
  private seq = 0;
  private claimed = false;
  private readonly onExit = () => this.release();

  constructor(
    readonly file: string,
    private readonly log: Logger,
  ) {
    this.statusFile = reloadStatusPath(file);
  }

  /** Writes this process's pid and a start entry (`processes` serving processes). */
  claim(processes: number): void {
    let previous: number | null = null;
    try {
      previous = readPidFile(this.file);
    } catch {
      // Garbled: replaced below.
    }
    if (
      previous !== null &&
      previous !== process.pid &&
      processState(previous) !== 'gone' &&
      looksLikeServe(previous)
    )
      this.log.warn(
        { pidFile: this.file, pid: previous },
        `pid file ${this.file} names another running serve (pid ${previous}); it is replaced, so \`sealpost reload\` reaches this one`,
      );
    writeAtomically(this.file, `${process.pid}\n`);
    this.claimed = true;
    process.once('exit', this.onExit);
    this.write({
      ok: true,
      at: new Date().toISOString(),
      applied: [],
      restart_needed: [],
      warnings: [],
      errors: [],
      pid: process.pid,
      seq: 0,
      event: 'start',
      processes,
    });
  }

  /** Records a reload's outcome for `sealpost reload`. */
  record(report: ReloadReport, processes: number): void {
    if (!this.claimed) return;
    this.seq += 1;
    this.write({ ...report, pid: process.pid, seq: this.seq, event: 'reload', processes });
  }

  /** Removes the pid file and the status file when they are still this process's. */
  release(): void {
    if (!this.claimed) return;
    this.claimed = false;
    process.off('exit', this.onExit);
    let owner: number | null = null;
    try {
      owner = readPidFile(this.file);
    } catch {
      return;
    }
    if (owner !== process.pid) return;
    for (const f of [this.file, this.statusFile]) {
      try {
        unlinkSync(f);
      } catch {
        // Already gone.
      }
    }
  }

  private write(status: ReloadStatus): void {
    try {
      writeAtomically(this.statusFile, `${JSON.stringify(status)}\n`);
    } catch (err) {
      this.log.warn(
        { file: this.statusFile, err: (err as Error).message },
        'could not write the reload status file; `sealpost reload` will not see the outcome',
      );
    }
  }
}
