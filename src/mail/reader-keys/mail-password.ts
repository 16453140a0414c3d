// The mail password (IMAP, POP3, submission): stored as a scrypt hash in a
// PHC-style string, itself sealed under the credential key with associated
// data binding purpose and wallet. setMailPassword is the one setter, so
// later work (the IMAP reader key locked under the password) extends it here.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CredentialSealer } from '../../core/crypto/credential-seal.ts';
import { credentialAad } from '../../core/crypto/credential-seal.ts';
import type { AccountsRepo } from '../../core/store/accounts-repo.ts';
import type { Database } from '../../core/store/types.ts';
import { storeMailCredentials } from './reader-keys.ts';

export const MAIL_PASSWORD_MIN = 10;
export const MAIL_PASSWORD_MAX = 256;
const PURPOSE = 'mail-password';
// scrypt N = 2^15, r = 8, p = 1: about 32 MiB and tens of ms per check.
const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const MAXMEM = 64 * 1024 * 1024;

export interface MailPasswordDeps {
  accounts: AccountsRepo;
  sealer: CredentialSealer;
  /** The store, for the IMAP/POP reader key that setMailPassword locks (src/mail/reader-keys/); verifying needs none. */
  db?: Kysely<Database>;
}

/** setMailPassword was given an old password that is not the account's current one. */
export class MailPasswordMismatchError extends Error {
  constructor() {
    super('the old password does not match the current mail password');
    this.name = 'MailPasswordMismatchError';
  }
}

function scrypt(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(
      password.normalize('NFC'),
      salt,
      KEY_BYTES,
      { N: 2 ** logN, r, p, maxmem: MAXMEM },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

/** A problem with the password as given, or null when it is acceptable. */
export function mailPasswordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < MAIL_PASSWORD_MIN) return `password must be at least ${MAIL_PASSWORD_MIN} characters`;
  if (length > MAIL_PASSWORD_MAX) return `password must be at most ${MAIL_PASSWORD_MAX} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
  if (/[\u0000-\u001f\u007f]/.test(password)) return 'password must not contain control characters';
  return null;
}

/** `$scrypt$ln=15,r=8,p=1$<salt b64>$<hash b64>` */
export async function hashMailPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, LOG_N, R, P);
  return `$scrypt$ln=${LOG_N},r=${R},p=${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function checkMailPasswordHash(password: string, phc: string): Promise<boolean> {
  const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(phc);
  if (!m) return false;
  const expected = Buffer.from(m[5] as string, 'base64');
  const key = await scrypt(
    password,
    Buffer.from(m[4] as string, 'base64'),
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Sets the wallet's mail password; false when the wallet has no account.
 * In the same transaction the account's IMAP/POP reader key is created
 * (first time), re-locked under the new password (when `oldPassword` is the
 * current one: older mail stays readable over IMAP/POP), or replaced when no
 * old password is given (the reset path, docs/imap-pop3.md). A wrong
 * `oldPassword` throws MailPasswordMismatchError and changes nothing.
 */
export async function setMailPassword(
  deps: MailPasswordDeps,
  wallet: string,
  password: string,
  opts: { oldPassword?: string } = {},
): Promise<boolean> {
  const problem = mailPasswordProblem(password);
  if (problem) throw new RangeError(problem);
  if (!deps.db) throw new TypeError('setMailPassword needs deps.db to lock the IMAP/POP reader key');
  const account = await deps.accounts.get(wallet);
  if (!account) return false;
  let oldPassword: string | undefined;
  if (opts.oldPassword !== undefined && account.mailPasswordSealed) {
    if (!(await verifyMailPassword(deps, wallet, opts.oldPassword))) throw new MailPasswordMismatchError();
    oldPassword = opts.oldPassword;
  }
  const sealed = deps.sealer.seal(await hashMailPassword(password), credentialAad(PURPOSE, wallet));
  const stored = await storeMailCredentials({ db: deps.db, sealer: deps.sealer }, wallet, {
    sealedPasswordHash: sealed,
    password,
    oldPassword,
  });
  return stored.updated;
}

/** Whether the password matches the wallet's stored one (false when none is set). */
export async function verifyMailPassword(
  deps: MailPasswordDeps,
  wallet: string,
  password: string,
): Promise<boolean> {
  const account = await deps.accounts.get(wallet);
  if (!account?.mailPasswordSealed) return false;
  return checkMailPasswordHash(
    password,
    deps.sealer.open(account.mailPasswordSealed, credentialAad(PURPOSE, wallet)),
  );
}
