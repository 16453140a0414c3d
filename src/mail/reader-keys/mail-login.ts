// Logging in to IMAP or POP3 with the mail password, and unlocking the
// account's reader key for the session. Failures are counted per client IP
// and per account under bucket `mail-login-fail` (src/core/limits/login-failures.ts):
// each failure answers later than the one before, and a full window refuses
// further attempts without checking the password until it ends.
import type { Redis } from 'ioredis';
import { type CredentialSealer, credentialAad } from '../../core/crypto/credential-seal.ts';
import { DEFAULT_LOGIN_BACKOFF, type LoginBackoff, LoginFailures } from '../../core/limits/login-failures.ts';
import type { AccountsRepo } from '../../core/store/accounts-repo.ts';
import { checkMailPasswordHash } from './mail-password.ts';
import { type ReaderKeyDeps, type UnlockedReaderKey, unlockForSession } from './reader-keys.ts';

export { DEFAULT_LOGIN_BACKOFF, type LoginBackoff };

export type MailLoginFailure = 'invalid' | 'locked' | 'temporary';

export class MailLoginError extends Error {
  constructor(
    readonly kind: MailLoginFailure,
    message: string,
    /** For `locked`: seconds until the window ends. */
    readonly retryAfterSecs?: number,
  ) {
    super(message);
    this.name = 'MailLoginError';
  }
}

export interface MailLoginDeps extends ReaderKeyDeps {
  accounts: AccountsRepo;
  sealer: CredentialSealer;
  redis: Redis;
  /** `[redis] prefix`. */
  prefix: string;
  /** The wallet a login name stands for (wallet, wallet@domain, alias@domain), or null. */
  walletOf: (login: string) => Promise<string | null>;
  backoff?: LoginBackoff;
  sleep?: (ms: number) => Promise<void>;
}

const BUCKET = 'mail-login-fail';

export class MailLogin {
  private readonly failures: LoginFailures;

  constructor(private readonly deps: MailLoginDeps) {
    this.failures = new LoginFailures(
      deps.redis,
      deps.prefix,
      BUCKET,
      deps.backoff ?? DEFAULT_LOGIN_BACKOFF,
      deps.sleep,
    );
  }

  private async passwordMatches(wallet: string, password: string): Promise<boolean> {
    const account = await this.deps.accounts.get(wallet);
    // A disabled account cannot read mail, whatever the password.
    if (!account || account.disabledAt !== null || !account.mailPasswordSealed) return false;
    const phc = this.deps.sealer.open(account.mailPasswordSealed, credentialAad('mail-password', wallet));
    return checkMailPasswordHash(password, phc);
  }

  /** The unlocked reader key of the account; throws MailLoginError otherwise. */
  async login(ip: string, login: string, password: string): Promise<UnlockedReaderKey> {
    let wallet: string | null;
    try {
      wallet = login.length > 0 && login.length <= 320 ? await this.deps.walletOf(login.trim()) : null;
    } catch {
      throw new MailLoginError('temporary', 'the login name could not be resolved now; try again later');
    }
    const result = await this.failures.attempt(ip, wallet, async () => {
      if (!wallet || !(await this.passwordMatches(wallet, password))) return null;
      return unlockForSession(this.deps, wallet, password, () => this.passwordMatches(wallet, password));
    });
    if (result.ok) return result.value;
    if (result.reason === 'locked') {
      const secs = result.retryAfterSecs;
      throw new MailLoginError('locked', `too many failed logins; try again in ${secs} seconds`, secs);
    }
    if (result.reason === 'temporary')
      throw new MailLoginError('temporary', 'authentication is unavailable now; try again later');
    throw new MailLoginError('invalid', 'invalid login name or password');
  }
}
