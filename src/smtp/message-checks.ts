// Byte-level checks of a message while it streams into the spool. The sealed
// body keeps the exact bytes, so what cannot be stored faithfully (or would
// mean different things to different parsers) is refused, never rewritten:
// bare CR or LF (RFC 5321 2.3.8; the root of SMTP smuggling), NUL octets,
// lines over 998 octets (RFC 5322 2.1.1) and an oversized header section.
// Malformed MIME is accepted as is: the body is opaque to the server.
import { SmtpReply } from './smtp-error.ts';

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
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (this.inHeader) {
        this.headerBytes++;
        if (this.headerBytes > this.maxHeaderBytes) {
          throw new SmtpReply(552, '5.3.4', `Header section exceeds ${this.maxHeaderBytes} bytes`);
        }
      }
      if (this.prevCr) {
        if (b !== 0x0a) throw bareLineEnding();
        this.prevCr = false;
        // End of a line: an empty line ends the header section.
        if (this.inHeader && this.atLineStart) this.inHeader = false;
        this.atLineStart = true;
        this.lineLength = 0;
        continue;
      }
      if (b === 0x0d) {
        this.prevCr = true;
        continue;
      }
      if (b === 0x0a) throw bareLineEnding();
      if (b === 0x00)
        throw new SmtpReply(554, '5.6.0', 'Message contains NUL octets, which mail may not carry');
      this.atLineStart = false;
      this.lineLength++;
      if (this.lineLength > MAX_LINE_OCTETS) {
        throw new SmtpReply(
          554,
          '5.6.0',
          `Message has a line longer than ${MAX_LINE_OCTETS} octets (RFC 5322 2.1.1)`,
        );
      }
    }
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
