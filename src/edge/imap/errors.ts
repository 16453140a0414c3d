// A command's failure answer: NO (refused) or BAD (malformed or not allowed
// now), with an optional response code (RFC 5530), e.g. TRYCREATE.
export class ImapError extends Error {
  constructor(
    readonly status: 'NO' | 'BAD',
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ImapError';
  }
}
