// Black-box: `sealpost dev` as a user runs it — a child process on random
// loopback ports — then the chain it prepared, read with web3.js.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Connection, PublicKey } from '@solana/web3.js';
import { XMLParser } from 'fast-xml-parser';
import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { getDomain, getMailbox, getPostoffice } from '../../chain/client/index.ts';
import { type Config, loadConfig } from '../../src/core/config/index.ts';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { createRedis } from '../../src/core/redis/client.ts';
import type { DnsRecordsResult } from '../../src/edge/domaind/dns-records.ts';
import { ensureDevConfig, writeDevConfig } from '../../src/run/dev/dev-config.ts';
import { type DevSummary, readDevSummary } from '../../src/run/dev/dev-stack.ts';
import { tempDir } from '../support/temp-dir.ts';
import { withoutTrace } from '../support/trace.ts';

const execFileP = promisify(execFile);
const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');
const running: ChildProcess[] = [];

const configFiles: string[] = [];

/** The stack's queues live under the prefix its generated config names: remove them. */
async function dropQueues(configFile: string): Promise<void> {
  const { redis } = loadConfig(configFile);
  const client = createRedis(redis);
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${redis.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await client.del(...keys);
  } while (cursor !== '0');
  client.disconnect();
}

afterEach(async () => {
  for (const child of running.splice(0)) await stop(child);
  for (const file of configFiles.splice(0)) await dropQueues(file);
});

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

interface RunningDev {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
}

/** Starts `sealpost dev` and resolves once it printed its summary. */
async function startDev(
  dataDir: string,
  opts: { args?: string[]; into?: ChildProcess[] } = {},
): Promise<RunningDev> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'dev',
      '--data-dir',
      dataDir,
      ...(opts.args ?? ['--listen', '127.0.0.1:0']),
      '--slot-ms',
      '50',
      '--random-ports',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  (opts.into ?? running).push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`sealpost dev did not come up:\n${err}`)), 45_000);
    const check = () => {
      if (out.includes('Press Ctrl-C')) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sealpost dev exited with ${code}:\n${err}`));
    });
  });
  return { child, stdout: () => out, stderr: () => err };
}

describe('sealpost dev', () => {
  it('starts devnet with a chain ready for mail, writes dev.json, and comes back to the same state', async () => {
    const dataDir = tempDir();
    const first = await startDev(dataDir);
    const summary = JSON.parse(readFileSync(join(dataDir, 'dev.json'), 'utf8')) as DevSummary;
    configFiles.push(summary.config_file);

    expect(first.stdout()).toContain(summary.chain.rpc_url);
    expect(first.stdout()).toContain(summary.wallets[0]?.address);
    expect(summary.domain).toBe('sealpost.localhost');
    expect(existsSync(summary.config_file)).toBe(true);
    // The accounts store is created and migrated at start.
    expect(existsSync(summary.store.url.replace(/^sqlite:/, ''))).toBe(true);
    expect(statSync(summary.keys.credential_key).size).toBe(32);
    expect(readFileSync(summary.keys.admin_token, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);

    const conn = new Connection(summary.chain.rpc_url, {
      commitment: 'confirmed',
      wsEndpoint: summary.chain.ws_url,
    });
    const programId = summary.program_id;
    const postoffice = await getPostoffice(conn, programId);
    expect(postoffice?.delegateAddress.toBase58()).toBe(summary.delegate);
    const domain = await getDomain(conn, programId, summary.domain);
    expect(domain?.isActive).toBe(true);
    expect(domain?.authority.toBase58()).toBe(summary.authority);
    expect(readKeypairFile(summary.keys.authority).address).toBe(summary.authority);

    expect(summary.wallets.map((w) => w.name)).toEqual(['open', 'postage']);
    for (const wallet of summary.wallets) {
      // Solana CLI keypair format: a JSON array of 64 byte values.
      const raw = JSON.parse(readFileSync(wallet.key_file, 'utf8')) as number[];
      expect(raw).toHaveLength(64);
      expect(statSync(wallet.key_file).mode & 0o777).toBe(0o600);
      expect(readKeypairFile(wallet.key_file).address).toBe(wallet.address);
      expect(await conn.getBalance(new PublicKey(wallet.address))).toBeGreaterThan(1_000_000_000);
      const mailbox = await getMailbox(conn, programId, wallet.address);
      expect(mailbox?.defaultPostage).toBe(BigInt(wallet.default_postage_lamports));
      expect(mailbox?.domain.toBase58()).toBe(
        (await import('../../chain/client/index.ts')).domainAddress(programId, summary.domain)[0].toBase58(),
      );
    }
    expect(summary.wallets[0]?.default_postage_lamports).toBe('0');
    expect(BigInt(summary.wallets[1]?.default_postage_lamports ?? '0')).toBeGreaterThan(0n);

    // The whole stack answers: the account API, and a first mail over SMTP
    // to the open test wallet that its owner reads back with the CLI.
    const api = summary.components.find((c) => c.name === 'account API');
    expect((await fetch(`${api?.url}/v1/openapi.json`)).status).toBe(200);
    const mx = summary.components.find((c) => c.name.startsWith('smtp mx'));
    const open = summary.wallets[0];
    if (!mx || !open) throw new Error('no MX or wallet in the summary');
    const raw = 'From: newcomer@example.test\r\nSubject: first mail\r\n\r\nhello sealpost\r\n';
    await nodemailer
      .createTransport({
        host: '127.0.0.1',
        port: Number(new URL(mx.url).port),
        secure: false,
        ignoreTLS: true,
      })
      .sendMail({ envelope: { from: 'newcomer@example.test', to: [open.address_form] }, raw });
    let count = 0n;
    for (let i = 0; i < 200 && count === 0n; i++) {
      count = (await getMailbox(conn, programId, open.address))?.mailCount ?? 0n;
      if (count === 0n) await new Promise((r) => setTimeout(r, 100));
    }
    expect(count).toBe(1n);
    // Asynchronously, so this process keeps draining the dev stack's output pipes meanwhile.
    const read = await execFileP(
      process.execPath,
      [
        BIN,
        'mailbox',
        'read',
        '--key',
        open.key_file,
        '--config',
        summary.config_file,
        '--rpc',
        summary.chain.rpc_url,
        '--gateway',
        summary.components.find((c) => c.name === 'pind (IPFS gateway)')?.url ?? '',
      ],
      { encoding: 'utf8' },
    );
    expect(read.stderr).toContain('newcomer@example.test');
    // The message as sent under its trace fields.
    expect(withoutTrace(read.stdout)).toBe(raw);

    const balanceBefore = await conn.getBalance(new PublicKey(summary.authority));

    expect(await stop(first.child)).toBe(0);

    // Second run: same keys, same chain (persisted), nothing to do.
    const second = await startDev(dataDir);
    const again = JSON.parse(readFileSync(join(dataDir, 'dev.json'), 'utf8')) as DevSummary;
    expect(again.authority).toBe(summary.authority);
    expect(again.wallets.map((w) => w.address)).toEqual(summary.wallets.map((w) => w.address));
    expect(second.stderr()).toContain('chain already prepared');
    const conn2 = new Connection(again.chain.rpc_url, {
      commitment: 'confirmed',
      wsEndpoint: again.chain.ws_url,
    });
    expect(await conn2.getBalance(new PublicKey(summary.authority))).toBe(balanceBefore);
    expect(await getMailbox(conn2, programId, summary.wallets[1]?.address ?? '')).not.toBeNull();
  }, 120_000);
});

// Two stacks at once, each from its own data directory: every listener on a
// port of its own, the generated config naming exactly those addresses, and
// no mail or queue crossing between them. One pair serves every check below.
describe('two sealpost dev --random-ports stacks side by side', () => {
  const pair: ChildProcess[] = [];
  const dirs: string[] = [];
  let a: { run: RunningDev; summary: DevSummary; config: Config };
  let b: { run: RunningDev; summary: DevSummary; config: Config };
  const url = (s: DevSummary, name: string) => {
    const c = s.components.find((x) => x.name === name);
    if (!c) throw new Error(`no ${name} in dev.json`);
    return c.url;
  };

  beforeAll(async () => {
    for (const name of ['a', 'b']) dirs.push(mkdtempSync(join(tmpdir(), `sealpost-dev-${name}-`)));
    const [dirA, dirB] = dirs as [string, string];
    // Stack B logs at warn: generate its config first and edit [log] level as a user would.
    const { config: seeded, file } = ensureDevConfig(dirB);
    writeDevConfig(file, { ...seeded, log: { ...seeded.log, level: 'warn' } });
    // No --listen: --random-ports alone moves devnet too.
    const [runA, runB] = await Promise.all([
      startDev(dirA, { args: [], into: pair }),
      startDev(dirB, { args: [], into: pair }),
    ]);
    const load = (run: RunningDev, dir: string) => {
      const summary = readDevSummary(dir);
      return { run, summary, config: loadConfig(summary.config_file) };
    };
    a = load(runA, dirA);
    b = load(runB, dirB);
  }, 120_000);

  afterAll(async () => {
    for (const child of pair.splice(0)) await stop(child);
    for (const dir of dirs) {
      if (existsSync(join(dir, 'sealpost.toml'))) await dropQueues(join(dir, 'sealpost.toml'));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('puts every listener on a port of its own and writes the same addresses into the config', async () => {
    const ports = [a, b].flatMap((s) =>
      s.summary.components.filter((c) => c.name !== 'redis').map((c) => c.url),
    );
    const hostPorts = new Set(ports.map((u) => new URL(u).host));
    // The webmail and metrics share the API's listener.
    expect(hostPorts.size).toBe(ports.length - 4);
    expect(a.summary.redis.prefix).not.toBe(b.summary.redis.prefix);

    for (const { summary: s, config: c, run } of [a, b]) {
      expect(s.chain.rpc_url).not.toBe('http://127.0.0.1:8899');
      expect(c.chain.rpc_url).toBe(s.chain.rpc_url);
      expect(c.chain.ws_url).toBe(s.chain.ws_url);
      expect(c.redis.url).toBe(s.redis.url);
      expect(c.redis.prefix).toBe(s.redis.prefix);
      expect(c.ipfs.pind_url).toBe(url(s, 'pind (pin surface)'));
      expect(c.ipfs.gateway_url).toBe(url(s, 'pind (IPFS gateway)'));
      expect(c.api.public_url).toBe(url(s, 'account API'));
      expect(`http://127.0.0.1:${c.domaind.port}`).toBe(url(s, 'domaind'));
      expect(`smtp://127.0.0.1:${c.smtp.listeners[0]?.port}`).toBe(url(s, 'smtp mx (mx)'));
      // Implicit TLS listeners are written as such.
      expect(`smtps://127.0.0.1:${c.smtp.listeners[1]?.port}`).toBe(url(s, 'smtp submissions (submissions)'));
      expect(`imaps://127.0.0.1:${c.imap.port}`).toBe(url(s, 'imap (imaps)'));
      expect(`pop3s://127.0.0.1:${c.pop3.port}`).toBe(url(s, 'pop3 (pop3s)'));
      expect(url(s, 'webmail')).toBe(`${url(s, 'account API')}/`);
      for (const name of ['domaind', 'webmail', 'smtp submissions (submissions)', 'imap (imaps)']) {
        expect(run.stdout()).toContain(`${name}`);
        expect(run.stdout()).toContain(url(s, name));
      }

      // Each answers: chain JSON-RPC, a WebSocket subscription, the API, domaind.
      const rpc = async (method: string) => {
        const res = await fetch(s.chain.rpc_url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
        });
        return ((await res.json()) as { result: unknown }).result;
      };
      expect(await rpc('getHealth')).toBe('ok');
      expect(await rpc('getSlot')).toBeTypeOf('number');
      expect(await slotNotification(s.chain.ws_url)).toBeGreaterThan(0);
      const ready = await fetch(`${url(s, 'account API')}/ready`);
      expect(ready.status).toBe(200);
      expect((await fetch(`${url(s, 'domaind')}/health`)).status).toBe(200);
    }
  });

  it("serves each stack's own client ports from domaind, and an MTA-STS mx equal to the published MX", async () => {
    const parser = new XMLParser({ ignoreAttributes: false });
    for (const { summary: s, config: c } of [a, b]) {
      const res = await fetch(`${url(s, 'domaind')}/mail/config-v1.1.xml?emailaddress=me@${s.domain}`);
      expect(res.status).toBe(200);
      const provider = parser.parse(await res.text()).clientConfig.emailProvider;
      const incoming = provider.incomingServer as { '@_type': string; hostname: string; port: number }[];
      const served = [...incoming, provider.outgoingServer].map((x) => [x['@_type'], x.hostname, x.port]);
      const port = (name: string) => Number(new URL(url(s, name)).port);
      // localhost: resolvable for every client, and a name of the dev certificate.
      expect(served).toEqual([
        ['imap', 'localhost', port('imap (imaps)')],
        ['pop3', 'localhost', port('pop3 (pop3s)')],
        ['smtp', 'localhost', port('smtp submissions (submissions)')],
      ]);
      const cert = new X509Certificate(readFileSync(c.smtp.tls_cert_file));
      expect(cert.checkHost('localhost')).toBe('localhost');
      expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');

      const records = JSON.parse(
        (await execFileP(process.execPath, [BIN, 'dns-records', '--config', s.config_file, '--json'])).stdout,
      ) as DnsRecordsResult;
      const mx = records.records.find((r) => r.type === 'MX')?.data as { exchange: string };
      const srv = (name: string) => srvPort(records, `${name}._tcp.${s.domain}`);
      expect([srv('_imaps'), srv('_pop3s'), srv('_submissions')]).toEqual([
        port('imap (imaps)'),
        port('pop3 (pop3s)'),
        port('smtp submissions (submissions)'),
      ]);
      const tlsrpt = records.records.find((r) => r.name === `_smtp._tls.${s.domain}`);
      expect(tlsrpt?.value).toBe(`v=TLSRPTv1; rua=mailto:postmaster@${s.domain}`);
      expect(c.spooler.tlsrpt.org_name).toBe(c.smtp.hostname);
      const policy = await httpGet(`${url(s, 'domaind')}/.well-known/mta-sts.txt`, `mta-sts.${s.domain}`);
      expect(policy.match(/^mx: (.+)\r$/gm)).toEqual([`mx: ${mx.exchange}\r`]);
    }
  });

  it('delivers mail sent to one stack in that stack only', async () => {
    const openA = a.summary.wallets[0];
    const openB = b.summary.wallets[0];
    if (!openA || !openB) throw new Error('no open test wallet');
    const mxA = new URL(url(a.summary, 'smtp mx (mx)'));
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: Number(mxA.port), secure: false, ignoreTLS: true })
      .sendMail({
        envelope: { from: 'side@example.test', to: [openA.address_form] },
        raw: 'From: side@example.test\r\nSubject: for A\r\n\r\nonly A\r\n',
      });
    const connA = new Connection(a.summary.chain.rpc_url, 'confirmed');
    const connB = new Connection(b.summary.chain.rpc_url, 'confirmed');
    let count = 0n;
    for (let i = 0; i < 200 && count === 0n; i++) {
      count = (await getMailbox(connA, a.summary.program_id, openA.address))?.mailCount ?? 0n;
      if (count === 0n) await new Promise((r) => setTimeout(r, 100));
    }
    expect(count).toBe(1n);
    expect((await getMailbox(connB, b.summary.program_id, openB.address))?.mailCount).toBe(0n);
    expect(await getMailbox(connB, b.summary.program_id, openA.address)).toBeNull();
  });

  it('runs a private rspamd per stack (listed in dev.json) that refuses GTUBE before anything is published', async () => {
    const urls = [a.summary, b.summary].map((s) => {
      expect(s.spam).toMatchObject({ enabled: true, started_here: true });
      expect(url(s, 'rspamd (spam filter)')).toBe(s.spam.rspamd_url);
      return s.spam.rspamd_url;
    });
    expect(new Set(urls).size).toBe(2);
    const openA = a.summary.wallets[0];
    if (!openA) throw new Error('no open test wallet');
    const connA = new Connection(a.summary.chain.rpc_url, 'confirmed');
    const before = (await getMailbox(connA, a.summary.program_id, openA.address))?.mailCount;
    const mxA = new URL(url(a.summary, 'smtp mx (mx)'));
    const gtube = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
    const refused = await nodemailer
      .createTransport({ host: '127.0.0.1', port: Number(mxA.port), secure: false, ignoreTLS: true })
      .sendMail({
        envelope: { from: 'spam@example.test', to: [openA.address_form] },
        raw: `From: spam@example.test\r\nSubject: offer\r\n\r\n${gtube}\r\n`,
      })
      .then(
        () => undefined,
        (err: { responseCode?: number; response?: string }) => err,
      );
    expect(refused?.responseCode).toBe(550);
    expect(refused?.response).toMatch(/5\.7\.1/);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await getMailbox(connA, a.summary.program_id, openA.address))?.mailCount).toBe(before);
  });

  it('honours [log] level: the stack at warn writes no info lines', () => {
    const levels = (run: RunningDev) =>
      run
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { level: string }).level);
    expect(levels(a.run)).toContain('info');
    expect(levels(b.run).filter((l) => ['trace', 'debug', 'info'].includes(l))).toEqual([]);
  });

  it("lets a CLI command run from a checkout find the dev stack's config, and say so on stderr", async () => {
    const checkout = mkdtempSync(join(tmpdir(), 'sealpost-checkout-'));
    dirs.push(checkout);
    mkdirSync(join(checkout, '.data'));
    copyFileSync(a.summary.config_file, join(checkout, '.data', 'sealpost.toml'));
    const env = { ...process.env };
    delete env.SEALPOST_CONFIG;
    const run = await execFileP(process.execPath, [BIN, 'dns-records', '--json'], { cwd: checkout, env });
    expect(run.stderr).toContain(`using config ${join('.data', 'sealpost.toml')} (dev stack)\n`);
    // stdout stays JSON for scripts.
    const records = JSON.parse(run.stdout) as DnsRecordsResult;
    expect(srvPort(records, `_imaps._tcp.${a.summary.domain}`)).toBe(a.config.imap.port);
  });
});

/** Subscribes to slot changes over the devnet WebSocket and resolves with the first slot notified. */
function slotNotification(wsUrl: string): Promise<number> {
  return new Promise((resolveSlot, reject) => {
    const socket = new WebSocket(wsUrl);
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`no slot notification from ${wsUrl}`));
    }, 10_000);
    socket.once('error', reject);
    socket.once('open', () =>
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' })),
    );
    socket.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { method?: string; params?: { result: { slot: number } } };
      if (msg.method !== 'slotNotification' || !msg.params) return;
      clearTimeout(timer);
      socket.close();
      resolveSlot(msg.params.result.slot);
    });
  });
}

/** GET with a chosen Host header (domaind picks the MTA-STS policy by it). */
function httpGet(target: string, host: string): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const req = httpRequest(target, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () =>
        res.statusCode === 200
          ? resolveBody(body)
          : reject(new Error(`${target}: HTTP ${res.statusCode} ${body}`)),
      );
    });
    req.once('error', reject);
    req.end();
  });
}

function srvPort(records: DnsRecordsResult, name: string): number {
  const record = records.records.find((r) => r.name === name && r.type === 'SRV');
  if (!record || !('port' in record.data)) throw new Error(`no SRV record ${name}`);
  return record.data.port;
}
