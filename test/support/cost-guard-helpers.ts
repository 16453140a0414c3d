// Shared by the cost-guard tests: a raw SMTP client (so every reply code is
// seen exactly), `sealpost serve --no-workers` and `sealpost worker` child
// processes on the rig's config and data directory, and waiting for Email
// accounts on chain. Children still running after a test are killed.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection, PublicKey } from '@solana/web3.js';
import { afterEach } from 'vitest';
import { type InboxEntry, listInbox } from '../../chain/client/index.ts';

const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => stopChild(c, 'SIGKILL')));
});

export interface Reply {
  code: number;
  text: string;
}

/** One SMTP connection; `cmd` sends a line and resolves to the (possibly multi-line) reply. */
export class SmtpClient {
  private buf = '';
  private waiting: ((r: Reply) => void) | undefined;
  private readonly ready: Promise<Reply>;

  private constructor(private readonly sock: Socket) {
    this.ready = this.next();
    sock.on('data', (d: Buffer) => {
      this.buf += d.toString('latin1');
      const m = this.buf.match(/(?:^|\r\n)(\d{3}) ([^\r\n]*)\r\n$/);
      if (m && this.waiting) {
        const done = this.waiting;
        this.waiting = undefined;
        this.buf = '';
        done({ code: Number(m[1]), text: m[2] ?? '' });
      }
    });
  }

  static async open(port: number): Promise<SmtpClient> {
    const sock = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    const client = new SmtpClient(sock);
    const greeting = await client.ready;
    if (greeting.code !== 220) throw new Error(`greeting ${greeting.code} ${greeting.text}`);
    await client.cmd('EHLO client.remote.example');
    return client;
  }

  private next(): Promise<Reply> {
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  cmd(line: string): Promise<Reply> {
    const reply = this.next();
    this.sock.write(`${line}\r\n`);
    return reply;
  }

  /** MAIL, every RCPT, then DATA when at least one RCPT was taken. */
  async send(
    from: string,
    to: string[],
    subject: string,
  ): Promise<{ mail: Reply; rcpt: Reply[]; data?: Reply }> {
    const mail = await this.cmd(`MAIL FROM:<${from}>`);
    if (mail.code !== 250) return { mail, rcpt: [] };
    const rcpt: Reply[] = [];
    for (const r of to) rcpt.push(await this.cmd(`RCPT TO:<${r}>`));
    if (!rcpt.some((r) => r.code === 250)) {
      await this.cmd('RSET');
      return { mail, rcpt };
    }
    const go = await this.cmd('DATA');
    if (go.code !== 354) return { mail, rcpt, data: go };
    const body = `From: <${from || 'mailer-daemon@remote.example'}>\r\nSubject: ${subject}\r\n\r\n${subject}\r\n.`;
    const data = await this.cmd(body);
    return { mail, rcpt, data };
  }

  async quit(): Promise<void> {
    await this.cmd('QUIT').catch(() => undefined);
    this.sock.destroy();
  }

  /** Drops the connection without QUIT (an abandoned transaction). */
  drop(): void {
    this.sock.destroy();
  }
}

/** One message on a fresh connection; the reply that decided it (DATA's, or the first refusal). */
export async function sendOne(port: number, from: string, to: string, subject: string): Promise<Reply> {
  const c = await SmtpClient.open(port);
  try {
    const r = await c.send(from, [to], subject);
    if (r.mail.code !== 250) return r.mail;
    const rcpt = r.rcpt[0] as Reply;
    if (rcpt.code !== 250) return rcpt;
    return r.data as Reply;
  } finally {
    await c.quit();
  }
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  return exited;
}

export interface Child {
  child: ChildProcess;
  /** Everything the process wrote to standard error (its log lines) so far. */
  stderr(): string;
  stop(): Promise<void>;
}

function spawnCli(
  args: string[],
  readyLine: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; stderr: () => string }> {
  const child = spawn(process.execPath, ['bin/sealpost.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const match = out.match(readyLine);
      if (match) resolve({ child, match, stderr: () => err });
    });
    child.once('exit', (code) =>
      reject(new Error(`sealpost ${args[0]} exited (${code}): ${err.slice(-2000)}`)),
    );
  });
}

/** A port the OS just handed out (free a moment ago; for listeners that cannot take port 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `sealpost serve --no-workers` on the rig's config: a second MX process;
 * resolves to its port. Its own copy of the config moves the account API to
 * a free port and leaves IMAP/POP3 off (the rig has no TLS pair for them).
 */
export async function startMxProcess(configFile: string, dataDir: string): Promise<Child & { port: number }> {
  const own = join(dataDir, `mx-${randomBytes(4).toString('hex')}.toml`);
  const text = readFileSync(configFile, 'utf8').replace(/^\[api\]$/m, `[api]\nport = ${await freePort()}`);
  writeFileSync(own, `${text}\n[mail_hosts]\nimap_enabled = false\npop3_enabled = false\n`);
  const { child, match, stderr } = await spawnCli(
    ['serve', '--no-workers', '--config', own, '--data-dir', dataDir, '--listen', '127.0.0.1:0'],
    /\(mx\) listening on [^:\s]+:(\d+)/,
  );
  return { child, port: Number(match[1]), stderr, stop: () => stopChild(child, 'SIGTERM') };
}

/** `sealpost worker` on the rig's config: a pipeline worker process. */
export async function startWorkerProcess(
  configFile: string,
  dataDir: string,
  concurrency = 8,
): Promise<Child> {
  const { child, stderr } = await spawnCli(
    ['worker', '--config', configFile, '--data-dir', dataDir, '--concurrency', String(concurrency)],
    /pipeline workers running/,
  );
  return { child, stderr, stop: () => stopChild(child, 'SIGTERM') };
}

/** Waits until `owner` has at least `count` Email accounts; returns them (newest first). */
export async function waitForInbox(
  connection: Connection,
  programId: string,
  owner: PublicKey,
  count: number,
  timeoutMs = 90_000,
): Promise<InboxEntry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const inbox = await listInbox(connection, programId, owner, { limit: 1000 });
    if (inbox.length >= count) return inbox;
    if (Date.now() > deadline) throw new Error(`inbox has ${inbox.length} of ${count} messages`);
    await sleep(250);
  }
}

/** Polls `probe` until it returns true. */
export async function until(probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(100);
  }
}
