// A lean SMTP client for the pipeline-load rows: a pool of plain SMTP
// sessions that each send one message at a time, the commands one after
// another without PIPELINING (MAIL, RCPT, DATA, the bytes), as nodemailer
// does, so the server sees the same exchange. It exists because the load
// generator runs on the same cores as the stack it measures: nodemailer's
// streams and MIME machinery took 1.7–2.2 ms of CPU per message on a 2-core
// machine, more than the chain node, while this writes each command as one
// prepared string and reads replies line by line.
import { connect, type Socket } from 'node:net';

export interface SmtpLoadOptions {
  host: string;
  port: number;
  /** Sessions kept open; a message waits for a free one. */
  sessions: number;
  /** Name given in EHLO. */
  helo?: string;
  /** Bound on each reply (default 120 s). */
  replyTimeoutMs?: number;
}

/** The final reply of an SMTP exchange that was not the expected one. */
export class SmtpLoadError extends Error {
  constructor(
    readonly step: string,
    readonly reply: string,
  ) {
    super(`${step}: ${reply}`);
    this.name = 'SmtpLoadError';
  }
}

interface ReplyWaiter {
  resolve(reply: string): void;
  reject(err: Error): void;
}

/** One session: writes a command, resolves with its whole reply (all lines). */
class Session {
  private buffered = '';
  private lines: string[] = [];
  private waiter: ReplyWaiter | undefined;
  private failed: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.setEncoding('latin1');
    socket.setNoDelay(true);
    socket.on('data', (text: string) => this.onData(text));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the server closed the session')));
  }

  static async open(o: SmtpLoadOptions): Promise<Session> {
    const socket = connect(o.port, o.host);
    const session = new Session(socket, o.replyTimeoutMs ?? 120_000);
    await session.expect('greeting', null, 220);
    await session.expect('EHLO', `EHLO ${o.helo ?? 'load.example'}\r\n`, 250);
    return session;
  }

  private onData(text: string): void {
    this.buffered += text;
    for (;;) {
      const end = this.buffered.indexOf('\r\n');
      if (end < 0) return;
      const line = this.buffered.slice(0, end);
      this.buffered = this.buffered.slice(end + 2);
      this.lines.push(line);
      // "250-…" continues a reply, "250 …" ends it.
      if (line.length < 4 || line[3] !== '-') {
        const reply = this.lines.join('\n');
        this.lines = [];
        const w = this.waiter;
        this.waiter = undefined;
        w?.resolve(reply);
      }
    }
  }

  private fail(err: Error): void {
    this.failed ??= err;
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(err);
  }

  /** Writes `command` (null: only waits) and checks the reply's code. */
  async expect(step: string, command: string | null, code: number): Promise<string> {
    if (this.failed) throw this.failed;
    const reply = new Promise<string>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
    if (command !== null) this.socket.write(command);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${step}: no reply in ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    });
    try {
      const text = await Promise.race([reply, timeout]);
      if (!text.startsWith(String(code))) throw new SmtpLoadError(step, text);
      return text;
    } finally {
      clearTimeout(timer);
    }
  }

  get usable(): boolean {
    return !this.failed;
  }

  close(): void {
    if (!this.failed) this.socket.end('QUIT\r\n');
    this.socket.destroy();
  }
}

/** The message text as sent after DATA: CRLF lines, dot-stuffed, ending in CRLF.CRLF. */
export function dataBlock(message: string): string {
  const crlf = message.replace(/\r?\n/g, '\r\n');
  const stuffed = crlf.replace(/(^|\r\n)\./g, '$1..');
  return `${stuffed}${stuffed.endsWith('\r\n') ? '' : '\r\n'}.\r\n`;
}

interface SessionWaiter {
  resolve(s: Session): void;
  reject(err: Error): void;
}

/** A pool of sessions sending one message per call. */
export class SmtpLoad {
  private readonly idle: Session[] = [];
  private readonly queue: SessionWaiter[] = [];
  private opened = 0;
  private closed = false;

  constructor(private readonly o: SmtpLoadOptions) {}

  private async take(): Promise<Session> {
    const ready = this.idle.pop();
    if (ready) return ready;
    if (this.opened < this.o.sessions) {
      this.opened++;
      try {
        return await Session.open(this.o);
      } catch (err) {
        this.opened--;
        throw err;
      }
    }
    return new Promise<Session>((resolve, reject) => this.queue.push({ resolve, reject }));
  }

  private give(s: Session): void {
    if (!s.usable || this.closed) {
      this.discard(s);
      return;
    }
    const next = this.queue.shift();
    if (next) next.resolve(s);
    else this.idle.push(s);
  }

  /** Closes a session; a message waiting for one gets a new session in its place. */
  private discard(s: Session): void {
    s.close();
    this.opened--;
    const next = this.queue.shift();
    if (!next) return;
    if (this.closed) next.reject(new Error('the load client is closed'));
    else this.take().then(next.resolve, next.reject);
  }

  /** Sends one message; resolves with the server's final reply to the data (e.g. `250 2.0.0 Ok: queued as …`). */
  async send(from: string, to: string, message: string): Promise<string> {
    if (this.closed) throw new Error('the load client is closed');
    const s = await this.take();
    let reply: string;
    try {
      await s.expect('MAIL', `MAIL FROM:<${from}>\r\n`, 250);
      await s.expect('RCPT', `RCPT TO:<${to}>\r\n`, 250);
      await s.expect('DATA', 'DATA\r\n', 354);
      reply = (await s.expect('message', dataBlock(message), 250)).split('\n').pop() ?? '';
    } catch (err) {
      // Mid-transaction the session's state is unknown: it is closed, a new one replaces it.
      this.discard(s);
      throw err;
    }
    this.give(s);
    return reply;
  }

  close(): void {
    this.closed = true;
    for (const s of this.idle.splice(0)) s.close();
    for (const w of this.queue.splice(0)) w.reject(new Error('the load client is closed'));
  }
}
