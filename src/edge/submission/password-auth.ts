// AUTH PLAIN / LOGIN against the account's mail password, with back-off on
// repeated failures. Failures are counted per client IP and per account under
// bucket `smtp-auth-fail` (src/core/limits/login-failures.ts): each failure answers
// later than the one before, and a full window refuses further attempts (454)
// without checking the password at all until it ends.
//
// Login names: the bare wallet address, `<wallet>@<local domain>`, or
// `<alias>@<local domain>` (what autoconfig's %EMAILADDRESS% gives a client).
import type { Redis } from 'ioredis';
import { isBase58Key } from '../../../chain/client/index.ts';
import { DEFAULT_LOGIN_BACKOFF, type LoginBackoff, LoginFailures } from '../../core/limits/login-failures.ts';
import type { ChainView } from '../../mail/chain-view.ts';
import { type MailPasswordDeps, verifyMailPassword } from '../../mail/reader-keys/mail-password.ts';
import type { RecipientPolicy } from '../../mail/recipients.ts';
import { SmtpReply } from '../../mail/smtp-error.ts';
import { walletOfLocalAddress } from './sender.ts';

/** Back-off of failed AUTH attempts; the same shape as the IMAP/POP3 login's. */
export type AuthBackoff = LoginBackoff;
export const DEFAULT_AUTH_BACKOFF: AuthBackoff = DEFAULT_LOGIN_BACKOFF;

export interface PasswordAuthDeps {
  password: MailPasswordDeps;
  policy: RecipientPolicy;
  chain: ChainView;
  redis: Redis;
  prefix: string;
  backoff?: AuthBackoff;
  sleep?: (ms: number) => Promise<void>;
}

const BUCKET = 'smtp-auth-fail';

export const authReplies = {
  invalid: () => new SmtpReply(535, '5.7.8', 'Authentication credentials invalid'),
  locked: (secs: number) =>
    new SmtpReply(454, '4.7.0', `Too many failed authentication attempts, try again in ${secs} seconds`),
  temporary: () => new SmtpReply(454, '4.7.0', 'Temporary authentication failure, try again later'),
};

/** The wallet a login name stands for, or null. */
export async function walletOfLogin(
  login: string,
  policy: RecipientPolicy,
  chain: ChainView,
): Promise<string | null> {
  const name = login.trim();
  if (isBase58Key(name)) return name;
  return walletOfLocalAddress(name, policy, chain);
}

export class PasswordAuth {
  private readonly failures: LoginFailures;

  constructor(private readonly deps: PasswordAuthDeps) {
    this.failures = new LoginFailures(
      deps.redis,
      deps.prefix,
      BUCKET,
      deps.backoff ?? DEFAULT_AUTH_BACKOFF,
      deps.sleep,
    );
  }

  /** The wallet on success; throws the SmtpReply to answer otherwise. */
  async verify(ip: string, login: string, password: string): Promise<string> {
    let wallet: string | null;
    try {
      wallet = await walletOfLogin(login, this.deps.policy, this.deps.chain);
    } catch {
      throw authReplies.temporary();
    }
    const result = await this.failures.attempt(ip, wallet, async () => {
      if (!wallet) return null;
      // A disabled account cannot send, whatever the password.
      const account = await this.deps.password.accounts.get(wallet);
      const ok =
        account !== undefined &&
        account.disabledAt === null &&
        (await verifyMailPassword(this.deps.password, wallet, password));
      return ok ? wallet : null;
    });
    if (result.ok) return result.value;
    if (result.reason === 'locked') throw authReplies.locked(result.retryAfterSecs);
    if (result.reason === 'temporary') throw authReplies.temporary();
    throw authReplies.invalid();
  }
}
