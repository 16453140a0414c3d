// `sealpost reload` against a spawned `sealpost serve` (one process, and
// `--workers 2`), as an operator runs them: serve writes its pid file and
// removes it at exit; reload sends SIGHUP, waits for serve's answer and
// prints it, exit 1 with the error when the new certificate is broken (serve
// keeps serving the previous one, and says so in its log), when no serve
// runs, or when the pid file is stale. An IMAP session opened before the
// reload keeps answering; new connections get the new certificate.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/harness/net.ts';
import { dropRedisPrefix, randomPrefix } from '../../bench/harness/stack.ts';
import { type Devnet, startDevnet } from '../../chain/devnet/server.ts';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { generateKeypair, writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { createSelfSignedCert } from '../../src/core/tls/self-signed.ts';
import { LineClient } from '../support/imap-rig.ts';
import { tempDir } from '../support/temp-dir.ts';
import { implicitTlsFingerprint, smtpStarttlsFingerprint } from '../support/tls-probe.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = randomPrefix('reload');
/** The Redis prefixes the stacks used, each removed after the file. */
const prefixes: string[] = [];

let dir: string;
let devnet: Devnet;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = tempDir('sealpost-reload-');
  devnet = await startDevnet({
    dataDir: join(dir, 'chain'),
    host: '127.0.0.1',
    port: 0,
    slotMs: 100,
    logger: pino({ level: 'silent' }),
  });
}, 60_000);

afterAll(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
  }
  await devnet?.close();
  for (const p of prefixes) await dropRedisPrefix(REDIS_URL, p);
});

interface Stack {
  configFile: string;
  dataDir: string;
  certFile: string;
  keyFile: string;
  mxPort: number;
  imapPort: number;
  pop3Port: number;
}

/** A config of its own (data directory, ports, keys, a certificate) for one serve. */
async function stack(name: string): Promise<Stack> {
  const dataDir = join(dir, name);
  mkdirSync(join(dataDir, 'tls'), { recursive: true });
  const authority = join(dataDir, 'authority.json');
  writeKeypairFile(authority, generateKeypair());
  createCredentialKeyFile(join(dataDir, 'credential.key'));
  const [mxPort, apiPort, imapPort, pop3Port] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const configFile = join(dataDir, 'sealpost.toml');
  prefixes.push(`${prefix}-${name}`);
  writeFileSync(
    configFile,
    `[smtp]
hostname = "mx.reload.test"
local_domains = ["reload.test"]
sender_auth = "none"

[[smtp.listeners]]
mode = "mx"
host = "127.0.0.1"
port = ${mxPort}
tls = "starttls"

[chain]
rpc_url = "${devnet.rpcUrl}"
program_id = "${devnet.programId}"
authority_key_file = "${authority}"

[api]
host = "127.0.0.1"
port = ${apiPort}
credential_key_file = "${join(dataDir, 'credential.key')}"

[imap]
host = "127.0.0.1"
port = ${imapPort}

[pop3]
host = "127.0.0.1"
port = ${pop3Port}

[store]
data_dir = "${dataDir}"

[redis]
url = "${REDIS_URL}"
prefix = "${prefix}-${name}"

[log]
level = "info"
`,
  );
  const s = {
    configFile,
    dataDir,
    certFile: join(dataDir, 'tls', 'cert.pem'),
    keyFile: join(dataDir, 'tls', 'key.pem'),
    mxPort,
    imapPort,
    pop3Port,
  };
  await newPair(s);
  return s;
}

/** Writes a new certificate and key; returns the certificate's fingerprint. */
async function newPair(s: Stack): Promise<string> {
  const pair = await createSelfSignedCert(['localhost', '127.0.0.1'], { days: 30 });
  writeFileSync(s.keyFile, pair.key, { mode: 0o600 });
  writeFileSync(s.certFile, pair.cert);
  return new X509Certificate(pair.cert).fingerprint256;
}

interface Serve {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
}

function spawnServe(args: string[], ready: RegExp): Promise<Serve> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve not ready: ${err.slice(-2000)}`)), 90_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        done({ child, stderr: () => err, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`serve exited (${code}) before it was ready: ${err.slice(-2000)}`));
    });
  });
}

// bin/sealpost.js notes on stderr when it runs the sources (another change since the build).
const STALE_DIST = /^sealpost: dist\/ is .*\n/m;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr: stderr.replace(STALE_DIST, '') });
    });
  });
}

async function stop(serve: Serve): Promise<number | null> {
  serve.child.kill('SIGTERM');
  return serve.exited;
}

/** JSON log lines serve wrote so far. */
function logs(serve: Serve): Record<string, unknown>[] {
  return serve
    .stderr()
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

describe('sealpost reload', () => {
  it('fails clearly when no serve runs, or when the pid file is stale', async () => {
    const s = await stack('none');
    const pidFile = join(s.dataDir, 'serve.pid');
    const none = await cli(['reload', '--config', s.configFile]);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      `error: no running serve: pid file ${pidFile} not found (is \`sealpost serve\` running with this config, or give --pid-file)\n`,
    );

    // The pid of a process that has ended.
    const gone = spawn(process.execPath, ['-e', '']);
    const goneExit = new Promise((r) => gone.once('exit', r));
    await goneExit;
    writeFileSync(pidFile, `${gone.pid}\n`);
    const stale = await cli(['reload', '--pid-file', pidFile]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`names process ${gone.pid}, which is not running (a stale pid file`);

    // A running process that is not serve (its pid reused) is not signalled.
    const sleeper = spawn('sleep', ['30']);
    children.push(sleeper);
    writeFileSync(pidFile, `${sleeper.pid}\n`);
    const reused = await cli(['reload', '--pid-file', pidFile]);
    expect(reused.code).toBe(1);
    expect(reused.stderr).toContain(`names process ${sleeper.pid}, which is not sealpost serve`);
    expect(sleeper.exitCode).toBeNull();
    sleeper.kill('SIGKILL');
  }, 60_000);

  it('reloads a running serve: new certificate for new connections, the open IMAP session stays', async () => {
    const s = await stack('one');
    const serve = await spawnServe(
      ['--config', s.configFile, '--workers', '1', '--no-workers'],
      /account API on/,
    );
    const pidFile = join(s.dataDir, 'serve.pid');
    expect(readFileSync(pidFile, 'utf8')).toBe(`${serve.child.pid}\n`);

    const session = await LineClient.open(s.imapPort);
    expect(await session.until(/^\* OK/)).toMatch(/^\* OK/);
    expect(await session.command('a1', 'CAPABILITY')).toMatch(/^a1 OK/m);
    const oldFp = session.socket.getPeerCertificate().fingerprint256;
    expect(await smtpStarttlsFingerprint(s.mxPort)).toBe(oldFp);

    const newFp = await newPair(s);
    const ok = await cli(['reload', '--config', s.configFile]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`reloaded serve (pid ${serve.child.pid})`);
    expect(ok.stdout).toContain(`certificate: changed: CN=localhost, sha256 ${newFp}`);
    expect(ok.stdout).toContain('admin token: unchanged');
    expect(await implicitTlsFingerprint(s.imapPort)).toBe(newFp);
    expect(await implicitTlsFingerprint(s.pop3Port)).toBe(newFp);
    expect(await smtpStarttlsFingerprint(s.mxPort)).toBe(newFp);
    expect(await session.command('a2', 'NOOP')).toMatch(/^a2 OK/m);
    expect(session.socket.getPeerCertificate().fingerprint256).toBe(oldFp);

    // A broken certificate: exit 1 with the error, serve keeps the pair it has and logs why.
    writeFileSync(s.certFile, '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n');
    const bad = await cli(['reload', '--config', s.configFile]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(
      new RegExp(
        `^error: reload of serve \\(pid ${serve.child.pid}\\) failed; it keeps its previous certificates, admin token and config:\\n  \\[smtp\\] tls_cert_file ${s.certFile}: holds a certificate that does not parse`,
      ),
    );
    expect(await implicitTlsFingerprint(s.imapPort)).toBe(newFp);
    expect(await smtpStarttlsFingerprint(s.mxPort)).toBe(newFp);
    const logged = logs(serve).find((l) => l.level === 'error' && String(l.msg).startsWith('reload failed'));
    expect(logged?.msg).toContain(s.certFile);
    expect(await session.command('a3', 'NOOP')).toMatch(/^a3 OK/m);

    // Fixed, as JSON.
    const thirdFp = await newPair(s);
    const json = await cli(['reload', '--config', s.configFile, '--json']);
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({
      ok: true,
      pid: serve.child.pid,
      seq: 3,
      event: 'reload',
      processes: 1,
      certificate: { changed: true, fingerprint256: thirdFp, cert_file: s.certFile },
      errors: [],
    });
    expect(await implicitTlsFingerprint(s.pop3Port)).toBe(thirdFp);
    expect(await session.command('a4', 'LOGOUT')).toMatch(/^a4 OK/m);
    session.close();

    // A clean stop removes the pid file; then there is nothing to reload.
    expect(await stop(serve)).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
    expect(existsSync(join(s.dataDir, 'serve.reload.json'))).toBe(false);
    const after = await cli(['reload', '--config', s.configFile]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain(`no running serve: pid file ${pidFile} not found`);
  }, 120_000);

  it('passes the reload on to every serving process of --workers 2 and merges their answers', async () => {
    const s = await stack('two');
    const pidFile = join(s.dataDir, 'run', 'sealpost.pid');
    const serve = await spawnServe(
      ['--config', s.configFile, '--workers', '2', '--no-workers', '--pid-file', pidFile],
      /serve: 2 serving processes/,
    );
    expect(readFileSync(pidFile, 'utf8')).toBe(`${serve.child.pid}\n`);
    const newFp = await newPair(s);
    const ok = await cli(['reload', '--pid-file', pidFile]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`reloaded serve (pid ${serve.child.pid}, 2 serving processes)`);
    expect(ok.stdout).toContain(`certificate: changed: CN=localhost, sha256 ${newFp}`);
    // Connections go round robin to both processes: every one sees the new pair.
    for (let i = 0; i < 6; i++) expect(await implicitTlsFingerprint(s.imapPort)).toBe(newFp);
    const reloadedPids = new Set(
      logs(serve)
        .filter((l) => String(l.msg).startsWith('reloaded:'))
        .map((l) => l.pid),
    );
    expect(reloadedPids.size).toBe(2);

    // A key that does not match: both processes refuse it, reported once with both slots.
    const other = await createSelfSignedCert(['localhost'], { days: 30 });
    writeFileSync(s.keyFile, other.key);
    const bad = await cli(['reload', '--pid-file', pidFile]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `  slots 0, 1: [smtp] tls_key_file ${s.keyFile}: does not match the certificate in ${s.certFile}`,
    );
    for (let i = 0; i < 4; i++) expect(await implicitTlsFingerprint(s.imapPort)).toBe(newFp);

    expect(await stop(serve)).toBe(0);
    expect(existsSync(pidFile)).toBe(false);
  }, 150_000);
});
