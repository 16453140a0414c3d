// A private rspamd for `sealpost dev` and the tests: the system's rspamd
// binary and its stock configuration (/etc/rspamd), with a local.d of our own
// (its own temp directories, random loopback ports, no network lookups, no
// Redis). Every module that asks the network (DNS lists, fuzzy storage, SPF,
// DKIM, DMARC) or needs Redis is disabled, and the resolver points at a dead
// local port, so a scan never waits on the world: what is left are rspamd's
// content rules (regexp, GTUBE, MIME checks, composites).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

export interface DevRspamd {
  /** The normal worker (`/checkv2`), e.g. http://127.0.0.1:40123. */
  url: string;
  /** The controller (`/learnspam`, `/stat`). */
  controllerUrl: string;
  /** The controller password (plain text). */
  password: string;
  /** A file holding the password (for `[spam] password_file`). */
  passwordFile: string;
  pid: number;
  close(): Promise<void>;
}

/**
 * Modules that make network lookups or need Redis (rspamd 3.4's
 * /etc/rspamd/modules.d), each given `enabled = false;` in local.d.
 */
export const RSPAMD_NETWORK_MODULES = [
  'antivirus',
  'arc',
  'asn',
  'aws_s3',
  'bimi',
  'clickhouse',
  'dcc',
  'dkim',
  'dkim_signing',
  'dmarc',
  'elastic',
  'emails',
  'external_relay',
  'external_services',
  'fuzzy_check',
  'greylist',
  'hfilter',
  'history_redis',
  'maillist',
  'metadata_exporter',
  'metric_exporter',
  'mx_check',
  'neural',
  'p0f',
  'phishing',
  'ratelimit',
  'rbl',
  'replies',
  'reputation',
  'rspamd_update',
  'spamassassin',
  'spamtrap',
  'spf',
  'surbl',
  'url_redirector',
  'whitelist',
] as const;

/** The rspamd binary on PATH (or /usr/bin, /usr/sbin), or undefined. */
export function findRspamd(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin'];
  for (const d of dirs) {
    if (!d) continue;
    const p = join(d, 'rspamd');
    if (existsSync(p)) return p;
  }
  return undefined;
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== 'object' || !address) throw new Error('could not find a free loopback port');
  return address.port;
}

/** Writes the local.d of a private instance under `dir`. */
export function writeRspamdLocalConfig(
  dir: string,
  ports: { normal: number; controller: number; proxy: number; deadDns: number },
  password: string,
  extra: Record<string, string> = {},
  hsCacheDir?: string,
): string {
  const local = join(dir, 'local.d');
  mkdirSync(local, { recursive: true });
  const files: Record<string, string> = {
    'worker-normal.inc': `bind_socket = "127.0.0.1:${ports.normal}";\ncount = 1;\n`,
    'worker-controller.inc': `bind_socket = "127.0.0.1:${ports.controller}";\ncount = 1;\npassword = "${password}";\nenable_password = "${password}";\n`,
    // The stock proxy listens on 11332: two instances would collide there.
    'worker-proxy.inc': `bind_socket = "127.0.0.1:${ports.proxy}";\ncount = 1;\n`,
    'worker-fuzzy.inc': 'count = 0;\n',
    'logging.inc': 'type = "console";\nlevel = "error";\n',
    'options.inc': `dns {\n  nameserver = ["127.0.0.1:${ports.deadDns}"];\n  timeout = 0.2s;\n  retransmits = 1;\n}\ngtube_patterns = "all";\n${
      hsCacheDir ? `hs_cache_dir = "${hsCacheDir}/";\n` : ''
    }`,
    'redis.conf': '',
    // Greylisting needs the greylist module, and so Redis: without it the action is off.
    'actions.conf': 'greylist = null;\n',
    ...extra,
  };
  for (const m of RSPAMD_NETWORK_MODULES) files[`${m}.conf`] = 'enabled = false;\n';
  for (const [name, body] of Object.entries(files)) writeFileSync(join(local, name), body);
  return local;
}

/**
 * Starts rspamd with its own directories under `dir` and waits (up to
 * `timeoutMs`, default 90 s: a first start compiles Hyperscan databases, see
 * `cacheDir`) until the normal worker answers /ping. `localFiles` adds or replaces local.d files (test rules).
 */
export async function startRspamd(opts: RspamdStartOptions): Promise<DevRspamd> {
  // Ports are picked free, but rspamd binds them only after loading its
  // configuration (seconds): another process may take one meanwhile. Fresh
  // ports then, a few times; ports given by the caller are kept.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRspamdOnce(opts);
    } catch (err) {
      const taken = err instanceof Error && /Address already in use/.test(err.message);
      if (!taken || opts.ports || attempt >= 3) throw err;
    }
  }
}

interface RspamdStartOptions {
  dir: string;
  binary?: string;
  timeoutMs?: number;
  localFiles?: Record<string, string>;
  /** Reuse these ports (a restart after close). */
  ports?: { normal: number; controller: number };
  /**
   * Where rspamd keeps its compiled Hyperscan databases. Compiling the URL
   * matcher's 9,600 TLD suffixes takes about 12 s on an idle core (far more on
   * a loaded one); loaded from this cache, startup takes under a second. The
   * databases are keyed by a hash of their patterns, so instances may share
   * one. Default: $SEALPOST_RSPAMD_CACHE, else `hs-cache` under `dir`.
   */
  cacheDir?: string;
}

/** The Hyperscan cache a private instance under `dir` uses when none is given. */
export function defaultRspamdCacheDir(dir: string): string {
  return process.env.SEALPOST_RSPAMD_CACHE || join(dir, 'hs-cache');
}

async function startRspamdOnce(opts: RspamdStartOptions): Promise<DevRspamd> {
  const binary = opts.binary ?? findRspamd();
  if (!binary) throw new Error('rspamd is not installed (Debian: apt-get install rspamd)');
  const normal = opts.ports?.normal ?? (await freeLoopbackPort());
  const controller = opts.ports?.controller ?? (await freeLoopbackPort());
  const proxy = await freeLoopbackPort();
  const deadDns = await freeLoopbackPort();
  const password = randomBytes(12).toString('hex');
  const confDir = join(opts.dir, 'conf');
  const runDir = join(opts.dir, 'run');
  const dbDir = join(opts.dir, 'db');
  const logDir = join(opts.dir, 'log');
  const cacheDir = opts.cacheDir ?? defaultRspamdCacheDir(opts.dir);
  for (const d of [confDir, runDir, dbDir, logDir, cacheDir]) mkdirSync(d, { recursive: true });
  writeRspamdLocalConfig(
    confDir,
    { normal, controller, proxy, deadDns },
    password,
    opts.localFiles,
    cacheDir,
  );
  const passwordFile = join(opts.dir, 'controller.password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const args = [
    '-f',
    ...(asRoot ? ['-u', 'root', '-g', 'root'] : []),
    '-c',
    '/etc/rspamd/rspamd.conf',
    '--var',
    `LOCAL_CONFDIR=${confDir}`,
    '--var',
    `RUNDIR=${runDir}`,
    '--var',
    `DBDIR=${dbDir}`,
    '--var',
    `LOGDIR=${logDir}`,
  ];
  let output = '';
  // rspamd runs under a small sh watchdog, in a process group of its own: when
  // this process dies without closing it (SIGKILL, a crash), the watchdog sees
  // the parent gone within a second and stops rspamd, so nothing is left
  // running; SIGTERM to the watchdog stops rspamd and waits for it.
  const watchdog =
    `"$0" "$@" & r=$!; trap 'kill $r 2>/dev/null; wait $r; exit' TERM INT; ` +
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 $r 2>/dev/null; do sleep 1 & wait $!; done; ` +
    'kill $r 2>/dev/null; wait $r';
  const child: ChildProcess = spawn('/bin/sh', ['-c', watchdog, binary, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  const url = `http://127.0.0.1:${normal}`;
  const controllerUrl = `http://127.0.0.1:${controller}`;
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    // The whole group (watchdog and rspamd's processes) when it does not stop in time.
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  const timeoutMs = opts.timeoutMs ?? 90_000;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`rspamd could not be started: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `rspamd exited (${child.exitCode ?? child.signalCode}) during startup: ${output.trim()}`,
      );
    if ((await ping(url)) && (await ping(controllerUrl))) {
      return { url, controllerUrl, password, passwordFile, pid: child.pid ?? 0, close };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  await close();
  throw new Error(`rspamd did not answer /ping within ${timeoutMs} ms: ${output.trim()}`);
}

async function ping(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/ping`, { signal: AbortSignal.timeout(1000) });
    return res.ok && (await res.text()).startsWith('pong');
  } catch {
    return false;
  }
}

/** Removes a private instance's directory (after close). */
export function removeRspamdDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
