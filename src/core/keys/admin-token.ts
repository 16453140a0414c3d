// The admin token: read from `[api] admin_token_file` at start and again at
// each reload (`sealpost reload`, SIGHUP; src/run/serve/reload.ts), and a
// bearer header checked against it. Both sides are hashed before a
// constant-time compare, so neither length nor content leaks through timing.
// The listeners that take it (the API's admin routes, /metrics) turn a
// verdict into their own error (src/edge/api/auth/admin-auth.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Reads the token file; null when it does not exist (admin routes then refuse everyone). */
export function readAdminTokenFile(path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`admin token file ${path} is unreadable: ${(err as Error).message}`);
  }
  const token = text.trim();
  if (token.length < 16) {
    throw new Error(
      `admin token file ${path} holds ${token.length} characters; expected at least 16. ` +
        'Create one with `sealpost admin token`.',
    );
  }
  return token;
}

/** What a request's Authorization header is worth: the token, none configured, none sent, or a wrong one. */
export type AdminVerdict = 'ok' | 'unavailable' | 'required' | 'failed';

export class AdminToken {
  private expected: Buffer | null;

  constructor(token: string | null) {
    this.expected = token === null ? null : digest(token);
  }

  /** A reload: from the next request on only `token` is accepted (null: nobody). Returns whether it changed. */
  replace(token: string | null): boolean {
    const next = token === null ? null : digest(token);
    const same =
      next === null || this.expected === null ? next === this.expected : timingSafeEqual(next, this.expected);
    this.expected = next;
    return !same;
  }

  /** Checks `Authorization: Bearer <admin token>`. */
  verify(authorization: string | undefined): AdminVerdict {
    if (this.expected === null) return 'unavailable';
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    if (!match?.[1]) return 'required';
    return timingSafeEqual(digest(match[1]), this.expected) ? 'ok' : 'failed';
  }
}
