// `sealpost dev` runs devnet, pind and domaind as child processes (`sealpost
// devnet|pind|domaind`), not on serve's event loop, and leaves none behind:
// on SIGTERM it stops them all, and when dev itself is killed outright they
// notice the closed IPC channel and stop on their own.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/index.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import type { DevSummary } from '../../src/run/dev/dev-stack.ts';
import { findRspamd } from '../../src/run/dev/rspamd.ts';
import { alive, describeProc, parentOf } from '../support/procs.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const started: ChildProcess[] = [];
const leftPids: number[] = [];
const configFiles: string[] = [];

async function gone(pids: number[], withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || Date.now() > deadline) return left;
    await sleep(100);
  }
}

afterEach(async () => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
  }
  // Nothing of a failed test stays running.
  for (const pid of leftPids.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const file of configFiles.splice(0)) {
    const { redis } = loadConfig(file);
    const client = createRedis(redis);
    const keys = await client.keys(`${redis.prefix}:*`);
    if (keys.length) await client.del(...keys);
    client.disconnect();
  }
});

async function startDev(dataDir: string): Promise<{ child: ChildProcess; summary: DevSummary }> {
  const child = spawn(
    process.execPath,
    [BIN, 'dev', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--slot-ms', '50', '--random-ports'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  started.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`sealpost dev did not come up:\n${err}`)), 90_000);
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('Press Ctrl-C')) {
        clearTimeout(timer);
        resolveReady();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sealpost dev exited with ${code}:\n${err}`));
    });
  });
  const summary = JSON.parse(readFileSync(join(dataDir, 'dev.json'), 'utf8')) as DevSummary;
  configFiles.push(summary.config_file);
  leftPids.push(...summary.processes.map((p) => p.pid));
  return { child, summary };
}

const url = (s: DevSummary, name: string) => s.components.find((c) => c.name === name)?.url as string;

describe('sealpost dev child processes', () => {
  it('runs devnet, pind and domaind as its children on random ports and stops them all on SIGTERM', async () => {
    const { child, summary } = await startDev(tempDir());
    expect(summary.processes.map((p) => p.name)).toEqual(['devnet', 'pind', 'domaind']);
    for (const p of summary.processes) {
      expect(alive(p.pid), `${p.name} running`).toBe(true);
      expect(parentOf(p.pid), `${p.name} is dev's child`).toBe(child.pid);
      expect(p.pid).not.toBe(child.pid);
    }
    // Each answers on the port it got (--random-ports: none is a default port).
    const rpc = await fetch(summary.chain.rpc_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }),
    });
    expect(((await rpc.json()) as { result: string }).result).toBe('ok');
    expect(new URL(summary.chain.rpc_url).port).not.toBe('8899');
    const pin = await fetch(`${url(summary, 'pind (IPFS gateway)')}/ipfs/bafkqaaa`);
    expect(pin.status).toBeLessThan(500);
    const domaind = await fetch(`${url(summary, 'domaind')}/health`);
    expect(domaind.status).toBe(200);
    expect(new URL(url(summary, 'domaind')).port).not.toBe('8081');
    // The generated config names where the children listen.
    const config = loadConfig(summary.config_file);
    expect(config.chain.rpc_url).toBe(summary.chain.rpc_url);
    expect(`http://127.0.0.1:${config.domaind.port}`).toBe(url(summary, 'domaind'));

    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const left = await gone(
      summary.processes.map((p) => p.pid),
      1000,
    );
    expect(left, 'children still running after dev exited').toEqual([]);
  }, 180_000);

  it('leaves no child running when dev itself is killed', async () => {
    const { child, summary } = await startDev(tempDir());
    const pids = summary.processes.map((p) => p.pid);
    expect(pids.every(alive)).toBe(true);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    const left = await gone(pids, 30_000);
    expect(left.map(describeProc), 'children still running 30 s after dev was killed').toEqual([]);
    // Its private rspamd (dev starts one whenever rspamd is installed) goes too: its watchdog sees dev gone.
    expect(Boolean(summary.spam?.started_here)).toBe(Boolean(findRspamd()));
    const rspamdUrl = summary.spam?.started_here ? summary.spam.rspamd_url : undefined;
    if (rspamdUrl) {
      const deadline = Date.now() + 30_000;
      let answering = true;
      while (answering && Date.now() < deadline) {
        answering = await fetch(`${rspamdUrl}/ping`, { signal: AbortSignal.timeout(1000) }).then(
          () => true,
          () => false,
        );
        if (answering) await new Promise((r) => setTimeout(r, 250));
      }
      expect(answering, 'the private rspamd still answers 30 s after dev was killed').toBe(false);
    }
  }, 180_000);
});
