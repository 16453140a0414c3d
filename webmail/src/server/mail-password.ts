// The server's rule for a mail password (src/mail/reader-keys/mail-password.ts: 10 to 256
// characters counted as code points, no control characters), checked in the
// page before the wallet is asked for a step-up signature, so a password the
// server would refuse never costs a signature.
export const MAIL_PASSWORD_MIN = 10;
export const MAIL_PASSWORD_MAX = 256;

/** What is wrong with a mail password, in a sentence; null when the server would take it. */
export function mailPasswordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < MAIL_PASSWORD_MIN) {
    return `The mail password must be at least ${MAIL_PASSWORD_MIN} characters (this one has ${length}). Nothing was signed or changed.`;
  }
  if (length > MAIL_PASSWORD_MAX) {
    return `The mail password must be at most ${MAIL_PASSWORD_MAX} characters (this one has ${length}). Nothing was signed or changed.`;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
  if (/[\u0000-\u001f\u007f]/.test(password)) {
    return 'The mail password must not contain control characters (tabs, line breaks). Nothing was signed or changed.';
  }
  return null;
}
