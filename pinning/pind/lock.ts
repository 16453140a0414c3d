// One pin daemon per data directory. The lock file names the daemon that
// holds it; the admin commands read it to know whether sweeping blocks is
// safe (a running daemon may be writing blocks a sweep would otherwise take).
//
// A pid alone does not identify a process for long: in a container pind is
// always pid 1, so after an unclean exit the restarted daemon finds its own
// pid in the lock, and on a busy host a dead daemon's pid is soon another
// process's. So the lock records, one `key value` line each after the pid:
//
//   start  the holder's start time (clock ticks since boot, /proc/PID/stat)
//   boot   the kernel's boot id: after a reboot no holder is alive
//   pidns  the holder's pid namespace: a pid means something only inside it
//
// and the holder touches the file every HEARTBEAT_MS. The holder is alive when:
//   - another boot wrote the lock: never;
//   - it is in our pid namespace: its pid is running and started when the
//     lock says (a pid equal to our own is alive only while this very process
//     holds the lock, i.e. a second daemon started inside it);
//   - it is in another pid namespace (another container, or the host and a
//     container sharing the data directory), where its pid cannot be looked
//     up: while the file's heartbeat is younger than STALE_MS.
// A lock of only a pid (written before these lines existed) is judged by the
// pid alone, with the same own-pid rule. Where /proc is missing (not Linux)
// only the pid is checked.
import { readFileSync, readlinkSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'pind.lock';
/** How often the holder refreshes the lock file's modification time. */
export const HEARTBEAT_MS = 10_000;
/** A lock from another pid namespace whose heartbeat is older than this is stale. */
export const STALE_MS = 3 * HEARTBEAT_MS;

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`a pin daemon (pid ${pid}) is already using ${dataDir}`);
    this.name = 'DataDirLockedError';
  }
}

/** What a lock file says about its holder. */
export interface LockRecord {
  pid: number;
  start?: string;
  boot?: string;
  pidns?: string;
}

/** Lock files this process holds now (a second acquire in the same process must refuse). */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOrUndefined(read: () => string): string | undefined {
  try {
    return read().trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat). */
function startTime(pid: number | 'self'): string | undefined {
  const stat = readOrUndefined(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (!stat) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

function bootId(): string | undefined {
  return readOrUndefined(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
}

function pidNamespace(): string | undefined {
  return readOrUndefined(() => readlinkSync('/proc/self/ns/pid'));
}

/** This process as a lock file names it. */
export function ownRecord(): LockRecord {
  return { pid: process.pid, start: startTime('self'), boot: bootId(), pidns: pidNamespace() };
}

export function formatLock(record: LockRecord): string {
  let text = `${record.pid}\n`;
  if (record.start) text += `start ${record.start}\n`;
  if (record.boot) text += `boot ${record.boot}\n`;
  if (record.pidns) text += `pidns ${record.pidns}\n`;
  return text;
}

export function parseLock(text: string): LockRecord | null {
  const [first = '', ...rest] = text.split('\n');
  if (!/^\s*\d+\s*$/.test(first)) return null;
  const pid = Number.parseInt(first, 10);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  const record: LockRecord = { pid };
  for (const line of rest) {
    const m = /^(start|boot|pidns) (\S+)$/.exec(line.trim());
    if (m) record[m[1] as 'start' | 'boot' | 'pidns'] = m[2];
  }
  return record;
}

/** Whether the holder a lock file names is still running (see the top of this file). */
function holderAlive(file: string, record: LockRecord): boolean {
  const me = ownRecord();
  if (record.boot && me.boot && record.boot !== me.boot) return false;
  if (record.pidns && me.pidns && record.pidns !== me.pidns) {
    try {
      return Date.now() - statSync(file).mtimeMs < STALE_MS;
    } catch {
      return false;
    }
  }
  if (record.pid === process.pid) return held.has(file);
  if (!alive(record.pid)) return false;
  if (record.start) {
    const now = startTime(record.pid);
    // Running, but started after the lock was written: the pid was reused.
    if (now !== undefined && now !== record.start) return false;
  }
  return true;
}

function readLock(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function liveHolder(file: string, text: string | null): number | null {
  const record = text === null ? null : parseLock(text);
  return record && holderAlive(file, record) ? record.pid : null;
}

/** The pid of a live daemon holding `dataDir`, or null (no lock, or a stale one). */
export function lockHolder(dataDir: string): number | null {
  const file = join(dataDir, LOCK_FILE);
  return liveHolder(file, readLock(file));
}

/** Takes the lock (replacing a stale one); returns its release function. */
export function acquireLock(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, formatLock(ownRecord()), { flag: 'wx', mode: 0o644 });
      held.add(file);
      const heartbeat = setInterval(() => {
        try {
          const now = new Date();
          utimesSync(file, now, now);
        } catch {
          // the directory went away; the next acquire decides
        }
      }, HEARTBEAT_MS);
      heartbeat.unref();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        clearInterval(heartbeat);
        held.delete(file);
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const text = readLock(file);
      const holder = liveHolder(file, text);
      if (holder !== null) throw new DataDirLockedError(dataDir, holder);
      // Stale: the holder died without cleaning up, or its pid now names
      // another process. Remove it unless another starter replaced it meanwhile.
      try {
        if (readLock(file) === text) unlinkSync(file);
      } catch {
        // someone else removed it first
      }
    }
  }
  throw new Error(`could not take the lock ${file}`);
}
