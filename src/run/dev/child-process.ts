// The `sealpost` commands `sealpost dev` runs as child processes (devnet,
// pind, domaind), so the chain node and the pin daemon have event loops and
// cores of their own. Each child gets an IPC channel: when dev dies without
// stopping it (SIGKILL, a crash), the channel closes and the child stops
// itself (src/cli/wait-for-stop.ts), so nothing is left running. Children
// run in their own process group, so a terminal's Ctrl-C reaches dev alone
// and dev stops them in order, after serve has drained.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from '../../core/log.ts';
import { childEnv } from '../serve/child-env.ts';

/** bin/sealpost.js of this checkout (from src/run/dev or from dist/src/dev). */
export function sealpostBin(): string {
  for (const up of ['../..', '../../..']) {
    const bin = resolve(import.meta.dirname, up, 'bin', 'sealpost.js');
    if (existsSync(bin)) return bin;
  }
  throw new Error('cannot find bin/sealpost.js next to the sources');
}

export interface DevChild {
  name: string;
  pid: number;
  /** What `ready` matched in the child's standard output. */
  match: RegExpMatchArray;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
  stop(graceMs?: number): Promise<void>;
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Starts `sealpost <args>` and resolves once its standard output matches `ready`. */
export function startDevChild(opts: {
  name: string;
  args: string[];
  ready: RegExp;
  logger: Logger;
  readyTimeoutMs?: number;
}): Promise<DevChild> {
  const child = spawn(process.execPath, [sealpostBin(), ...opts.args], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    detached: true,
    env: childEnv(),
  });
  // dev may exit without waiting on the channel; the child watches it, dev does not.
  child.channel?.unref();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (graceMs = 20_000) => {
    if (!running(child)) return;
    child.kill('SIGTERM');
    const force = setTimeout(() => {
      opts.logger.warn({ pid: child.pid }, `${opts.name} did not stop in time; killing it`);
      child.kill('SIGKILL');
    }, graceMs);
    await exited;
    clearTimeout(force);
  };
  let out = '';
  return new Promise((resolvePromise, reject) => {
    const timeoutMs = opts.readyTimeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      void stop(2000);
      reject(new Error(`${opts.name} was not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const match = opts.ready.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      // Keep reading (and dropping) its output, so a full pipe never blocks it.
      child.stdout?.resume();
      opts.logger.info({ pid: child.pid }, `${opts.name} started as a child process`);
      resolvePromise({ name: opts.name, pid: child.pid as number, match, stop });
    };
    child.stdout?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name} could not start: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name} exited (${signal ?? code}) before it was ready; its log is above`));
    });
  });
}
