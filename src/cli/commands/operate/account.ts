// `sealpost account`: a wallet holder's own account on a deployment, through
// its account API, with the wallet key used only locally to sign the login
// and step-up nonces (as `sealpost mailbox sign-text` and the webmail's
// in-page wallet do). `password` sets the mail password for IMAP, POP3 and
// submission; `create` makes the account (open registration); `rewrap`
// (./account-rewrap.ts, run where the store is) makes earlier mail readable
// over IMAP/POP3.
import type { Command } from 'commander';
import { type Keypair, KeypairFileError, readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { CliError, CONFIG_OPTION_HELP, EXIT_USAGE, loadCliConfig } from '../../common.ts';
import { AccountApi, apiBaseUrl } from './account-api.ts';
import { promptHidden, readStdinLines } from './account-input.ts';
import { registerRewrap } from './account-rewrap.ts';

interface AccountOptions {
  key: string;
  config?: string;
  api?: string;
}

interface PasswordOptions extends AccountOptions {
  reset?: boolean;
}

const API_RULE = `
The account API is --api URL when given; else [api] public_url of the config
(the address the deployment publishes for holders); else http://HOST:PORT
from [api] host and port, a wildcard host (0.0.0.0, ::) meaning loopback —
right on the server itself and for \`sealpost dev\`. The config is --config
FILE, else $SEALPOST_CONFIG, else ./sealpost.toml, else ./.data/sealpost.toml
(what \`sealpost dev\` writes), else the built-in defaults (http://127.0.0.1:8080). The command says which URL it uses.`;

const PASSWORD_HELP = `
The new password is read from stdin when stdin is not a terminal: one line
(the new password), or two lines (the current password, then the new one)
when the account has a password already. On a terminal it is asked for
without echo (the current one first when one is set, the new one twice).
Never on the command line, where ps and shell history would show it.

Changing a password keeps the IMAP/POP3 reader key (mail delivered so far
stays readable there) and needs the current password. --reset replaces the
password without it: a new reader key is made, and mail delivered before
the reset no longer shows over IMAP/POP3 (it stays readable with the wallet:
webmail, \`sealpost mailbox read\`; \`sealpost account rewrap\` brings it back).
${API_RULE}

The wallet key signs the login and step-up nonces here; it is never sent.
Exit status: 0 set; 1 the key file is unusable, the wallet has no account,
the API refused the password (its message is shown), or the API cannot be
reached — nothing is changed in any of these; 2 usage or config errors.

Examples:
  $ printf '%s\\n' 'a long mail password' | sealpost account password --key wallet.json
  $ sealpost account password --key wallet.json --config /etc/sealpost/sealpost.toml
  $ printf '%s\\n%s\\n' "$OLD" "$NEW" | sealpost account password --key wallet.json --api https://mail.example.org`;

function readKey(path: string): Keypair {
  try {
    return readKeypairFile(path);
  } catch (err) {
    if (err instanceof KeypairFileError) throw new CliError(`${err.message}; nothing was changed`);
    throw err;
  }
}

function noAccount(key: Keypair, keyFile: string, url: string): CliError {
  return new CliError(
    `wallet ${key.address} has no account at ${url}: create it with \`sealpost account create --key ${keyFile}\` ` +
      `(when the deployment allows open registration), or ask the operator to run \`sealpost admin account create ${key.address}\` ` +
      '(the first mail delivered to the wallet also creates it); nothing was changed',
  );
}

async function connect(
  opts: AccountOptions,
): Promise<{ key: Keypair; api: AccountApi; domain: string | null }> {
  // The key first: a bad key file fails before anything is read or sent.
  const key = readKey(opts.key);
  const { config, configFile } = loadCliConfig(opts);
  const target = apiBaseUrl(config, opts.api);
  process.stderr.write(`account API ${target.url} (${target.source})\n`);
  const domain = configFile !== null ? (config.smtp.local_domains[0] ?? null) : null;
  return { key, api: new AccountApi(target, key), domain };
}

async function passwords(opts: PasswordOptions): Promise<{ current?: string; next?: string } | null> {
  if (process.stdin.isTTY) return null; // asked later, once we know whether a password is set
  const lines = await readStdinLines();
  if (lines.length === 0 || lines.every((l) => l === ''))
    throw new CliError('no password on stdin; nothing was changed', EXIT_USAGE);
  if (lines.length > 2)
    throw new CliError(
      `${lines.length} lines on stdin; expected one (the new password) or two (the current one, then the new one)`,
      EXIT_USAGE,
    );
  if (lines.length === 2) {
    if (opts.reset)
      throw new CliError('--reset takes no current password: give only the new one on stdin', EXIT_USAGE);
    return { current: lines[0], next: lines[1] };
  }
  return { next: lines[0] };
}

async function setPassword(opts: PasswordOptions): Promise<void> {
  const { key, api, domain } = await connect(opts);
  const given = await passwords(opts);
  await api.login();
  const me = await api.request('GET', '/v1/account');
  if (me.status === 404) throw noAccount(key, opts.key, api.target.url);
  if (me.status !== 200) AccountApi.refuse(me, 'reading the account');
  const hasPassword = me.body?.account?.mail_password_set === true;

  let current = given?.current;
  let next = given?.next;
  if (given === null) {
    if (hasPassword && !opts.reset) current = await promptHidden('current mail password: ');
    next = await promptHidden('new mail password: ');
    if ((await promptHidden('new mail password again: ')) !== next)
      throw new CliError('the two entries differ; nothing was changed', EXIT_USAGE);
  }
  if (next === undefined || next === '')
    throw new CliError('the new password is empty; nothing was changed', EXIT_USAGE);
  if (!hasPassword && current !== undefined) {
    process.stderr.write(
      'note: the account has no mail password yet; the first line (a current password) is not needed\n',
    );
    current = undefined;
  }
  if (hasPassword && current === undefined && !opts.reset) {
    throw new CliError(
      `wallet ${key.address} has a mail password already: give the current one too (two lines on stdin: current, then new), ` +
        'or --reset to replace it without (mail delivered before then no longer shows over IMAP/POP3); nothing was changed',
      EXIT_USAGE,
    );
  }

  const proof = await api.stepUp();
  const put = await api.request('PUT', '/v1/account/mail-password', {
    json: current === undefined ? { password: next } : { password: next, old_password: current },
    headers: proof,
  });
  if (put.status !== 204) AccountApi.refuse(put, 'the new mail password');
  const action = !hasPassword ? 'set' : opts.reset ? 'reset' : 'changed';
  process.stdout.write(`mail password ${action} for ${key.address}\n`);
  process.stderr.write(
    `log in to IMAP, POP3 and submission as ${domain ? `${key.address}@${domain}` : `${key.address}@<your mail domain>`} ` +
      '(or the bare wallet address) with this password\n',
  );
  if (!hasPassword || opts.reset) {
    process.stderr.write(
      'mail delivered before now has no reader wrap and does not show over IMAP/POP3: read it with the wallet ' +
        '(webmail, `sealpost mailbox read`), or add the wraps with `sealpost account rewrap --key FILE` where ' +
        'the server\'s config and data are (README "Mail clients")\n',
    );
  }
}

async function createAccount(opts: AccountOptions): Promise<void> {
  const { key, api } = await connect(opts);
  await api.login();
  const r = await api.request('POST', '/v1/account');
  if (r.status === 403 && r.body?.error === 'registration_closed') {
    AccountApi.refuse(
      r,
      `creating the account (ask the operator: sealpost admin account create ${key.address})`,
    );
  }
  if (r.status !== 201 && r.status !== 200) AccountApi.refuse(r, 'creating the account');
  process.stdout.write(`account ${r.status === 201 ? 'created' : 'exists already'} for ${key.address}\n`);
}

function common(cmd: Command): Command {
  return cmd
    .requiredOption('-k, --key <file>', 'wallet keypair file (Solana CLI format: JSON array of 64 numbers)')
    .option('--config <file>', CONFIG_OPTION_HELP)
    .option('--api <url>', 'account API base URL (overrides the config)');
}

export function register(program: Command): void {
  const account = program
    .command('account')
    .description("a wallet holder's own account through the account API (the wallet key signs locally)");
  common(
    account
      .command('password')
      .description(
        'set or change the mail password for IMAP, POP3 and submission (read from stdin or prompted)',
      ),
  )
    .option('--reset', 'replace a forgotten password without the current one (earlier mail leaves IMAP/POP3)')
    .addHelpText('after', PASSWORD_HELP)
    .action(setPassword);
  common(account.command('create').description('create the account of the wallet (open registration)'))
    .addHelpText('after', API_RULE)
    .action(createAccount);
  registerRewrap(account);
}
