// `sealpost admin token`: creates or rotates the admin bearer token file
// ([api] admin_token_file). The token is 32 random bytes as text on one
// line; `sealpost serve` reads the file at start and again at each reload
// (`sealpost reload`, SIGHUP); `sealpost dev` and `sealpost worker
// --metrics-listen` read it only at start.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import {
  generateSecretToken,
  isTokenFormat,
  SECRET_TOKEN_BYTES,
  TOKEN_FORMATS,
  type TokenFormat,
  writeSecretTokenFile,
} from '../../../core/keys/secret-token.ts';
import { addServerOptions, loadCliConfig } from '../../common.ts';

interface AdminTokenOptions {
  config?: string;
  dataDir?: string;
  file?: string;
  format: TokenFormat;
  print?: boolean;
  json?: boolean;
}

function parseFormat(value: string): TokenFormat {
  if (!isTokenFormat(value)) {
    throw new InvalidArgumentError(`expected one of ${TOKEN_FORMATS.join(', ')}, got "${value}"`);
  }
  return value;
}

const HELP_AFTER = `
The token file holds one line: ${SECRET_TOKEN_BYTES} random bytes as hex (default, 64
characters) or base64url (43 characters), then a newline; mode 0600. An
existing file is replaced atomically (rotation). Admin clients send the
token as "Authorization: Bearer <token>".

sealpost serve reads the file at start and at each reload: after a
rotation, run \`sealpost reload\` (or send serve SIGHUP). sealpost dev and
sealpost worker --metrics-listen read it only at start: restart them. Until
then a server accepts only the old token.

Nothing secret is printed unless --print is given (the token alone on
stdout, or in the "token" field with --json). Without --print, read it from
the file when you need it, e.g. curl -H "authorization: Bearer $(cat FILE)".

Examples:
  $ sealpost admin token --config sealpost.toml
  $ sealpost admin token --file keys/admin.token --format base64url --print
  $ sealpost admin token --config sealpost.toml --json   # {"file","action","format"}
`;

/** Adds `token` under the `admin` command. */
export function registerAdminToken(admin: Command): void {
  const cmd = admin
    .command('token')
    .description(
      'create or rotate the admin token file ([api] admin_token_file, or --file); prints nothing secret unless --print',
    );
  addServerOptions(cmd, { listen: false })
    .option('--file <file>', 'token file to write (overrides [api] admin_token_file from the config)')
    .option('--format <format>', `token encoding: ${TOKEN_FORMATS.join(' or ')}`, parseFormat, 'hex')
    .option('--print', 'also print the new token on stdout (it is a secret: mind logs and shell history)')
    .option('--json', 'print {"file","action","format"} (plus "token" with --print) as JSON on stdout')
    .addHelpText('after', HELP_AFTER)
    .action((opts: AdminTokenOptions) => {
      // --file needs no config at all, so a half-written config cannot block a rotation.
      const file =
        opts.file !== undefined ? resolve(opts.file) : loadCliConfig(opts).config.api.admin_token_file;
      const action = existsSync(file) ? 'rotated' : 'created';
      const token = generateSecretToken(opts.format);
      writeSecretTokenFile(file, token, { force: true, newline: true });

      process.stderr.write(
        `${action} admin token file ${file} (mode 0600, ${SECRET_TOKEN_BYTES} random bytes, ${opts.format})\n` +
          (action === 'rotated'
            ? 'warning: running servers accept only the old token until they read this file again: ' +
              'run `sealpost reload` for sealpost serve; restart sealpost dev and sealpost worker\n'
            : 'servers read this file at start: run `sealpost reload` for a running sealpost serve, ' +
              'or (re)start the server\n'),
      );
      if (opts.json) {
        const out: Record<string, string> = { file, action, format: opts.format };
        if (opts.print) out.token = token;
        process.stdout.write(`${JSON.stringify(out)}\n`);
      } else if (opts.print) {
        process.stdout.write(`${token}\n`);
      }
    });
}
