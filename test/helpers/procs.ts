// Process facts from Linux /proc for the tests that check which processes
// run (serve's serving processes, sealpost dev's children) and that none is
// left behind.
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Whether a process still runs. A zombie (exited, not yet reaped) does not:
 * an orphan's new parent reaps it when it gets to it, and a container's init
 * may leave one unreaped for many seconds.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3 (state) follows the command name in parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** "pid state command" of a process, for a failure message. */
export function describeProc(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return `${pid} ${stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)} ${cmd}`;
  } catch {
    return `${pid} gone`;
  }
}

/** The parent pid of a running process. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Field 4 (ppid) follows the command name in parentheses.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** Child pids of a process. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentOf(Number(entry)) === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
