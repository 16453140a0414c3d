// The files a config names, opened and parsed the way the servers load them
// (so `sealpost config check` agrees with `serve`, `domaind` and `pind`):
// keypair files parse as Solana CLI keypairs, the credential key is 32 raw
// bytes, DKIM keys are RSA private keys of 2048 bits or more (the spooler's
// signer loads them), each TLS certificate loads with its key and matches it
// (the secure context serve builds), `peer_ca_file` holds certificates, the
// data directories exist or can be created and are writable. A file the
// config leaves at its default and that does not exist yet is a note, not a
// problem: `sealpost dev` creates those, and a deployment may not run the
// component that needs it.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { type Config, parseConfig } from '../../../core/config/index.ts';
import { CREDENTIAL_KEY_BYTES } from '../../../core/crypto/credential-seal.ts';
import { parseKeypairJson } from '../../../core/keys/keypair-file.ts';
import { readExtraCa } from '../../../core/tls/extra-ca.ts';

export interface FileFinding {
  /** The config key, as docs/config.md spells it (`smtp.tls_key_file`, `spooler.dkim[0].key_file`). */
  key: string;
  file: string;
  problem: string;
}

export interface FileCheck {
  problems: FileFinding[];
  /** Files at their default that do not exist yet, and similar information. */
  notes: FileFinding[];
}

class Problem extends Error {}

/** The file's bytes, or a Problem saying in a few words why it cannot be read. */
function read(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Problem('does not exist');
    if (code === 'EACCES') throw new Problem('is not readable by this user (permission denied)');
    if (code === 'EISDIR') throw new Problem('is a directory, not a file');
    throw new Problem(`cannot be read (${code ?? (err as Error).message})`);
  }
}

/** A library's message without the file name it repeats. */
function tidy(message: string, file: string): string {
  return message
    .replaceAll(`keypair file ${file}: `, '')
    .replaceAll(`DKIM key ${file}: `, '')
    .replaceAll(`${file}: `, '')
    .replaceAll(`${file} `, '')
    .replace(/^file not found: .*$/, 'does not exist');
}

function keypair(file: string): void {
  parseKeypairJson(read(file).toString('utf8'), file);
}

function credentialKey(file: string): void {
  const bytes = read(file);
  if (bytes.length !== CREDENTIAL_KEY_BYTES) {
    throw new Problem(
      `is ${bytes.length} bytes; expected exactly ${CREDENTIAL_KEY_BYTES} raw bytes (binary, not hex or base64; \`sealpost keygen credential-key FILE\` makes one)`,
    );
  }
}

function adminToken(file: string): void {
  const token = read(file).toString('utf8').trim();
  if (token.length < 16)
    throw new Problem(`holds ${token.length} characters; expected at least 16 (\`sealpost admin token\`)`);
}

function jwtSecret(file: string): void {
  const bytes = read(file);
  if (bytes.length < 32) throw new Problem(`is ${bytes.length} bytes; expected at least 32`);
}

function secretLine(file: string): void {
  if (
    read(file)
      .toString('utf8')
      .replace(/\r?\n$/, '') === ''
  )
    throw new Problem('is empty (expected the password)');
}

type DkimSignerFactory = typeof import('../../../mail/dkim-sign.ts').createDkimSigner;

function dkimKey(create: DkimSignerFactory, domain: string, selector: string, file: string): void {
  read(file);
  create([{ domain, selector, key_file: file }]);
}

function certificates(file: string): void {
  read(file);
  readExtraCa(file);
}

/** The first certificate of a PEM file, or a Problem. */
function leafCertificate(file: string): X509Certificate {
  const pem = read(file).toString('utf8');
  const block = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (!block) throw new Problem('holds no PEM certificate ("-----BEGIN CERTIFICATE-----")');
  try {
    return new X509Certificate(block);
  } catch (err) {
    throw new Problem(`holds a certificate that does not parse (${(err as Error).message})`);
  }
}

function privateKey(file: string): void {
  const pem = read(file);
  try {
    createPrivateKey(pem);
  } catch {
    throw new Problem('is not a PEM private key');
  }
}

/** Exists as a writable directory, or its nearest existing parent is one (it can be created). */
function writableDir(dir: string): void {
  let at = dir;
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(at).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // ENOTDIR: a file on the way; the walk up finds it and says so.
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        throw new Problem(`cannot be checked (${code ?? (err as Error).message})`);
      const parent = dirname(at);
      if (parent === at) throw new Problem('cannot be created: no existing parent directory');
      at = parent;
      continue;
    }
    if (!isDir)
      throw new Problem(at === dir ? 'is not a directory' : `cannot be created: ${at} is not a directory`);
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
    } catch {
      throw new Problem(
        at === dir
          ? 'is not writable by this user'
          : `does not exist and cannot be created: ${at} is not writable by this user`,
      );
    }
    return;
  }
}

function directory(dir: string): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new Problem('does not exist');
  }
  if (!isDir) throw new Problem('is not a directory');
}

/** Whether a server component this config runs reads the mail host's TLS pair. */
function usesMailTls(config: Config): boolean {
  return (
    config.smtp.listeners.some((l) => l.tls !== 'none' || l.mode !== 'mx') ||
    config.mail_hosts.imap_enabled ||
    config.mail_hosts.pop3_enabled
  );
}

/** Opens and parses every file `config` names; `env` is what the config was loaded with. */
export async function checkConfigFiles(
  config: Config,
  env: Record<string, string | undefined> = process.env,
): Promise<FileCheck> {
  const problems: FileFinding[] = [];
  const notes: FileFinding[] = [];
  // The same config without a file: what each path would be if the file did not set it.
  const defaults = parseConfig('', { dataDirOverride: config.store.data_dir, env, source: '<defaults>' });
  const run = (
    key: string,
    file: string,
    check: (file: string) => void,
    /**
     * A missing file is a note (`absent` says what then) when the config
     * leaves the key at its default, or when the servers run without it (`optional`).
     */
    opts: { defaulted?: boolean; optional?: boolean; absent?: string } = {},
  ): boolean => {
    try {
      check(file);
      return true;
    } catch (err) {
      const problem = err instanceof Problem ? err.message : tidy((err as Error).message, file);
      if (problem === 'does not exist' && (opts.defaulted || opts.optional)) {
        notes.push({
          key,
          file,
          problem: `does not exist${opts.defaulted ? ' (the default path)' : ''}; ${opts.absent ?? 'the component that reads it will not start'}`,
        });
      } else problems.push({ key, file, problem });
      return false;
    }
  };

  for (const key of ['authority_key_file', 'delegate_key_file'] as const) {
    const file = config.chain[key];
    if (file !== undefined) run(`chain.${key}`, file, keypair);
  }
  if (config.chain.authority_key_file === undefined) {
    notes.push({
      key: 'chain.authority_key_file',
      file: '(not set)',
      problem: '`sealpost serve` refuses to start without it (`sealpost keygen authority FILE`)',
    });
  }

  const api = config.api;
  run('api.credential_key_file', api.credential_key_file, credentialKey, {
    defaulted: api.credential_key_file === defaults.api.credential_key_file,
    absent: '`sealpost serve` will not start (`sealpost keygen credential-key FILE`)',
  });
  run('api.admin_token_file', api.admin_token_file, adminToken, {
    defaulted: api.admin_token_file === defaults.api.admin_token_file,
    optional: true,
    absent: 'admin routes and /metrics refuse everyone (`sealpost admin token`)',
  });
  if (api.jwt_secret_file !== undefined) run('api.jwt_secret_file', api.jwt_secret_file, jwtSecret);
  if (api.webmail_dir !== undefined) run('api.webmail_dir', api.webmail_dir, directory);

  const tlsPair = (section: 'smtp' | 'domaind', certFile: string, keyFile: string, defaulted: boolean) => {
    const opts = { defaulted, absent: 'the TLS listeners will not start' };
    let cert: X509Certificate | null = null;
    const certOk = run(
      `${section}.tls_cert_file`,
      certFile,
      (f) => {
        cert = leafCertificate(f);
      },
      opts,
    );
    const keyOk = run(`${section}.tls_key_file`, keyFile, privateKey, opts);
    if (!certOk || !keyOk) return;
    try {
      createSecureContext({ cert: readFileSync(certFile), key: readFileSync(keyFile) });
    } catch (err) {
      const why = (err as Error).message;
      problems.push({
        key: `${section}.tls_key_file`,
        file: keyFile,
        problem: /mismatch/i.test(why)
          ? `does not match the certificate in ${certFile} (${section}.tls_cert_file)`
          : `does not load with the certificate in ${certFile} (${why})`,
      });
      return;
    }
    const notAfter = (cert as X509Certificate | null)?.validTo;
    if (notAfter && Date.parse(notAfter) < Date.now()) {
      notes.push({
        key: `${section}.tls_cert_file`,
        file: certFile,
        problem: `expired on ${new Date(notAfter).toISOString()}; clients that check it refuse TLS`,
      });
    }
  };
  if (usesMailTls(config)) {
    tlsPair(
      'smtp',
      config.smtp.tls_cert_file,
      config.smtp.tls_key_file,
      config.smtp.tls_cert_file === defaults.smtp.tls_cert_file &&
        config.smtp.tls_key_file === defaults.smtp.tls_key_file,
    );
  }
  if (config.domaind.tls_cert_file !== undefined && config.domaind.tls_key_file !== undefined)
    tlsPair('domaind', config.domaind.tls_cert_file, config.domaind.tls_key_file, false);
  if (config.smtp.peer_ca_file !== undefined)
    run('smtp.peer_ca_file', config.smtp.peer_ca_file, certificates);

  if (config.spooler.dkim.length > 0) {
    // The spooler's own loader (it pulls in mailauth, so only when there are keys).
    const { createDkimSigner } = await import('../../../mail/dkim-sign.ts');
    for (const [i, d] of config.spooler.dkim.entries()) {
      run(`spooler.dkim[${i}].key_file`, d.key_file, (f) =>
        dkimKey(createDkimSigner, d.domain, d.selector, f),
      );
    }
  }
  const relayPassword = config.spooler.relay?.password_file;
  if (relayPassword !== undefined) run('spooler.relay.password_file', relayPassword, secretLine);
  // The MX reads it at start when rspamd scanning is on; with [spam] off a missing file is a note.
  const spamPassword = config.spam.password_file;
  if (spamPassword !== undefined)
    run('spam.password_file', spamPassword, secretLine, {
      optional: !config.spam.enabled,
      absent: '[spam] is off, so nothing reads it yet; `sealpost serve` will not start once it is on',
    });

  run('store.data_dir', config.store.data_dir, writableDir);
  if (config.store.url.startsWith('sqlite:')) {
    const dbDir = dirname(config.store.url.slice('sqlite:'.length));
    if (dbDir !== config.store.data_dir) run('store.url', dbDir, writableDir);
  }
  run('pind.data_dir', config.pind.data_dir, writableDir);
  return { problems, notes };
}

/** One line per finding: `  key (file): problem`. */
export function findingLine(f: FileFinding): string {
  return `  ${f.key} (${f.file}): ${f.problem}`;
}
