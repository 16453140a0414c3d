// `sealpost serve --workers 2` as an operator runs it: a child process (the
// supervisor) forking two serving processes that share the MX and API ports,
// each with its own pipeline workers, against a real devnet, pind, Redis and
// store. Mail accepted by either process is delivered exactly once; the API
// answers and /metrics sums both processes; a serving process killed
// mid-run is started again and no acknowledged mail is lost or doubled;
// SIGTERM stops every process within a bound; a process that keeps failing
// at start ends the supervisor with exit code 1.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@solana/web3.js';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  account,
  accountingOk,
  describeAccounting,
  readInboxes,
  sendLoad,
  waitForInboxes,
} from '../../bench/drill/mail.ts';
import { freePort } from '../../bench/harness/net.ts';
import {
  dropRedisPrefix,
  prepareChain,
  randomPrefix,
  STACK_DOMAIN,
  type StackKeys,
  writeStackConfig,
} from '../../bench/harness/stack.ts';
import { type Devnet, startDevnet } from '../../chain/devnet/server.ts';
import { type Pind, startPind } from '../../pinning/pind/server.ts';
import { alive, childPids } from '../support/procs.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const quiet = pino({ level: 'silent' });

interface ServeChild {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[];
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

function spawnServe(args: string[], ready: RegExp | null): Promise<ServeChild> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const handle: ServeChild = {
    child,
    stdout: () => out,
    stderr: () => err,
    logs: () =>
      err.split('\n').flatMap((line) => {
        if (!line.startsWith('{')) return [];
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
    exited,
  };
  if (!ready) return Promise.resolve(handle);
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve not ready: ${err.slice(-2000)}`)), 120_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolvePromise(handle);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before it was ready: ${err.slice(-2000)}`));
    });
  });
}

let dir: string;
let devnet: Devnet;
let pind: Pind;
let keys: StackKeys;
let configFile: string;
let connection: Connection;
let programId: string;
let gatewayUrl: string;
let mxPort: number;
let apiPort: number;
const prefix = randomPrefix('cluster');

beforeAll(async () => {
  dir = tempDir('sealpost-cluster-');
  devnet = await startDevnet({
    dataDir: join(dir, 'chain'),
    host: '127.0.0.1',
    port: 0,
    slotMs: 100,
    logger: quiet,
  });
  programId = devnet.programId;
  connection = new Connection(devnet.rpcUrl, 'confirmed');
  keys = await prepareChain({
    dir,
    rpcUrl: devnet.rpcUrl,
    programId,
    wallets: 4,
    upgradeAuthorityFile: devnet.faucetKeypairFile,
  });
  pind = await startPind({
    dataDir: join(dir, 'pind'),
    pin: { host: '127.0.0.1', port: 0 },
    maxPinBytes: 1 << 24,
    logger: quiet,
  });
  gatewayUrl = pind.gatewayUrl;
  mxPort = await freePort();
  apiPort = await freePort();
  mkdirSync(join(dir, 'data'), { recursive: true });
  configFile = writeStackConfig({
    dir,
    keysDir: keys.keysDir,
    rpcUrl: devnet.rpcUrl,
    programId,
    pindUrl: pind.pinUrl,
    gatewayUrl,
    redisUrl: REDIS_URL,
    prefix,
    mxPort,
    apiPort,
    dataDir: join(dir, 'data'),
    logLevel: 'info',
  });
  // A short drain so the SIGTERM bound below is tight.
  appendFileSync(configFile, '\n[smtp.timeouts]\nshutdown_drain_secs = 5\n');
}, 120_000);

afterAll(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
  }
  await pind?.close();
  await devnet?.close();
  await dropRedisPrefix(REDIS_URL, prefix);
});

const addresses = () => keys.wallets.map((w) => `${w.address}@${STACK_DOMAIN}`);

/** Polls `ok` every 250 ms until it holds or `ms` pass. */
async function eventually(ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok() && Date.now() < deadline) await sleep(250);
}

async function deliveredOnce(acked: Parameters<typeof account>[0], total: number): Promise<void> {
  await waitForInboxes(connection, programId, keys.wallets, total, 120_000);
  // A re-sent copy counts toward `total` too, so the count can be reached while an
  // acknowledged message is still on its way (e.g. its job was active in the killed
  // process and waits for the stalled-job check): wait until every one is in.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const seen = new Set(
      (await readInboxes(connection, programId, gatewayUrl, keys.wallets)).map((e) => e.subject),
    );
    if (acked.every((s) => seen.has(s.subject)) || Date.now() > deadline) break;
    await sleep(1000);
  }
  await sleep(1500); // a late duplicate would land after the count is reached
  const inbox = await readInboxes(connection, programId, gatewayUrl, keys.wallets);
  const a = account(acked, inbox);
  expect(accountingOk(a), describeAccounting(a)).toBe(true);
  // A serving process killed after a message's bytes and job were durable but
  // before its 250 went out leaves the sender with a dropped connection; the
  // sender sends it again and both copies are owed (SMTP is at least once,
  // RFC 5321 section 6.1). Only such re-sent messages may have a second copy,
  // and never more copies than the sender made attempts.
  // A 4xx means "not taken": a message delivered twice after one is doubled.
  const sent = new Map(acked.map((s) => [s.subject, s]));
  let resentCopies = 0;
  for (const subject of a.retriedDuplicates) {
    const s = sent.get(subject);
    const copies = inbox.filter((e) => e.subject === subject).length;
    const lostReplies = s?.earlier.filter((r) => r === 'conn').length ?? 0;
    expect(
      copies,
      `${subject}: ${copies} copies after earlier attempts ${s?.earlier.join(', ')}`,
    ).toBeLessThanOrEqual(1 + lostReplies);
    resentCopies += copies - 1;
  }
  expect(a.unackedDelivered, describeAccounting(a)).toBe(0);
  expect(a.delivered, describeAccounting(a)).toBe(total + resentCopies);
}

describe('sealpost serve --workers 2', () => {
  let serve: ServeChild;
  let acceptedSoFar = 0;
  const allAcked: Parameters<typeof account>[0] = [];

  it('prints its listeners once and runs two serving processes under the supervisor', async () => {
    serve = await spawnServe(['--config', configFile, '--workers', '2'], /serve: 2 serving processes/);
    expect(serve.stdout()).toMatch(new RegExp(`\\(mx\\) listening on 127\\.0\\.0\\.1:${mxPort}\\n`));
    expect(serve.stdout()).toContain(`account API on http://127.0.0.1:${apiPort}`);
    expect(serve.stdout().match(/listening on/g)?.length).toBe(1);
    const pids = childPids(serve.child.pid as number);
    expect(pids).toHaveLength(2);
    // Two malloc arenas per serving process (src/run/serve/child-env.ts).
    for (const pid of pids)
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=2');
  }, 150_000);

  it('accepts mail on both processes and delivers each message exactly once', async () => {
    // A new connection per message, so the cluster's round robin reaches both processes.
    const load = await sendLoad({
      mxPort,
      to: addresses(),
      count: 24,
      connections: 6,
      deadlineMs: 60_000,
      tag: 'spread',
      noRetry: true,
    });
    expect(load.unacked).toBe(0);
    allAcked.push(...load.acked);
    acceptedSoFar += load.acked.length;
    await deliveredOnce(allAcked, allAcked.length);
    const acceptedBy = new Set(
      serve
        .logs()
        .filter((l) => l.msg === 'message accepted')
        .map((l) => l.pid),
    );
    const pids = childPids(serve.child.pid as number);
    expect([...acceptedBy].sort()).toEqual([...pids].sort());
    // A job logs status=sent after its copy is stored; on a loaded machine the
    // last lines can trail the stored copies a little (or a retry finishes it).
    const sentLines = () => serve.logs().filter((l) => String(l.msg).includes('status=sent')).length;
    await eventually(() => sentLines() >= 24, 60_000);
    expect(sentLines()).toBe(24);
  }, 200_000);

  it('answers on the account API and sums both processes in /metrics', async () => {
    const health = await fetch(`http://127.0.0.1:${apiPort}/health`);
    expect(health.status).toBe(200);
    const deliveredNow = async () => {
      const res = await fetch(`http://127.0.0.1:${apiPort}/metrics`, {
        headers: { authorization: `Bearer ${keys.adminToken}` },
      });
      return Number(/^sealpost_deliveries_total\{outcome="delivered"\} (\d+)$/m.exec(await res.text())?.[1]);
    };
    // Counted when a job completes, which can trail its stored copy on a loaded machine.
    const until = Date.now() + 45_000;
    while ((await deliveredNow()) < acceptedSoFar && Date.now() < until) await sleep(250);
    // Several scrapes: each lands on either process and must show the whole deployment.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`http://127.0.0.1:${apiPort}/metrics`, {
        headers: { authorization: `Bearer ${keys.adminToken}` },
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      const accepted = /^sealpost_smtp_replies_total\{phase="data",code="250"\} (\d+)$/m.exec(text)?.[1];
      expect(Number(accepted)).toBe(acceptedSoFar);
      const delivered = /^sealpost_deliveries_total\{outcome="delivered"\} (\d+)$/m.exec(text)?.[1];
      expect(Number(delivered)).toBe(acceptedSoFar);
      // Queue depths come from Redis once, not once per process.
      expect(text.match(/^sealpost_queue_jobs\{queue="deliver",state="wait"\}/gm)).toHaveLength(1);
    }
    const unauthorized = await fetch(`http://127.0.0.1:${apiPort}/metrics`);
    expect(unauthorized.status).toBe(401);
  }, 60_000);

  it('starts a killed serving process again and loses or doubles no acknowledged mail', async () => {
    const supervisor = serve.child.pid as number;
    const before = childPids(supervisor);
    const victim = before[0] as number;
    let killed = false;
    const load = await sendLoad({
      mxPort,
      to: addresses(),
      count: 40,
      connections: 4,
      deadlineMs: 90_000,
      tag: 'kill',
      paceMs: 50,
      onAck: (n) => {
        if (n === 8 && !killed) {
          killed = true;
          process.kill(victim, 'SIGKILL');
        }
      },
    });
    expect(killed).toBe(true);
    expect(load.unacked).toBe(0);
    allAcked.push(...load.acked);
    await deliveredOnce(allAcked, allAcked.length);
    // Two serving processes again, the killed one replaced.
    for (let i = 0; i < 60 && childPids(supervisor).length < 2; i++) await sleep(500);
    const after = childPids(supervisor);
    expect(after).toHaveLength(2);
    expect(after).not.toContain(victim);
    expect(serve.logs().some((l) => l.msg === 'a serving process died; starting it again')).toBe(true);
  }, 300_000);

  it('stops every process on SIGTERM within the drain bound', async () => {
    const supervisor = serve.child.pid as number;
    const pids = childPids(supervisor);
    expect(pids).toHaveLength(2);
    const t0 = Date.now();
    serve.child.kill('SIGTERM');
    const code = await serve.exited;
    const took = Date.now() - t0;
    expect(code).toBe(0);
    // shutdown_drain_secs = 5 plus the workers finishing idle: well under the supervisor's 65 s kill.
    expect(took).toBeLessThan(30_000);
    for (const pid of pids) expect(alive(pid), `serving process ${pid} still running`).toBe(false);
  }, 90_000);
});

describe('sealpost serve process options', () => {
  it('takes --workers N together with --no-workers (serving processes without pipeline workers)', async () => {
    const serve = await spawnServe(
      ['--config', configFile, '--workers', '2', '--no-workers'],
      /serve: 2 serving processes/,
    );
    expect(serve.stdout()).toContain('pipeline workers: not in this process');
    expect(childPids(serve.child.pid as number)).toHaveLength(2);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  }, 150_000);

  it('refuses a --workers value that is not a process count, naming it', async () => {
    const serve = await spawnServe(['--config', configFile, '--workers', 'many'], null);
    expect(await serve.exited).toBe(2);
    expect(serve.stderr()).toMatch(
      /--workers <n>.*expected 0 \(one per core\) or a process count up to 256, got "many"/s,
    );
  }, 60_000);
});

describe('sealpost serve --workers 2 that cannot start', () => {
  it('stops at once on a key file it cannot read, naming it, before forking any process', async () => {
    const bad = join(dir, 'bad-key.toml');
    writeFileSync(
      bad,
      readFileSync(configFile, 'utf8').replace(
        /^authority_key_file = .*$/m,
        'authority_key_file = "/nonexistent/authority.json"',
      ),
    );
    const t0 = Date.now();
    const serve = await spawnServe(['--config', bad, '--workers', '2'], null);
    expect(await serve.exited).toBe(1);
    expect(serve.stderr()).toMatch(/\/nonexistent\/authority\.json.*file not found/);
    // Nothing was forked: no serving process failed (the restart back-off alone would take 15 s more).
    expect(
      serve.logs().some((l) => l.msg === 'a serving process keeps failing at start; stopping serve'),
    ).toBe(false);
    expect(serve.logs().some((l) => /serving process/.test(String(l.msg)))).toBe(false);
    // Generous for a loaded CI machine; the retrying path takes start_attempts × the back-off.
    expect(Date.now() - t0).toBeLessThan(30_000);
    rmSync(bad);
  }, 60_000);

  it('exits 1 after its processes keep failing at start [serve] start_attempts times', async () => {
    // A store nobody listens on: each forked process fails when it opens it.
    const bad = join(dir, 'bad-store.toml');
    const closed = await freePort();
    writeFileSync(
      bad,
      `${readFileSync(configFile, 'utf8').replace(
        /^\[store\]$/m,
        `[store]\nurl = "postgres://127.0.0.1:${closed}/none"`,
      )}\n[serve]\nstart_attempts = 2\n`,
    );
    const serve = await spawnServe(['--config', bad, '--workers', '2'], null);
    const code = await serve.exited;
    expect(code).toBe(1);
    const gaveUp = serve
      .logs()
      .filter((l) => l.msg === 'a serving process keeps failing at start; stopping serve');
    expect(gaveUp.map((l) => l.failures)).toEqual([2]);
    // One restart per slot at most: the slot that failed twice stops serve.
    const restarts = serve.logs().filter((l) => l.msg === 'a serving process died; starting it again');
    expect(restarts.length).toBeGreaterThanOrEqual(1);
    expect(restarts.length).toBeLessThanOrEqual(2);
    expect(serve.logs().some((l) => String(l.err).includes('ECONNREFUSED'))).toBe(true);
    expect(childPids(serve.child.pid as number)).toHaveLength(0);
    rmSync(bad);
  }, 120_000);
});
