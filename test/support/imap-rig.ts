// Shared pieces of the IMAP/POP3 tests: the whole serve stack (devnet, pind,
// MX, workers, IMAP and POP3 on loopback ports with a self-signed
// certificate), a wallet with an account and a mail password, delivery over
// real SMTP, and clients that speak IMAP/POP3 over TLS.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type TLSSocket } from 'node:tls';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { CredentialSealer } from '../../src/core/crypto/credential-seal.ts';
import { AccountsRepo, MessagesRepo, type StoredMessage } from '../../src/core/store/index.ts';
import { setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { RIG_DOMAIN, type ServeRig, startServeRig } from './serve-rig.ts';

export const PASSWORD = 'correct horse battery staple';

export interface MailUser {
  key: Keypair;
  wallet: string;
  /** `<wallet>@mail.test`: what autoconfig's %EMAILADDRESS% gives a client. */
  address: string;
  password: string;
}

export async function startMailRig(
  opts: { extraToml?: string; serve?: Parameters<typeof startServeRig>[0] } = {},
): Promise<ServeRig> {
  return startServeRig({
    mailAccess: true,
    extraToml: `\n[imap]\nidle_poll_ms = 200\n${opts.extraToml ?? ''}`,
    ...opts.serve,
  });
}

/** A wallet with an on-chain mailbox, an account here and (unless `password: null`) a mail password. */
export async function mailUser(
  rig: ServeRig,
  opts: { password?: string | null; alias?: string } = {},
): Promise<MailUser> {
  const key = await rig.mail.mailbox({ alias: opts.alias });
  const wallet = key.publicKey.toBase58();
  const accounts = new AccountsRepo(rig.serving.store.db);
  await accounts.create(wallet, { source: 'self' });
  const password = opts.password === undefined ? PASSWORD : (opts.password ?? '');
  if (opts.password !== null) await setPassword(rig, wallet, password);
  return { key, wallet, address: `${wallet}@${RIG_DOMAIN}`, password };
}

export async function setPassword(rig: ServeRig, wallet: string, password: string, oldPassword?: string) {
  const deps = {
    accounts: new AccountsRepo(rig.serving.store.db),
    sealer: new CredentialSealer(rig.credentialKey),
    db: rig.serving.store.db,
  };
  if (!(await setMailPassword(deps, wallet, password, { oldPassword }))) throw new Error('no account');
}

export function rawMessage(
  subject: string,
  body = `Hello — ${subject}\r\n.a line with a leading dot\r\n`,
): string {
  return (
    `From: Ann Example <ann@remote.example>\r\nTo: bob@${RIG_DOMAIN}\r\nSubject: ${subject}\r\n` +
    `Date: Tue, 03 Mar 2026 10:00:00 +0000\r\nMessage-ID: <${subject.replace(/\W/g, '')}@remote.example>\r\n` +
    `MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${body}`
  );
}

export async function deliver(rig: ServeRig, to: string, raw: string | Buffer): Promise<void> {
  await nodemailer
    .createTransport({ host: '127.0.0.1', port: rig.mxPort, secure: false, ignoreTLS: true, pool: false })
    .sendMail({ envelope: { from: 'ann@remote.example', to: [to] }, raw });
}

/** Waits until the store holds `count` copies for the wallet (delivery runs through the chain). */
export async function waitForCopies(rig: ServeRig, wallet: string, count: number, timeoutMs = 30_000) {
  const messages = new MessagesRepo(rig.serving.store.db);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows: StoredMessage[] = await messages.listForWallet(wallet);
    if (rows.length >= count) return rows;
    if (Date.now() > deadline) throw new Error(`${wallet} has ${rows.length} of ${count} copies`);
    await sleep(100);
  }
}

export function imapFlow(rig: ServeRig, user: string, pass: string): ImapFlow {
  return new ImapFlow({
    host: '127.0.0.1',
    port: rig.imapPort as number,
    secure: true,
    tls: { rejectUnauthorized: false },
    auth: { user, pass },
    logger: false,
    disableAutoIdle: true,
  });
}

/** A raw TLS line client for protocol-level tests. */
export class LineClient {
  private buf = '';
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(readonly socket: TLSSocket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('error', () => {});
  }

  static async open(port: number): Promise<LineClient> {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    return new LineClient(socket);
  }

  write(text: string | Buffer): void {
    this.socket.write(text);
  }

  /** Reads until a line matches `done` (or the connection closes); returns everything read. */
  async until(done: RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.buf.split('\r\n');
      const idx = lines.findIndex((l, i) => i < lines.length - 1 && done.test(l));
      if (idx >= 0) {
        const out = lines.slice(0, idx + 1).join('\r\n');
        this.buf = lines.slice(idx + 1).join('\r\n');
        return out;
      }
      if (this.closed) return this.buf;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${done}; got ${JSON.stringify(this.buf)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  /** Sends a tagged IMAP command and returns the response up to its tagged status. */
  async command(tag: string, text: string): Promise<string> {
    this.write(`${tag} ${text}\r\n`);
    return this.until(new RegExp(`^${tag} (OK|NO|BAD)`));
  }

  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await sleep(50);
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Runs a Python script (stdlib only) with arguments; resolves with its stdout, rejects with stderr. */
export function runPython(script: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`python exited ${code}: ${err}`));
    });
  });
}

/** An account API session token for the user's wallet: challenge, signed locally, login. */
export async function apiToken(rig: ServeRig, user: MailUser): Promise<string> {
  const base = rig.serving.apiUrl as string;
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, string>;
  };
  const { nonce } = await post('/v1/auth/challenge', { wallet: user.wallet });
  const signature = bs58.encode(
    ed25519.sign(new TextEncoder().encode(nonce), user.key.secretKey.slice(0, 32)),
  );
  return (await post('/v1/auth/login', { wallet: user.wallet, signature })).token as string;
}
