// One IMAP connection: reads commands (lines plus literals, with limits
// checked from the announced size before any literal byte is read), runs
// them one at a time, writes responses with backpressure, and keeps the
// session state. Commands live in ./commands/, one file each.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type SecureContext, TLSSocket } from 'node:tls';
import type { Logger } from '../../core/log.ts';
import type { MailLogin } from '../../mail/reader-keys/index.ts';
import { COMMANDS } from './commands/index.ts';
import { ImapError } from './errors.ts';
import { type MailAccess, type MailAccessDeps, MessageUnavailableError } from './mail/mail-access.ts';
import { Args } from './protocol/args.ts';
import { ByteReader, InputClosedError, LineTooLongError } from './protocol/byte-reader.ts';
import { type Piece, toBuffers } from './protocol/format.ts';
import { type CommandParts, ImapSyntaxError, tokenize } from './protocol/tokens.ts';
import type { IdlePush, IdleWakeCause, ImapPushMetrics, SharedRead } from './push.ts';
import type { SelectedMailbox } from './selected.ts';

export type SessionState = 'not-authenticated' | 'authenticated' | 'selected' | 'logout';

export interface ImapConnectionOptions {
  login: MailLogin;
  mail: MailAccessDeps;
  /** Largest APPEND literal. */
  maxAppendBytes: number;
  /** How often IDLE looks for new mail without push (with `push`, its interval in force). */
  idlePollMs: number;
  /** IDLE push (src/edge/imap/push.ts): wakes an IDLE session at once when its mailbox changes anywhere. */
  push?: IdlePush;
  /** Counts IDLE wake-ups by cause (`sealpost_imap_idle_wakeups_total`). */
  metrics?: Pick<ImapPushMetrics, 'idleWakeup'>;
  /** Autologout after this long without a command once logged in (RFC 3501: at least 30 minutes). */
  idleTimeoutMs: number;
  /** Before login. */
  preAuthTimeoutMs: number;
  /** Present on a plain listener that offers STARTTLS: the context current at the client's STARTTLS. */
  startTls?: () => SecureContext;
  logger: Logger;
}

const MAX_LINE = 256 * 1024;
/** Literals of commands other than APPEND (passwords, search strings, names). */
const MAX_SMALL_LITERAL = 64 * 1024;
/** Non-synchronizing literals over the limit are read and dropped up to this size, else the connection closes. */
const MAX_DISCARD = 64 * 1024 * 1024;
const MAX_BAD_COMMANDS = 20;
/** Bytes queued on the socket before a response waits for it to drain. */
const WRITE_QUEUE_LIMIT = 1024 * 1024;

export const CAPABILITIES = [
  'IMAP4rev1',
  'LITERAL+',
  'SASL-IR',
  'ID',
  'IDLE',
  'NAMESPACE',
  'UIDPLUS',
  'MOVE',
  'SPECIAL-USE',
  'UNSELECT',
  'CHILDREN',
  'ENABLE',
  'CONDSTORE',
];

export class ImapConnection {
  state: SessionState = 'not-authenticated';
  mail: MailAccess | undefined;
  selected: SelectedMailbox | undefined;
  /** RFC 7162: once enabled, FETCH responses about flag changes carry MODSEQ. */
  condstore = false;
  loginFailures = 0;
  readonly remoteIp: string;
  readonly log: Logger;
  private socket: Duplex;
  private readonly reader = new ByteReader();
  private badCommands = 0;
  private closed = false;
  private secure: boolean;

  constructor(
    raw: Socket | TLSSocket,
    readonly opts: ImapConnectionOptions,
    secure: boolean,
  ) {
    this.socket = raw;
    this.secure = secure;
    this.remoteIp = raw.remoteAddress ?? 'unknown';
    this.log = opts.logger.child({ component: 'imap', ip: this.remoteIp });
    this.reader.attach(raw);
    raw.setTimeout(opts.preAuthTimeoutMs, () => this.autologout());
  }

  get isSecure(): boolean {
    return this.secure;
  }

  get canStartTls(): boolean {
    return !this.secure && this.opts.startTls !== undefined;
  }

  /** Turns CONDSTORE on for the rest of the session (ENABLE, or a CONDSTORE-enabling command). */
  enableCondstore(): void {
    this.condstore = true;
  }

  capabilities(): string[] {
    const caps = [...CAPABILITIES];
    if (this.canStartTls) caps.push('STARTTLS');
    if (!this.secure) caps.push('LOGINDISABLED');
    else if (this.state === 'not-authenticated') caps.push('AUTH=PLAIN');
    return caps;
  }

  /** Writes one response line (pieces may carry literals); resolves once the socket takes it. */
  async send(pieces: Piece[]): Promise<void> {
    if (this.closed) return;
    const bufs = toBuffers([...pieces, '\r\n']);
    for (const b of bufs) this.socket.write(b);
    // Wait for the socket only once a good amount is queued: waiting after
    // every message would make a FETCH of many small messages latency-bound.
    if (this.socket.writableLength > WRITE_QUEUE_LIMIT && !this.closed) {
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

  async sendAll(lines: Piece[][]): Promise<void> {
    for (const l of lines) await this.send(l);
  }

  /** Reads one line from the client (AUTHENTICATE responses, IDLE's DONE). */
  readLine(max = MAX_LINE): Promise<Buffer> {
    return this.reader.readLine(max);
  }

  /**
   * Reads a line while `onTick` runs (IDLE): `everyMs()` after its last run
   * (the poll), and whenever the `wake` that `watch` is handed is called
   * (push). Runs never overlap; wake-ups during a run make one more run
   * after it, so a burst costs at most two. `rearm` restarts the poll timer
   * (its interval changed). A push wake-up may bring the reads it shares
   * with the other sessions it woke.
   */
  async readLineWhile(
    everyMs: () => number,
    onTick: (cause: IdleWakeCause, shared?: SharedRead) => Promise<void>,
    watch?: (wake: (cause: IdleWakeCause, shared?: SharedRead) => void, rearm: () => void) => () => void,
  ): Promise<Buffer> {
    type Wake = { cause: IdleWakeCause; shared?: SharedRead };
    let done = false;
    let running = false;
    let again: Wake | null = null;
    let current: Promise<void> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      if (!done) timer = setTimeout(() => wake('poll'), everyMs());
    };
    const wake = (cause: IdleWakeCause, shared?: SharedRead) => {
      if (done) return;
      if (running) {
        again ??= { cause, shared };
        return;
      }
      running = true;
      current = (async () => {
        let next: Wake | null = { cause, shared };
        while (next !== null && !done) {
          again = null;
          arm();
          await onTick(next.cause, next.shared).catch((err: Error) =>
            this.log.warn({ err: err.message }, 'IDLE check failed'),
          );
          next = again;
        }
        running = false;
      })();
    };
    arm();
    const unwatch = watch?.(wake, arm);
    try {
      return await this.reader.readLine(MAX_LINE);
    } finally {
      done = true;
      clearTimeout(timer);
      unwatch?.();
      await current;
    }
  }

  /** Logged in: longer timeout. */
  authenticated(mail: MailAccess): void {
    this.mail = mail;
    this.state = 'authenticated';
    (this.socket as Socket).setTimeout(this.opts.idleTimeoutMs);
  }

  /** Swaps the socket for a TLS one (STARTTLS); bytes sent before the handshake are dropped. */
  async upgradeTls(): Promise<void> {
    const context = this.opts.startTls?.();
    if (!context) throw new ImapError('BAD', 'STARTTLS is not offered here');
    this.reader.detach();
    const plain = this.socket as Socket;
    plain.setTimeout(0);
    const tls = new TLSSocket(plain, { isServer: true, secureContext: context });
    await new Promise<void>((resolve, reject) => {
      tls.once('secure', resolve);
      tls.once('error', reject);
    });
    this.socket = tls;
    this.secure = true;
    this.reader.attach(tls);
    tls.setTimeout(this.opts.preAuthTimeoutMs, () => this.autologout());
    tls.on('error', () => this.destroy());
  }

  private autologout(): void {
    this.send(['* BYE Autologout; idle for too long'])
      .catch(() => {})
      .finally(() => this.end());
  }

  /** Tells the client goodbye (server shutdown) and closes. */
  async shutdown(): Promise<void> {
    await this.send(['* BYE Server shutting down']).catch(() => {});
    this.end();
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.state = 'logout';
    this.mail?.close();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 2000).unref();
  }

  destroy(): void {
    this.closed = true;
    this.mail?.close();
    this.socket.destroy();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async run(): Promise<void> {
    await this.send([`* OK [CAPABILITY ${this.capabilities().join(' ')}] Sealpost IMAP4rev1 ready`]);
    try {
      while (!this.closed) {
        const parts = await this.readCommand();
        if (parts) await this.dispatch(parts);
      }
    } catch (err) {
      if (err instanceof LineTooLongError) {
        await this.send(['* BYE Line too long']).catch(() => {});
      } else if (!(err instanceof InputClosedError)) {
        this.log.error({ err: (err as Error).message }, 'IMAP connection failed');
        await this.send(['* BYE Internal error']).catch(() => {});
      }
    } finally {
      this.end();
    }
  }

  /** One command's lines and literals, or null when it was refused while reading (already answered). */
  private async readCommand(): Promise<CommandParts | null> {
    let line = await this.reader.readLine(MAX_LINE);
    const head = /^(\S+) +(?:UID +)?(\S+)/i.exec(line.toString('latin1'));
    const tag = head?.[1] ?? '*';
    const isAppend = (head?.[2] ?? '').toUpperCase() === 'APPEND';
    const parts: CommandParts = { text: [line], literals: [] };
    let total = line.length;
    let refused: Piece[] | undefined;
    for (;;) {
      const m = /\{(\d+)(\+?)\}$/.exec(line.toString('latin1'));
      if (!m) break;
      const nonSync = m[2] === '+';
      const size = Number(m[1]);
      const limit = isAppend ? this.opts.maxAppendBytes : MAX_SMALL_LITERAL;
      if (!Number.isSafeInteger(size) || size > 0xffffffff) {
        await this.send(['* BYE Literal size out of range']);
        this.end();
        return null;
      }
      if (refused || size > limit || (!isAppend && total + size > MAX_LINE)) {
        refused ??= isAppend
          ? [`${tag} NO [TOOBIG] Message larger than ${limit} bytes`]
          : [`${tag} BAD Literal too large`];
        if (!nonSync) {
          // The client sends nothing more of this command after a refusal.
          await this.send(refused);
          this.noteBad();
          return null;
        }
        if (size > MAX_DISCARD) {
          await this.send(['* BYE Literal too large']);
          this.end();
          return null;
        }
        await this.reader.readBytes(size, () => {});
        line = await this.reader.readLine(MAX_LINE);
        continue;
      }
      if (!nonSync) await this.send(['+ Ready for literal data']);
      const pieces: Buffer[] = [];
      await this.reader.readBytes(size, (p) => pieces.push(p));
      parts.literals.push(Buffer.concat(pieces, size));
      total += size;
      line = await this.reader.readLine(MAX_LINE);
      total += line.length;
      parts.text.push(line);
    }
    if (refused) {
      await this.send(refused);
      this.noteBad();
      return null;
    }
    return parts;
  }

  private noteBad(): void {
    if (++this.badCommands >= MAX_BAD_COMMANDS) {
      this.send(['* BYE Too many invalid commands'])
        .catch(() => {})
        .finally(() => this.end());
    }
  }

  private async dispatch(parts: CommandParts): Promise<void> {
    let tokens: ReturnType<typeof tokenize>;
    const first = parts.text[0]?.toString('latin1') ?? '';
    const tagMatch = /^([^\s(){%*"\\+]+)(?: |$)/.exec(first);
    if (!tagMatch) {
      await this.send(['* BAD Missing or invalid tag']);
      this.noteBad();
      return;
    }
    const tag = tagMatch[1] as string;
    try {
      tokens = tokenize(parts);
    } catch (err) {
      await this.send([`${tag} BAD ${(err as Error).message}`]);
      this.noteBad();
      return;
    }
    const args = new Args(tokens.slice(1));
    let name = '';
    let uid = false;
    try {
      name = args.atom('command').toUpperCase();
      if (name === 'UID') {
        uid = true;
        name = args.atom('UID command').toUpperCase();
      }
    } catch {
      await this.send([`${tag} BAD Missing command`]);
      this.noteBad();
      return;
    }
    const command = COMMANDS.get(name);
    if (!command || (uid && !command.uid)) {
      await this.send([`${tag} BAD Unknown command ${name.replace(/[^\x21-\x7e]/g, '').slice(0, 32)}`]);
      this.noteBad();
      return;
    }
    if (!command.states.includes(this.state)) {
      await this.send([`${tag} BAD ${name} is not valid in this state`]);
      this.noteBad();
      return;
    }
    try {
      const result = await command.handle({ conn: this, tag, name, uid }, args);
      this.badCommands = 0;
      if (result !== 'done') {
        const code = result?.code ? `[${result.code}] ` : '';
        await this.send([`${tag} OK ${code}${result?.text ?? `${uid ? 'UID ' : ''}${name} completed`}`]);
      }
    } catch (err) {
      if (err instanceof ImapSyntaxError) {
        await this.send([`${tag} BAD ${err.message}`]);
        this.noteBad();
      } else if (err instanceof ImapError) {
        const code = err.code ? `[${err.code}] ` : '';
        await this.send([`${tag} ${err.status} ${code}${err.message}`]);
        if (err.status === 'BAD') this.noteBad();
      } else if (err instanceof MessageUnavailableError) {
        this.log.error({ err: err.message }, 'a message could not be opened');
        await this.send([`${tag} NO [SERVERBUG] A message could not be opened`]);
      } else if (err instanceof InputClosedError || err instanceof LineTooLongError) {
        throw err;
      } else {
        this.log.error({ err: (err as Error).message, command: name }, 'IMAP command failed');
        await this.send([`${tag} NO [SERVERBUG] Internal error, try again later`]);
      }
    }
  }
}
