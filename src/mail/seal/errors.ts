/**
 * Every input the sealing code cannot use — a malformed, truncated or
 * tampered sealed object, a wrap or key of the wrong size, a key that no wrap
 * opens, an envelope that does not fit the format — ends in this one error
 * with a message that says what was wrong. Callers map it to their edge (an
 * SMTP reply, a CLI exit code, an HTTP status); it never means "try again".
 */
export class SealFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SealFormatError';
  }
}
