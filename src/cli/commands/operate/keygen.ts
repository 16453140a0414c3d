// `sealpost keygen`: every key file the configuration asks for — wallet,
// domain authority and delegate keypairs, the credential key, the JWT
// secret and DKIM keys. Files are mode 0600 and never overwritten without
// --force. Each command prints the public part (or, with --json, a JSON
// object describing what it wrote); secrets never reach stdout.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CREDENTIAL_KEY_BYTES, createCredentialKeyFile } from '../../../core/crypto/credential-seal.ts';
import {
  DKIM_RSA_BITS,
  dkimRecord,
  generateDkimKey,
  normalizeDkimNames,
} from '../../../core/keys/dkim-key.ts';
import {
  FileExistsError,
  generateKeypair,
  writeKeypairFile,
  writeSecretFile,
} from '../../../core/keys/keypair-file.ts';
import {
  generateSecretToken,
  SECRET_TOKEN_BYTES,
  writeSecretTokenFile,
} from '../../../core/keys/secret-token.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';

interface WriteOptions {
  force?: boolean;
  json?: boolean;
}

const KEYPAIRS = {
  wallet: {
    summary: 'a wallet keypair (Solana CLI format); prints its address',
    what: 'a wallet keypair (Solana CLI format)',
    example: 'sealpost keygen wallet keys/alice.json',
  },
  authority: {
    summary: 'the domain authority keypair; prints its address',
    what: 'the domain authority keypair ([chain] authority_key_file; signs SendMail for relayed mail)',
    example: 'sealpost keygen authority keys/authority.json',
  },
  delegate: {
    summary: "the domain service's delegate keypair; prints its address",
    what: "the domain service's delegate keypair ([chain] delegate_key_file; signs CreateDomain)",
    example: 'sealpost keygen delegate keys/delegate.json',
  },
} as const;

function examples(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

function printJson(value: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function addWriteOptions(cmd: Command, forceHelp = 'replace an existing file'): Command {
  return cmd
    .option('--force', forceHelp)
    .option('--json', 'print what was written as one JSON object on stdout');
}

function registerKeypairs(keygen: Command): void {
  for (const [kind, { summary, what, example }] of Object.entries(KEYPAIRS)) {
    const cmd = keygen
      .command(`${kind} <file>`)
      .summary(summary)
      .description(`write ${what}, mode 0600; prints its address (base58 public key)`)
      .addHelpText(
        'after',
        examples(example, `${example.replace(/ (\S+)$/, ' --json $1')}   # {"kind","file","address"}`),
      );
    addWriteOptions(cmd).action((file: string, opts: WriteOptions) => {
      const keypair = generateKeypair();
      writeKeypairFile(file, keypair, { force: opts.force });
      process.stderr.write(`wrote ${kind} keypair ${file} (mode 0600)\n`);
      if (opts.json) printJson({ kind, file: resolve(file), address: keypair.address });
      else process.stdout.write(`${keypair.address}\n`);
    });
  }
}

function registerCredentialKey(keygen: Command): void {
  const cmd = keygen
    .command('credential-key <file>')
    .summary('the 32-byte key that seals stored credentials')
    .description(
      `write ${CREDENTIAL_KEY_BYTES} random raw bytes: the AES-256 key that seals stored credentials ` +
        '([api] credential_key_file); it has no public part, so stdout stays empty unless --json',
    )
    .addHelpText('after', examples('sealpost keygen credential-key keys/credential.key'));
  addWriteOptions(
    cmd,
    'replace an existing file (credentials sealed under the old key become unreadable)',
  ).action((file: string, opts: WriteOptions) => {
    createCredentialKeyFile(file, { force: opts.force });
    process.stderr.write(`wrote credential key ${file} (${CREDENTIAL_KEY_BYTES} bytes, mode 0600)\n`);
    if (opts.json) printJson({ kind: 'credential-key', file: resolve(file), bytes: CREDENTIAL_KEY_BYTES });
  });
}

function registerJwtSecret(keygen: Command): void {
  const cmd = keygen
    .command('jwt-secret <file>')
    .summary('a JWT signing secret (optional; see --help)')
    .description(
      `write a JWT signing secret ([api] jwt_secret_file): ${SECRET_TOKEN_BYTES} random bytes as ` +
        `${SECRET_TOKEN_BYTES * 2} hex digits, no newline; only needed to rotate sessions apart from the ` +
        'credential key. Secret, so stdout stays empty unless --json',
    )
    .addHelpText('after', examples('sealpost keygen jwt-secret keys/jwt.secret'));
  addWriteOptions(cmd, 'replace an existing file (every issued login token becomes invalid)').action(
    (file: string, opts: WriteOptions) => {
      writeSecretTokenFile(file, generateSecretToken('hex'), { force: opts.force });
      process.stderr.write(
        `wrote JWT secret ${file} (mode 0600); set [api] jwt_secret_file to it and restart the API\n`,
      );
      if (opts.json)
        printJson({ kind: 'jwt-secret', file: resolve(file), format: 'hex', bytes: SECRET_TOKEN_BYTES });
    },
  );
}

interface DkimOptions extends WriteOptions {
  domain: string;
  selector: string;
}

function registerDkim(keygen: Command): void {
  const cmd = keygen
    .command('dkim <file>')
    .summary('a 2048-bit RSA DKIM key; prints its DNS TXT record')
    .description(
      `write a ${DKIM_RSA_BITS}-bit RSA DKIM signing key (PEM PKCS#8, mode 0600) and print its DNS TXT ` +
        'record, split into strings of at most 255 characters',
    )
    .requiredOption('--domain <domain>', 'the signing domain (d=), e.g. example.org')
    .requiredOption(
      '--selector <selector>',
      'the selector (s=); the record is <selector>._domainkey.<domain>',
    )
    .addHelpText(
      'after',
      `${examples(
        'sealpost keygen dkim keys/dkim-example.org.pem --domain example.org --selector mail2025',
      )}\nThen publish the printed record and add the key to the config:\n` +
        '  [[spooler.dkim]]\n  domain = "example.org"\n  selector = "mail2025"\n' +
        '  key_file = "keys/dkim-example.org.pem"\n',
    );
  addWriteOptions(cmd).action(async (file: string, opts: DkimOptions) => {
    let names: { domain: string; selector: string };
    try {
      names = normalizeDkimNames(opts.domain, opts.selector);
    } catch (err) {
      throw new CliError((err as Error).message, EXIT_USAGE);
    }
    // Fail before the (slow) key generation; writeSecretFile re-checks atomically.
    if (!opts.force && existsSync(file)) throw new FileExistsError(file);
    process.stderr.write(`generating a ${DKIM_RSA_BITS}-bit RSA key…\n`);
    const key = await generateDkimKey();
    writeSecretFile(file, key.privateKeyPem, { force: opts.force });
    const record = dkimRecord(names.domain, names.selector, key.publicKeySpki);
    process.stderr.write(
      `wrote DKIM key ${file} (RSA ${DKIM_RSA_BITS}, PEM PKCS#8, mode 0600)\n` +
        'publish the TXT record printed on stdout, then add to the config:\n' +
        `  [[spooler.dkim]]\n  domain = "${names.domain}"\n  selector = "${names.selector}"\n` +
        `  key_file = ${JSON.stringify(file)}\n`,
    );
    if (opts.json) {
      printJson({
        kind: 'dkim',
        file: resolve(file),
        domain: names.domain,
        selector: names.selector,
        bits: DKIM_RSA_BITS,
        name: record.name,
        type: 'TXT',
        value: record.value,
        strings: record.strings,
        zone_line: record.zoneLine,
      });
    } else {
      process.stdout.write(`${record.zoneLine}\n`);
    }
  });
}

export function register(program: Command): void {
  const keygen = program
    .command('keygen')
    .description('create key files (mode 0600; never overwrites an existing file without --force)')
    .addHelpText(
      'after',
      examples(
        'sealpost keygen wallet keys/alice.json',
        'sealpost keygen dkim keys/dkim.pem --domain example.org --selector s1',
      ),
    );
  registerKeypairs(keygen);
  registerCredentialKey(keygen);
  registerJwtSecret(keygen);
  registerDkim(keygen);
}
