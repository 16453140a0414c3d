// One POP3 connection (RFC 1939, CAPA from RFC 2449, SASL PLAIN per RFC
// 5034, STLS per RFC 2595, response codes per RFC 3206). The maildrop is
// the readable INBOX messages at login; DELE marks, QUIT removes (UPDATE
// state), and a dropped connection removes nothing. What QUIT removes is
// the holder's choice (account setting `pop3_dele_closes_on_chain`): by
// default only the copy in the operator's store (row and wraps; the blob
// goes with the orphan sweep), leaving the Email account on chain and the
// operator pin, so the message stays in the trustless webmail; with the
// setting on, the copies are also released like an IMAP EXPUNGE (pin
// released, DeleteMail closes the Email account). A session holds the
// maildrop's exclusive lock (RFC 1939 section 8) from login to close; a
// second POP3 login for the same wallet gets `-ERR [IN-USE]` meanwhile.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type SecureContext, TLSSocket } from 'node:tls';
import type { Logger } from '../../core/log.ts';
import { AccountsRepo, INBOX, type ReadableMessage } from '../../core/store/index.ts';
import { type MailLogin, MailLoginError } from '../../mail/reader-keys/index.ts';
import { MailAccess as Access, type MailAccess, type MailAccessDeps } from '../imap/mail/mail-access.ts';
import { ByteReader, InputClosedError, LineTooLongError } from '../imap/protocol/byte-reader.ts';

/** The exclusive lock on one wallet's maildrop; released when the session ends. */
export interface MaildropLock {
  release(): Promise<unknown>;
}

import { dotStuff, topOf } from './message-text.ts';

export interface Pop3SessionOptions {
  login: MailLogin;
  mail: MailAccessDeps;
  /** Takes the wallet's maildrop lock; null while another session holds it. */
  lockMaildrop: (wallet: string) => Promise<MaildropLock | null>;
  /** Autologout after this long without a command (RFC 1939: at least 10 minutes). */
  timeoutMs: number;
  /** Present on a plain listener that offers STLS: the context current at the client's STLS. */
  startTls?: () => SecureContext;
  logger: Logger;
}

type State = 'authorization' | 'transaction' | 'closed';

const MAX_LINE = 1024;
const MAX_ERRORS = 20;
const MAX_LOGIN_FAILURES = 3;

class Pop3Error extends Error {}

export class Pop3Session {
  private state: State = 'authorization';
  private socket: Duplex;
  private readonly reader = new ByteReader();
  private secure: boolean;
  private user: string | undefined;
  private access: MailAccess | undefined;
  private lock: MaildropLock | undefined;
  private drop: ReadableMessage[] = [];
  private uidValidity = 0;
  private readonly deleted = new Set<number>();
  private errors = 0;
  private loginFailures = 0;
  private readonly ip: string;
  private readonly log: Logger;

  constructor(
    raw: Socket | TLSSocket,
    private readonly opts: Pop3SessionOptions,
    secure: boolean,
  ) {
    this.socket = raw;
    this.secure = secure;
    this.ip = raw.remoteAddress ?? 'unknown';
    this.log = opts.logger.child({ component: 'pop3', ip: this.ip });
    this.reader.attach(raw);
    raw.setTimeout(opts.timeoutMs, () => this.close('-ERR Autologout; idle for too long'));
  }

  private async write(data: string | Buffer): Promise<void> {
    if (this.socket.destroyed) return;
    if (!this.socket.write(data)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.socket.off('drain', done);
          this.socket.off('close', done);
          resolve();
        };
        this.socket.on('drain', done);
        this.socket.on('close', done);
      });
    }
  }

  private ok(text: string): Promise<void> {
    return this.write(`+OK ${text}\r\n`);
  }

  close(farewell?: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (farewell) this.socket.write(`${farewell}\r\n`);
    this.release();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 2000).unref();
  }

  /** Server shutdown: a goodbye, then close. */
  shutdown(): void {
    this.close('-ERR [SYS/TEMP] Server shutting down');
  }

  destroy(): void {
    this.state = 'closed';
    this.release();
    this.socket.destroy();
  }

  private release(): void {
    this.access?.close();
    this.access = undefined;
    const lock = this.lock;
    this.lock = undefined;
    // A lock whose release fails (Redis away) expires on its own.
    lock?.release().catch((err: Error) => this.log.warn({ err: err.message }, 'POP3 maildrop unlock failed'));
  }

  async run(): Promise<void> {
    await this.ok('Sealpost POP3 ready');
    try {
      while (this.state !== 'closed') {
        const line = (await this.reader.readLine(MAX_LINE)).toString('utf8');
        try {
          await this.command(line);
          this.errors = 0;
        } catch (err) {
          if (!(err instanceof Pop3Error)) throw err;
          await this.write(`-ERR ${err.message}\r\n`);
          if (++this.errors >= MAX_ERRORS) this.close('-ERR Too many errors');
        }
      }
    } catch (err) {
      if (err instanceof LineTooLongError) this.close('-ERR Line too long');
      else if (!(err instanceof InputClosedError)) {
        this.log.error({ err: (err as Error).message }, 'POP3 session failed');
        this.close('-ERR [SYS/TEMP] Internal error');
      }
    } finally {
      this.close();
    }
  }

  private async command(line: string): Promise<void> {
    const sp = line.indexOf(' ');
    const verb = (sp < 0 ? line : line.slice(0, sp)).toUpperCase();
    const arg = sp < 0 ? '' : line.slice(sp + 1);
    if (verb === 'CAPA') return this.capa();
    if (verb === 'QUIT') return this.quit();
    if (verb === 'NOOP' && this.state === 'transaction') return this.ok('');
    if (this.state === 'authorization') {
      if (verb === 'STLS') return this.stls();
      if (verb === 'USER') return this.userCommand(arg);
      if (verb === 'PASS') return this.pass(arg);
      if (verb === 'AUTH') return this.auth(arg);
    } else {
      const handler = this.transaction[verb];
      if (handler) return handler(arg);
    }
    const known = [
      'STAT',
      'LIST',
      'UIDL',
      'RETR',
      'TOP',
      'DELE',
      'RSET',
      'NOOP',
      'USER',
      'PASS',
      'AUTH',
      'STLS',
    ];
    throw new Pop3Error(known.includes(verb) ? 'Command not valid in this state' : 'Unknown command');
  }

  private async capa(): Promise<void> {
    const caps = [
      'USER',
      'UIDL',
      'TOP',
      'RESP-CODES',
      'AUTH-RESP-CODE',
      'PIPELINING',
      'IMPLEMENTATION Sealpost',
    ];
    if (this.state === 'authorization') {
      if (this.secure) caps.push('SASL PLAIN');
      if (!this.secure && this.opts.startTls) caps.push('STLS');
    }
    await this.write(`+OK Capability list follows\r\n${caps.join('\r\n')}\r\n.\r\n`);
  }

  private async stls(): Promise<void> {
    if (this.secure || !this.opts.startTls) throw new Pop3Error('STLS is not available');
    await this.ok('Begin TLS negotiation');
    this.reader.detach();
    const plain = this.socket as Socket;
    plain.setTimeout(0);
    const tls = new TLSSocket(plain, { isServer: true, secureContext: this.opts.startTls() });
    try {
      await new Promise<void>((resolve, reject) => {
        tls.once('secure', resolve);
        tls.once('error', reject);
      });
    } catch {
      this.destroy();
      return;
    }
    tls.on('error', () => this.destroy());
    this.socket = tls;
    this.secure = true;
    this.user = undefined;
    this.reader.attach(tls);
    tls.setTimeout(this.opts.timeoutMs, () => this.close('-ERR Autologout; idle for too long'));
  }

  private requireTls(): void {
    if (!this.secure) throw new Pop3Error('[AUTH] Log in only under TLS (use STLS)');
  }

  private async userCommand(arg: string): Promise<void> {
    this.requireTls();
    if (!arg) throw new Pop3Error('USER needs a name');
    this.user = arg;
    await this.ok('Send the password');
  }

  private async pass(arg: string): Promise<void> {
    this.requireTls();
    if (this.user === undefined) throw new Pop3Error('USER first');
    const user = this.user;
    this.user = undefined;
    await this.login(user, arg);
  }

  private async auth(arg: string): Promise<void> {
    const [mechanism, initial] = arg.split(' ');
    if (!mechanism) {
      await this.write('+OK\r\nPLAIN\r\n.\r\n');
      return;
    }
    this.requireTls();
    if (mechanism.toUpperCase() !== 'PLAIN') throw new Pop3Error('Unsupported mechanism');
    let response = initial;
    if (response === undefined) {
      await this.write('+ \r\n');
      response = (await this.reader.readLine(MAX_LINE * 8)).toString('latin1').trim();
      if (response === '*') throw new Pop3Error('Authentication cancelled');
    }
    if (response !== '=' && (!/^[A-Za-z0-9+/]*={0,2}$/.test(response) || response.length % 4 !== 0)) {
      throw new Pop3Error('The SASL response is not valid base64');
    }
    const parts = (response === '=' ? '' : Buffer.from(response, 'base64').toString('utf8')).split('\u0000');
    if (parts.length !== 3) throw new Pop3Error('PLAIN needs authzid NUL authcid NUL password');
    const [authz, user, password] = parts as [string, string, string];
    if (authz !== '' && authz !== user) throw new Pop3Error('[AUTH] Acting as another user is not allowed');
    await this.login(user, password);
  }

  private async login(user: string, password: string): Promise<void> {
    let access: MailAccess;
    try {
      const reader = await this.opts.login.login(this.ip, user, password);
      access = new Access(this.opts.mail, reader);
    } catch (err) {
      if (!(err instanceof MailLoginError)) throw err;
      if (err.kind === 'temporary') throw new Pop3Error(`[SYS/TEMP] ${err.message}`);
      const text = err.kind === 'locked' ? err.message : 'Invalid credentials';
      if (++this.loginFailures >= MAX_LOGIN_FAILURES) {
        await this.write(`-ERR [AUTH] ${text}\r\n`);
        this.close();
        return;
      }
      throw new Pop3Error(`[AUTH] ${text}`);
    }
    let lock: MaildropLock | null;
    try {
      lock = await this.opts.lockMaildrop(access.wallet);
    } catch (err) {
      access.close();
      this.log.warn({ err: (err as Error).message }, 'POP3 maildrop lock failed');
      throw new Pop3Error('[SYS/TEMP] The maildrop cannot be locked now; try again later');
    }
    if (!lock) {
      access.close();
      throw new Pop3Error('[IN-USE] Maildrop already locked by another POP3 session; try again later');
    }
    if (this.state === 'closed') {
      // The client went away while the lock was taken.
      access.close();
      await lock.release().catch(() => {});
      return;
    }
    this.lock = lock;
    try {
      const [inbox] = (await access.folders.ensureDefaultFolders(access.wallet)).filter(
        (b) => b.name === INBOX,
      );
      if (!inbox) throw new Error('no INBOX');
      this.uidValidity = inbox.uidValidity;
      this.drop = await access.folders.listReadable(access.wallet, inbox.id, access.readerId);
    } catch (err) {
      this.release();
      access.close();
      throw err;
    }
    this.access = access;
    this.state = 'transaction';
    this.log.info({ wallet: access.wallet, messages: this.drop.length }, 'POP3 login');
    await this.ok(`Logged in; ${this.drop.length} messages`);
  }

  /** The message a number names; refuses unknown and deleted ones. */
  private message(arg: string): { n: number; msg: ReadableMessage } {
    if (!/^[1-9]\d{0,9}$/.test(arg)) throw new Pop3Error('Expected a message number');
    const n = Number(arg);
    const msg = this.drop[n - 1];
    if (!msg) throw new Pop3Error('No such message');
    if (this.deleted.has(n)) throw new Pop3Error(`Message ${n} is deleted`);
    return { n, msg };
  }

  private get mail(): MailAccess {
    if (!this.access) throw new Pop3Error('Not logged in');
    return this.access;
  }

  private readonly transaction: Record<string, (arg: string) => Promise<void>> = {
    STAT: async (arg) => {
      if (arg) throw new Pop3Error('STAT takes no argument');
      let count = 0;
      let total = 0;
      for (const [i, msg] of this.drop.entries()) {
        if (this.deleted.has(i + 1)) continue;
        count++;
        total += await this.mail.rawSize(msg);
      }
      await this.ok(`${count} ${total}`);
    },
    LIST: async (arg) => {
      if (arg) {
        const { n, msg } = this.message(arg.trim());
        return this.ok(`${n} ${await this.mail.rawSize(msg)}`);
      }
      const lines: string[] = [];
      for (const [i, msg] of this.drop.entries()) {
        if (!this.deleted.has(i + 1)) lines.push(`${i + 1} ${await this.mail.rawSize(msg)}`);
      }
      await this.write(`+OK ${lines.length} messages\r\n${lines.map((l) => `${l}\r\n`).join('')}.\r\n`);
    },
    UIDL: async (arg) => {
      if (arg) {
        const { n, msg } = this.message(arg.trim());
        return this.ok(`${n} ${this.uidl(msg)}`);
      }
      const lines = this.drop.flatMap((msg, i) =>
        this.deleted.has(i + 1) ? [] : [`${i + 1} ${this.uidl(msg)}\r\n`],
      );
      await this.write(`+OK\r\n${lines.join('')}.\r\n`);
    },
    RETR: async (arg) => {
      const { msg } = this.message(arg.trim());
      const opened = await this.mail.open(msg);
      await this.ok(`${opened.raw.length} octets`);
      for (const piece of dotStuff(opened.raw)) await this.write(piece);
      await this.write('.\r\n');
    },
    TOP: async (arg) => {
      const [num, lines] = arg.trim().split(/\s+/);
      if (!lines || !/^\d{1,9}$/.test(lines))
        throw new Pop3Error('TOP needs a message number and a line count');
      const { msg } = this.message(num ?? '');
      const opened = await this.mail.open(msg);
      await this.ok('Top of message follows');
      for (const piece of dotStuff(topOf(opened.raw, Number(lines)))) await this.write(piece);
      await this.write('.\r\n');
    },
    DELE: async (arg) => {
      const { n } = this.message(arg.trim());
      this.deleted.add(n);
      await this.ok(`Message ${n} deleted`);
    },
    RSET: async () => {
      this.deleted.clear();
      await this.ok(`${this.drop.length} messages`);
    },
  };

  private uidl(msg: ReadableMessage): string {
    return `${this.uidValidity}.${msg.uid}`;
  }

  /** QUIT: in the transaction state, the UPDATE state removes what DELE marked. */
  private async quit(): Promise<void> {
    if (this.state !== 'transaction' || this.deleted.size === 0) {
      await this.ok('Sealpost POP3 signing off');
      this.close();
      return;
    }
    const access = this.mail;
    const ids = [...this.deleted].map((n) => (this.drop[n - 1] as ReadableMessage).id);
    try {
      // Read at QUIT, so a change of the setting during the session counts.
      const account = await new AccountsRepo(this.opts.mail.db).get(access.wallet);
      const closeOnChain = account?.pop3DeleClosesOnChain === true;
      const inbox = await access.folders.getMailbox(access.wallet, INBOX);
      const removed = inbox ? await access.folders.expunge(access.wallet, inbox.id, ids) : [];
      // Only with the holder's setting do the removed copies go to the
      // release hook (operator unpin, DeleteMail); the session's plaintext
      // goes when it closes below either way.
      if (closeOnChain) await access.removed(removed);
      this.log.info(
        { wallet: access.wallet, removed: removed.length, closeOnChain },
        'POP3 update removed messages',
      );
      await this.ok(`Sealpost POP3 signing off (${removed.length} messages deleted)`);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'POP3 update failed');
      await this.write('-ERR [SYS/TEMP] Some deleted messages were not removed\r\n');
    }
    this.close();
  }
}
