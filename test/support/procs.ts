// Process facts from Linux /proc for the tests that check which processes
// run (serve's serving processes, sealpost dev's children) and that none is
// left behind.
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name in parentheses: [state, ppid, …]. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

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
    return statFields(pid)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** "pid state command" of a process, for a failure message. */
export function describeProc(pid: number): string {
  try {
    const state = statFields(pid)[0];
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return `${pid} ${state} ${cmd}`;
  } catch {
    return `${pid} gone`;
  }
}

/** The parent pid of a running process. */
export function parentOf(pid: number): number {
  return Number(statFields(pid)[1]);
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
