// Byte-level checks of a message while it streams into the spool. The sealed
// body keeps the exact bytes, so what cannot be stored faithfully (or would
// mean different things to different parsers) is refused, never rewritten:
// bare CR or LF (RFC 5321 2.3.8; the root of SMTP smuggling), NUL octets,
// lines over 998 octets (RFC 5322 2.1.1) and an oversized header section.
// Malformed MIME is accepted as is: the body is opaque to the server.
import { SmtpReply } from '../../mail/smtp-error.ts';

export const MAX_LINE_OCTETS = 998;
export const DEFAULT_MAX_HEADER_BYTES = 256 * 1024;

export class MessageChecker {
  private prevCr = false;
  private lineLength = 0;
  private inHeader = true;
  private headerBytes = 0;
  /** Set once the blank line ending the header section has been seen. */
  private atLineStart = true;

  constructor(private readonly maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES) {}

  /** Throws an SmtpReply at the first violation. */
  check(chunk: Uint8Array): void {
    if (this.inHeader || !this.checkBody(chunk)) this.checkBytes(chunk);
  }

  /**
   * The body's fast path: native scans from line end to line end. Returns
   * false, with the state untouched, when the chunk holds anything that is
   * not a well-formed line (a NUL, a bare CR or LF, a long line), so that
   * checkBytes finds and reports the first violation.
   */
  private checkBody(chunk: Uint8Array): boolean {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const n = buf.length;
    if (buf.indexOf(0) >= 0) return false;
    let prevCr = this.prevCr;
    let lineLength = this.lineLength;
    let i = 0;
    if (prevCr && n > 0) {
      if (buf[0] !== 0x0a) return false;
      prevCr = false;
      lineLength = 0;
      i = 1;
    }
    while (i < n) {
      const cr = buf.indexOf(0x0d, i);
      const end = cr < 0 ? n : cr;
      const lf = buf.indexOf(0x0a, i);
      if (lf >= 0 && lf < end) return false;
      lineLength += end - i;
      if (lineLength > MAX_LINE_OCTETS) return false;
      if (cr < 0) break;
      if (cr + 1 === n) {
        prevCr = true;
        break;
      }
      if (buf[cr + 1] !== 0x0a) return false;
      lineLength = 0;
      i = cr + 2;
    }
    this.prevCr = prevCr;
    this.lineLength = lineLength;
    this.atLineStart = lineLength === 0 && !prevCr;
    return true;
  }

  /** Byte by byte: the header section, and any chunk checkBody gave back. */
  private checkBytes(chunk: Uint8Array): void {
    // The state lives in locals for the loop.
    let prevCr = this.prevCr;
    let lineLength = this.lineLength;
    let inHeader = this.inHeader;
    let headerBytes = this.headerBytes;
    let atLineStart = this.atLineStart;
    const maxHeaderBytes = this.maxHeaderBytes;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (inHeader && ++headerBytes > maxHeaderBytes) {
        throw new SmtpReply(552, '5.3.4', `Header section exceeds ${maxHeaderBytes} bytes`);
      }
      if (prevCr) {
        if (b !== 0x0a) throw bareLineEnding();
        prevCr = false;
        // End of a line: an empty line ends the header section.
        if (atLineStart) inHeader = false;
        atLineStart = true;
        lineLength = 0;
        continue;
      }
      if (b === 0x0d) {
        prevCr = true;
        continue;
      }
      if (b === 0x0a) throw bareLineEnding();
      if (b === 0x00)
        throw new SmtpReply(554, '5.6.0', 'Message contains NUL octets, which mail may not carry');
      atLineStart = false;
      if (++lineLength > MAX_LINE_OCTETS) {
        throw new SmtpReply(
          554,
          '5.6.0',
          `Message has a line longer than ${MAX_LINE_OCTETS} octets (RFC 5322 2.1.1)`,
        );
      }
    }
    this.prevCr = prevCr;
    this.lineLength = lineLength;
    this.inHeader = inHeader;
    this.headerBytes = headerBytes;
    this.atLineStart = atLineStart;
  }

  /** At end of data: a trailing lone CR is a bare line ending too. */
  finish(): void {
    if (this.prevCr) throw bareLineEnding();
  }
}

function bareLineEnding(): SmtpReply {
  return new SmtpReply(
    554,
    '5.6.11',
    'Message contains a bare CR or LF; lines must end in CRLF (RFC 5321 2.3.8)',
  );
}

/** Passes chunks through, checking each; stops with the checker's SmtpReply. */
export async function* checkedChunks(
  source: AsyncIterable<Uint8Array>,
  checker = new MessageChecker(),
): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    checker.check(chunk);
    yield chunk;
  }
  checker.finish();
}
