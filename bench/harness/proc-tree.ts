// A process and its descendants (Linux /proc): `sealpost serve --workers N`
// is a supervisor with N serving processes, so its memory is the tree's.
import { readdirSync, readFileSync } from 'node:fs';

function parentAndRss(pid: number): { ppid: number; rssKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0),
      rssKb: Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0),
    };
  } catch {
    return undefined;
  }
}

/** A process and all its descendants (the root first), with each one's parent and resident memory. */
function tree(root: number): Map<number, { ppid: number; rssKb: number }> {
  const all = new Map<number, { ppid: number; rssKb: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = parentAndRss(Number(entry));
    if (info) all.set(Number(entry), info);
  }
  const found = new Map([[root, all.get(root) ?? { ppid: 0, rssKb: 0 }]]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, info] of all)
      if (!found.has(pid) && found.has(info.ppid)) {
        found.set(pid, info);
        grew = true;
      }
  }
  return found;
}

/** Resident memory of a process and all its descendants, in bytes, and how many processes that was. */
export function treeRss(root: number): { bytes: number; processes: number } {
  const found = tree(root);
  let kb = 0;
  for (const info of found.values()) kb += info.rssKb;
  return { bytes: kb * 1024, processes: found.size };
}

/** The pids of a process and all its descendants (the root first). */
export function treePids(root: number): number[] {
  return [...tree(root).keys()];
}

/** CPU time (user + system) a process has used so far, in milliseconds, or undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** USER_HZ: the unit of /proc/<pid>/stat's times (100 on every Linux this runs on). */
const CLOCK_TICKS = 100;
