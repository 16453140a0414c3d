// Real processes for the drills: `sealpost <command>` (through bin/sealpost.js)
// and `redis-server`, started, waited for, killed with a chosen signal and
// restarted with the same arguments.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { treeRss } from '../harness/proc-tree.ts';

export const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = resolve(ROOT, 'bin', 'sealpost.js');

export interface ProcSpec {
  name: string;
  command: string;
  args: string[];
  /** Printed on stdout once the process is ready. */
  ready: RegExp;
  readyTimeoutMs?: number;
}

/**
 * SEALPOST_BENCH_PROFILE_PROCESS=<name> with SEALPOST_BENCH_CPU_PROFILE=<dir>:
 * the stack process of that name (serve, pind, devnet, worker-0, …) runs
 * with V8's --cpu-prof and writes a profile per process into the directory
 * when it exits (serve's serving processes inherit the flag, one file each).
 */
function profileArgs(name: string): string[] {
  const dir = process.env.SEALPOST_BENCH_CPU_PROFILE;
  if (!dir || process.env.SEALPOST_BENCH_PROFILE_PROCESS !== name) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

export class Proc {
  child: ChildProcess | null = null;
  stdout = '';
  private stderrTail = '';

  constructor(readonly spec: ProcSpec) {}

  static sealpost(name: string, args: string[], ready: RegExp): Proc {
    return new Proc({
      name,
      command: process.execPath,
      args: [...profileArgs(name), BIN, ...args],
      ready,
      readyTimeoutMs: 90_000,
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and resolves with its stdout once `ready` matches. */
  async start(): Promise<string> {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    this.stdout = '';
    const child = spawn(this.spec.command, this.spec.args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    child.stderr?.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-3000);
    });
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.spec.name} not ready after ${this.spec.readyTimeoutMs ?? 30_000} ms`)),
        this.spec.readyTimeoutMs ?? 30_000,
      );
      child.stdout?.on('data', (d: Buffer) => {
        this.stdout += d.toString();
        if (this.spec.ready.test(this.stdout)) {
          clearTimeout(timer);
          resolvePromise(this.stdout);
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(`${this.spec.name} exited (${signal ?? code}) before it was ready: ${this.stderr()}`),
        );
      });
    });
  }

  /** Sends the signal and waits for the exit (SIGKILL after 20 s for a polite signal). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(force);
  }

  /** Resident memory in bytes of the process and its children (serve's serving processes), or undefined when not running. */
  rss(): number | undefined {
    if (!this.pid || !this.running) return undefined;
    const { bytes } = treeRss(this.pid);
    return bytes > 0 ? bytes : undefined;
  }

  stderr(): string {
    return this.stderrTail.trim().split('\n').slice(-6).join(' | ');
  }
}

/** A private redis-server with `appendfsync` as given, on its own port and directory. */
export function privateRedis(port: number, dir: string, fsync: 'always' | 'everysec'): Proc {
  return new Proc({
    name: 'redis-server',
    command: 'redis-server',
    args: [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      fsync,
      '--save',
      '',
      '--daemonize',
      'no',
    ],
    ready: /Ready to accept connections/,
    readyTimeoutMs: 20_000,
  });
}
