// Pull-style reading from a socket: whole lines (bounded length) and exact
// byte counts, with backpressure (the socket is paused while unread data
// piles up). A reader can be detached from one stream and attached to
// another — STARTTLS swaps the plain socket for the TLS one, and whatever
// the client sent after the STARTTLS line is dropped (RFC 3207 §4.2 /
// RFC 2595 §3.1: it arrived unprotected). Used by IMAP and POP3.
import type { Duplex } from 'node:stream';

export class InputClosedError extends Error {
  constructor() {
    super('the connection closed');
    this.name = 'InputClosedError';
  }
}

export class LineTooLongError extends Error {
  constructor(readonly limit: number) {
    super(`line longer than ${limit} bytes`);
    this.name = 'LineTooLongError';
  }
}

const HIGH_WATER = 256 * 1024;

export class ByteReader {
  private buf: Buffer = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  private ended = false;
  private stream: Duplex | undefined;
  private paused = false;
  private readonly onData = (chunk: Buffer) => {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (this.buf.length > HIGH_WATER && this.stream && !this.paused) {
      this.paused = true;
      this.stream.pause();
    }
    this.wake();
  };
  private readonly onEnd = () => {
    this.ended = true;
    this.wake();
  };

  attach(stream: Duplex): void {
    this.stream = stream;
    this.ended = false;
    this.paused = false;
    stream.on('data', this.onData);
    stream.on('end', this.onEnd);
    stream.on('close', this.onEnd);
    stream.on('error', this.onEnd);
  }

  /** Stops reading from the current stream and drops anything unread. */
  detach(): void {
    const s = this.stream;
    if (s) {
      s.off('data', this.onData);
      s.off('end', this.onEnd);
      s.off('close', this.onEnd);
      s.off('error', this.onEnd);
      s.pause();
    }
    this.stream = undefined;
    this.buf = Buffer.alloc(0);
  }

  /** Whether the client has sent bytes that were not read yet. */
  get buffered(): number {
    return this.buf.length;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private async more(): Promise<void> {
    if (this.ended) throw new InputClosedError();
    if (this.paused && this.stream) {
      this.paused = false;
      this.stream.resume();
    }
    await new Promise<void>((resolve) => {
      this.waiter = resolve;
    });
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    if (this.paused && this.buf.length < HIGH_WATER / 2 && this.stream) {
      this.paused = false;
      this.stream.resume();
    }
    return out;
  }

  /** The next line without its CRLF (a bare LF is accepted too). */
  async readLine(maxBytes: number): Promise<Buffer> {
    let searched = 0;
    for (;;) {
      const nl = this.buf.indexOf(0x0a, searched);
      if (nl >= 0) {
        if (nl > maxBytes + 1) throw new LineTooLongError(maxBytes);
        const line = this.take(nl + 1);
        const end = line.length >= 2 && line[line.length - 2] === 0x0d ? line.length - 2 : line.length - 1;
        return Buffer.from(line.subarray(0, end));
      }
      if (this.buf.length > maxBytes + 1) throw new LineTooLongError(maxBytes);
      searched = this.buf.length;
      await this.more();
    }
  }

  /** Exactly `n` bytes, handed to `sink` piece by piece as they arrive (never gathered here). */
  async readBytes(n: number, sink: (piece: Buffer) => void): Promise<void> {
    let left = n;
    while (left > 0) {
      if (this.buf.length === 0) await this.more();
      const piece = this.take(Math.min(left, this.buf.length));
      left -= piece.length;
      if (piece.length > 0) sink(Buffer.from(piece));
    }
  }
}
