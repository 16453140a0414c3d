// Process facts from Linux /proc for the tests that check which processes
// run (serve's serving processes, sealpost dev's children) and that none is
// left behind.
import { readdirSync, readFileSync } from 'node:fs';

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
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
