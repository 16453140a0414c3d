// The STARTTLS listeners (IMAP 143-style, POP3 110-style), as components on
// a real SQLite store, real Redis and real sockets: no login before TLS,
// commands pipelined behind STARTTLS/STLS are dropped (they arrived
// unprotected), and after the handshake the mail password works.
import { randomBytes } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { isBase58Key } from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { CredentialSealer } from '../../src/core/crypto/credential-seal.ts';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import { acquireWalletLease, type Lease } from '../../src/core/limits/lease.ts';
import { AccountsRepo, openStore, type Store } from '../../src/core/store/index.ts';
import { createSelfSignedCert } from '../../src/core/tls/self-signed.ts';
import { startImapServer } from '../../src/edge/imap/server.ts';
import { startPop3Server } from '../../src/edge/pop3/index.ts';
import { MailLogin } from '../../src/mail/reader-keys/index.ts';
import { setMailPassword } from '../../src/mail/reader-keys/mail-password.ts';
import { tempDir } from '../support/temp-dir.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
});

class Conn {
  private buf = '';
  constructor(private socket: Socket) {
    this.listen();
  }
  private listen() {
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => {
      this.buf += d;
    });
    this.socket.on('error', () => {});
  }
  write(s: string) {
    this.socket.write(s);
  }
  async until(re: RegExp, ms = 10_000): Promise<string> {
    const deadline = Date.now() + ms;
    for (;;) {
      const lines = this.buf.split('\r\n');
      const idx = lines.findIndex((l, i) => i < lines.length - 1 && re.test(l));
      if (idx >= 0) {
        const out = lines.slice(0, idx + 1).join('\r\n');
        this.buf = lines.slice(idx + 1).join('\r\n');
        return out;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${re}: ${JSON.stringify(this.buf)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  /** Upgrades to TLS; anything unread is dropped. */
  async upgrade(): Promise<void> {
    this.socket.removeAllListeners('data');
    const tls = tlsConnect({ socket: this.socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      tls.once('secureConnect', resolve);
      tls.once('error', reject);
    });
    this.socket = tls as unknown as Socket;
    this.buf = '';
    this.listen();
  }
  close() {
    this.socket.destroy();
  }
}

async function components(): Promise<{
  store: Store;
  login: MailLogin;
  wallet: string;
  password: string;
  mail: { db: Store['db']; blobs: BlobStore };
  lockMaildrop: (wallet: string) => Promise<Lease | null>;
  cert: { cert: string; key: string };
}> {
  const dir = tempDir();
  const store = await openStore({ url: `sqlite:${join(dir, 'db.sqlite')}`, dataDir: dir });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const prefix = `sptest-${randomBytes(6).toString('hex')}`;
  cleanups.push(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await store.close();
  });
  const sealer = new CredentialSealer(new Uint8Array(randomBytes(32)));
  const accounts = new AccountsRepo(store.db);
  const wallet = generateKeypair().address;
  await accounts.create(wallet, { source: 'self' });
  const password = 'starttls password';
  await setMailPassword({ accounts, sealer, db: store.db }, wallet, password);
  const login = new MailLogin({
    db: store.db,
    accounts,
    sealer,
    redis,
    prefix,
    walletOf: async (name) => (isBase58Key(name) ? name : null),
  });
  const cert = await createSelfSignedCert(['localhost', '127.0.0.1']);
  return {
    store,
    login,
    wallet,
    password,
    mail: { db: store.db, blobs: new BlobStore(join(dir, 'blobs')) },
    lockMaildrop: (w: string) => acquireWalletLease(redis, prefix, w, 'pop3-maildrop', { ttlMs: 30_000 }),
    cert,
  };
}

async function plainConnect(port: number): Promise<Conn> {
  const socket = netConnect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return new Conn(socket);
}

describe('STARTTLS listeners', () => {
  it('IMAP: LOGINDISABLED before TLS, injected commands dropped, login after STARTTLS', async () => {
    const c = await components();
    const server = await startImapServer({
      host: '127.0.0.1',
      port: 0,
      tls: 'starttls',
      ...c.cert,
      login: c.login,
      mail: c.mail,
      maxAppendBytes: 1 << 20,
      idlePollMs: 500,
      idleTimeoutMs: 1_800_000,
      preAuthTimeoutMs: 60_000,
      maxConnectionsPerIp: 10,
      logger: pino({ level: 'silent' }),
    });
    cleanups.push(() => server.close(100));
    const conn = await plainConnect(server.port);
    const greeting = await conn.until(/^\* OK/);
    expect(greeting).toMatch(/STARTTLS/);
    expect(greeting).toMatch(/LOGINDISABLED/);
    expect(greeting).not.toMatch(/AUTH=PLAIN/);
    conn.write(`a LOGIN ${c.wallet} "${c.password}"\r\n`);
    expect(await conn.until(/^a /)).toBe('a NO [PRIVACYREQUIRED] Log in only under TLS (use STARTTLS)');
    conn.write('b AUTHENTICATE PLAIN\r\n');
    expect(await conn.until(/^b /)).toMatch(/^b NO \[PRIVACYREQUIRED\]/);
    conn.write('c STARTTLS\r\nd LOGOUT\r\n');
    expect(await conn.until(/^c /)).toBe('c OK Begin TLS negotiation now');
    await conn.upgrade();
    conn.write('e CAPABILITY\r\n');
    const caps = await conn.until(/^e /);
    // The LOGOUT sent in the clear behind STARTTLS was dropped: the session is alive.
    expect(caps).not.toMatch(/BYE|^d /m);
    expect(caps).toMatch(/AUTH=PLAIN/);
    expect(caps).not.toMatch(/STARTTLS|LOGINDISABLED/);
    conn.write('f STARTTLS\r\n');
    expect(await conn.until(/^f /)).toMatch(/^f BAD STARTTLS is not available/);
    conn.write(`g LOGIN ${c.wallet} "${c.password}"\r\n`);
    expect(await conn.until(/^g /)).toMatch(/^g OK \[CAPABILITY .*\] Logged in$/);
    conn.close();
  });

  it('POP3: no USER before STLS, injected commands dropped, login after STLS', async () => {
    const c = await components();
    const server = await startPop3Server({
      host: '127.0.0.1',
      port: 0,
      tls: 'starttls',
      ...c.cert,
      login: c.login,
      mail: c.mail,
      lockMaildrop: c.lockMaildrop,
      timeoutMs: 600_000,
      maxConnectionsPerIp: 10,
      logger: pino({ level: 'silent' }),
    });
    cleanups.push(() => server.close(100));
    const conn = await plainConnect(server.port);
    await conn.until(/^\+OK/);
    conn.write('CAPA\r\n');
    const capa = await conn.until(/^\.$/);
    expect(capa).toMatch(/^STLS$/m);
    expect(capa).not.toMatch(/^SASL/m);
    conn.write(`USER ${c.wallet}\r\n`);
    expect(await conn.until(/^[+-]/)).toBe('-ERR [AUTH] Log in only under TLS (use STLS)');
    conn.write('STLS\r\nQUIT\r\n');
    expect(await conn.until(/^[+-]/)).toBe('+OK Begin TLS negotiation');
    await conn.upgrade();
    conn.write(`USER ${c.wallet}\r\n`);
    expect(await conn.until(/^[+-]/)).toBe('+OK Send the password');
    conn.write(`PASS ${c.password}\r\n`);
    expect(await conn.until(/^[+-]/)).toBe('+OK Logged in; 0 messages');
    conn.write('STAT\r\n');
    expect(await conn.until(/^[+-]/)).toBe('+OK 0 0');
    conn.write('QUIT\r\n');
    expect(await conn.until(/^[+-]/)).toBe('+OK Sealpost POP3 signing off');
    conn.close();
  });
});
