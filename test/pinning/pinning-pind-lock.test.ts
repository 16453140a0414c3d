// pind's data-directory lock (pinning/pind/lock.ts): a lock left behind by
// a daemon that exited uncleanly must not keep the next one from starting
// (in a container the next one has the same pid, 1), and a lock held by a
// live daemon must still refuse, a real `sealpost pind` process included.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  acquireLock,
  DataDirLockedError,
  formatLock,
  HEARTBEAT_MS,
  LOCK_FILE,
  lockHolder,
  ownRecord,
  parseLock,
  STALE_MS,
} from '../../pinning/pind/lock.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

async function startPind(dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'pind', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const started = new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`pind did not start: ${out}${err}`)), 60_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const gateway = /gateway\s+(http\S+)/.exec(out)?.[1];
      if (gateway) {
        clearTimeout(timer);
        done(gateway);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`pind exited with ${code}: ${err}`));
    });
  });
  // It printed its addresses just before it began to wait for SIGTERM: a request
  // answered proves it is past that, so a signal from here on is a clean stop.
  const gateway = await started;
  const ready = await fetch(`${gateway}/ready`);
  expect(ready.status).toBe(200);
  return child;
}

function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], (err, _stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
    });
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once('exit', () => r());
  });

function writeLock(dataDir: string, text: string): string {
  const file = join(dataDir, LOCK_FILE);
  writeFileSync(file, text);
  return file;
}

/** Takes the lock, checks it now names this process, releases it. */
function takeOver(dataDir: string): void {
  const release = acquireLock(dataDir);
  const file = join(dataDir, LOCK_FILE);
  expect(parseLock(readFileSync(file, 'utf8'))).toEqual(ownRecord());
  expect(lockHolder(dataDir)).toBe(process.pid);
  release();
  expect(existsSync(file)).toBe(false);
}

function refused(dataDir: string, pid: number): void {
  let error: unknown;
  try {
    acquireLock(dataDir)();
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(DataDirLockedError);
  expect((error as DataDirLockedError).pid).toBe(pid);
  expect(lockHolder(dataDir)).toBe(pid);
}

describe('pind data-directory lock', () => {
  it('records pid, start time, boot id and pid namespace', () => {
    const me = ownRecord();
    expect(me.pid).toBe(process.pid);
    // This suite runs on Linux: every field is there.
    expect(me.start).toMatch(/^\d+$/);
    expect(me.boot).toMatch(/^[0-9a-f-]{36}$/);
    expect(me.pidns).toMatch(/^pid:\[\d+\]$/);
    expect(parseLock(formatLock(me))).toEqual(me);
    // A lock of only a pid (the format before these fields) still parses.
    expect(parseLock('123\n')).toEqual({ pid: 123 });
    expect(parseLock('garbage\n')).toBeNull();
  });

  it("takes over a lock naming this process's own pid (pind restarted as pid 1 after an unclean exit)", () => {
    const dataDir = tempDir('sealpost-pind-lock-');
    // What a daemon that was this pid wrote before it died: the old format and the new one.
    writeLock(dataDir, `${process.pid}\n`);
    expect(lockHolder(dataDir)).toBeNull();
    takeOver(dataDir);
    writeLock(dataDir, formatLock(ownRecord()));
    takeOver(dataDir);
  });

  it('still refuses a second daemon inside the process that holds the lock', () => {
    const dataDir = tempDir('sealpost-pind-lock-');
    const release = acquireLock(dataDir);
    try {
      refused(dataDir, process.pid);
    } finally {
      release();
    }
    takeOver(dataDir);
  });

  it('takes over a live pid that is not the process that wrote the lock, or one from another boot', () => {
    const dataDir = tempDir('sealpost-pind-lock-');
    // The parent (the test runner) is alive; the lock says it started at another time: the pid was reused.
    const parent = process.ppid;
    const parentStart = readFileSync(`/proc/${parent}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[19] as string;
    const me = ownRecord();
    writeLock(dataDir, formatLock({ ...me, pid: parent, start: String(Number(parentStart) + 1) }));
    takeOver(dataDir);
    // With its real start time the same pid is a live holder.
    writeLock(dataDir, formatLock({ ...me, pid: parent, start: parentStart }));
    refused(dataDir, parent);
    // Written during another boot: nothing from then is alive.
    writeLock(
      dataDir,
      formatLock({ ...me, pid: parent, start: parentStart, boot: '00000000-0000-4000-8000-000000000000' }),
    );
    takeOver(dataDir);
  });

  it("judges a holder in another pid namespace (another container) by the lock's heartbeat", () => {
    const dataDir = tempDir('sealpost-pind-lock-');
    const me = ownRecord();
    const other = me.pidns === 'pid:[1]' ? 'pid:[2]' : 'pid:[1]';
    const file = writeLock(dataDir, formatLock({ pid: 1, start: '42', boot: me.boot, pidns: other }));
    // Just written: a daemon in another container holds it.
    refused(dataDir, 1);
    // No heartbeat for longer than STALE_MS: that daemon is gone.
    const old = new Date(Date.now() - STALE_MS - 5_000);
    utimesSync(file, old, old);
    takeOver(dataDir);
  });

  it(
    'refuses while a real pind runs, which keeps its heartbeat; after SIGKILL the next pind starts',
    async () => {
      const dataDir = tempDir('sealpost-pind-lock-');
      const first = await startPind(dataDir);
      // --data-dir is the store's data directory; pind's own is its pind/ ([pind] data_dir).
      const pindDir = join(dataDir, 'pind');
      const file = join(pindDir, LOCK_FILE);
      const record = parseLock(readFileSync(file, 'utf8'));
      expect(record?.pid).toBe(first.pid);
      expect(record?.start).toMatch(/^\d+$/);
      refused(pindDir, first.pid as number);
      // A second daemon and a sweep are refused by the running one.
      const second = await cli(['pind', '--data-dir', dataDir, '--listen', '127.0.0.1:0']);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain(`a pin daemon (pid ${first.pid}) is already using`);
      const gc = await cli(['pind', 'gc', '--data-dir', dataDir]);
      expect(gc.code).toBe(1);
      // The daemon touches its lock, so another pid namespace sees it alive.
      utimesSync(file, new Date(0), new Date(0));
      const deadline = Date.now() + HEARTBEAT_MS + 10_000;
      while (statSync(file).mtimeMs < Date.now() - STALE_MS && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 250));
      expect(Date.now() - statSync(file).mtimeMs).toBeLessThan(STALE_MS);
      // An unclean exit leaves the lock behind; it does not keep the next daemon out.
      first.kill('SIGKILL');
      await exited(first);
      expect(existsSync(file)).toBe(true);
      const next = await startPind(dataDir);
      expect(parseLock(readFileSync(file, 'utf8'))?.pid).toBe(next.pid);
      next.kill('SIGTERM');
      await exited(next);
      expect(next.exitCode, 'a clean stop').toBe(0);
      expect(existsSync(file), 'a clean stop removes the lock').toBe(false);
    },
    HEARTBEAT_MS + 120_000,
  );
});
