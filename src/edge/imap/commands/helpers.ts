// Pieces several commands share: mailbox name arguments, the selected
// mailbox, flag lists, logging in.

import { type Mailbox, normalizeFolderName } from '../../../core/store/index.ts';
import { MailLoginError } from '../../../mail/reader-keys/index.ts';
import type { ImapConnection } from '../connection.ts';
import { ImapError } from '../errors.ts';
import { MailAccess } from '../mail/mail-access.ts';
import type { Args } from '../protocol/args.ts';
import { decodeMutf7 } from '../protocol/mutf7.ts';
import { ImapSyntaxError, type Token } from '../protocol/tokens.ts';
import type { SelectedMailbox } from '../selected.ts';
import type { CommandContext, CommandResult } from './types.ts';

const MAX_LOGIN_FAILURES = 3;

/** A mailbox name argument: modified UTF-7 decoded, INBOX case-folded. */
export function mailboxArg(args: Args, what = 'mailbox name'): string {
  const bytes = args.astring(what);
  if (bytes.length > 1000) throw new ImapSyntaxError('mailbox name too long');
  return normalizeFolderName(decodeMutf7(bytes.toString('utf8')));
}

export function mail(conn: ImapConnection): MailAccess {
  if (!conn.mail) throw new ImapError('BAD', 'not logged in');
  return conn.mail;
}

export function selected(conn: ImapConnection): SelectedMailbox {
  if (!conn.selected) throw new ImapError('BAD', 'no mailbox selected');
  return conn.selected;
}

export async function existingMailbox(conn: ImapConnection, name: string): Promise<Mailbox> {
  const m = mail(conn);
  const box = await m.folders.getMailbox(m.wallet, name);
  if (!box) throw new ImapError('NO', 'No such mailbox', 'TRYCREATE');
  return box;
}

const SYSTEM_FLAGS = ['\\Answered', '\\Flagged', '\\Deleted', '\\Seen', '\\Draft'];
const MAX_FLAGS = 64;

/** A flag list (or a single flag) as stored: system flags in canonical case, keywords validated. */
export function parseFlags(tokens: Token[]): string[] {
  if (tokens.length > MAX_FLAGS) throw new ImapSyntaxError(`at most ${MAX_FLAGS} flags`);
  const out = new Set<string>();
  for (const t of tokens) {
    if (t.t !== 'atom') throw new ImapSyntaxError('flags must be atoms');
    if (t.v.startsWith('\\')) {
      const sys = SYSTEM_FLAGS.find((f) => f.toLowerCase() === t.v.toLowerCase());
      if (!sys) throw new ImapSyntaxError(`${t.v.slice(0, 32)} cannot be set`);
      out.add(sys);
    } else {
      if (t.v.length > 64 || !/^[\x21-\x7e]+$/.test(t.v) || /[\]%*"(){}\\]/.test(t.v)) {
        throw new ImapSyntaxError('invalid keyword');
      }
      out.add(t.v);
    }
  }
  return [...out];
}

/** Logs in with the mail password and unlocks the reader key for this session. */
export async function completeLogin(
  ctx: CommandContext,
  login: string,
  password: string,
): Promise<CommandResult> {
  const conn = ctx.conn;
  if (!conn.isSecure) throw new ImapError('NO', 'Log in only under TLS (use STARTTLS)', 'PRIVACYREQUIRED');
  try {
    const reader = await conn.opts.login.login(conn.remoteIp, login, password);
    const access = new MailAccess(conn.opts.mail, reader);
    try {
      await access.folders.ensureDefaultFolders(reader.wallet);
    } catch (err) {
      access.close();
      throw err;
    }
    conn.authenticated(access);
    conn.log.info({ wallet: reader.wallet }, 'IMAP login');
    return { code: `CAPABILITY ${conn.capabilities().join(' ')}`, text: 'Logged in' };
  } catch (err) {
    if (!(err instanceof MailLoginError)) throw err;
    if (err.kind === 'temporary') throw new ImapError('NO', err.message, 'UNAVAILABLE');
    const text = err.kind === 'locked' ? err.message : 'Invalid credentials';
    if (++conn.loginFailures >= MAX_LOGIN_FAILURES) {
      await conn.send([`${ctx.tag} NO [AUTHENTICATIONFAILED] ${text}`]);
      await conn.send(['* BYE Too many failed logins']);
      conn.end();
      return 'done';
    }
    throw new ImapError('NO', text, 'AUTHENTICATIONFAILED');
  }
}
