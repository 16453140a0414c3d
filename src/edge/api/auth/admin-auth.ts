// Admin authentication: `Authorization: Bearer <admin token>`, the token
// read at start from `[api] admin_token_file` and again at each reload
// (`sealpost reload`, SIGHUP; src/run/serve/reload.ts). Both sides are hashed
// before a constant-time compare, so neither length nor content leaks
// through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ApiError } from '../errors.ts';

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

export class AdminAuth {
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

  /** Throws a 401 ApiError unless the header carries the admin token. */
  check(authorization: string | undefined): void {
    if (this.expected === null) {
      throw new ApiError(
        401,
        'admin_auth_unavailable',
        'this server has no admin token file ([api] admin_token_file); create one with `sealpost admin token`, then `sealpost reload` (or restart)',
      );
    }
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    if (!match?.[1]) {
      throw new ApiError(401, 'admin_auth_required', 'send Authorization: Bearer <admin token>');
    }
    if (!timingSafeEqual(digest(match[1]), this.expected)) {
      throw new ApiError(401, 'admin_auth_failed', 'the admin token is not valid');
    }
  }
}
