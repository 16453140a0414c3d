// `sealpost config check` opens every file a config names, as a child
// process: a deployment whose keys, certificates and directories are all
// good is `config ok`; one with a missing TLS key, authority key and DKIM
// key, a certificate that is not its key's, a credential key of the wrong
// size, a keypair, DKIM key and peer CA that do not parse, and data
// directories that cannot be made exits 1 naming every key, file and
// problem; files left at their default paths that do not exist yet are
// notes; schema errors keep exit 2 and their format.
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCredentialKeyFile } from '../../src/core/crypto/credential-seal.ts';
import { generateDkimKey } from '../../src/core/keys/dkim-key.ts';
import { generateKeypair, writeKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { createSelfSignedCert } from '../../src/core/tls/self-signed.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

function check(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, 'config', 'check', ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A deployment directory with every file a full config names, all good. */
async function goodDeployment(): Promise<{ dir: string; toml: string }> {
  const dir = tempDir('sealpost-config-check-');
  mkdirSync(join(dir, 'keys'));
  writeKeypairFile(join(dir, 'keys', 'authority.json'), generateKeypair());
  writeKeypairFile(join(dir, 'keys', 'delegate.json'), generateKeypair());
  createCredentialKeyFile(join(dir, 'keys', 'credential.key'));
  writeFileSync(join(dir, 'keys', 'admin.token'), `${'a'.repeat(64)}\n`);
  writeFileSync(join(dir, 'keys', 'dkim.pem'), (await generateDkimKey()).privateKeyPem);
  const mail = await createSelfSignedCert(['mx.example.test']);
  writeFileSync(join(dir, 'keys', 'cert.pem'), mail.cert);
  writeFileSync(join(dir, 'keys', 'key.pem'), mail.key);
  const web = await createSelfSignedCert(['mta-sts.example.test']);
  writeFileSync(join(dir, 'keys', 'web-cert.pem'), web.cert);
  writeFileSync(join(dir, 'keys', 'web-key.pem'), web.key);
  const ca = await createSelfSignedCert(['Peer CA'], { isCa: true });
  writeFileSync(join(dir, 'keys', 'peer-ca.pem'), ca.cert);
  writeFileSync(join(dir, 'keys', 'relay.pass'), 'hunter22\n');
  const toml = [
    '[smtp]',
    'hostname = "mx.example.test"',
    'local_domains = ["example.test"]',
    'tls_cert_file = "keys/cert.pem"',
    'tls_key_file = "keys/key.pem"',
    'peer_ca_file = "keys/peer-ca.pem"',
    '[chain]',
    'authority_key_file = "keys/authority.json"',
    'delegate_key_file = "keys/delegate.json"',
    '[api]',
    'credential_key_file = "keys/credential.key"',
    'admin_token_file = "keys/admin.token"',
    '[domaind]',
    'tls_cert_file = "keys/web-cert.pem"',
    'tls_key_file = "keys/web-key.pem"',
    '[store]',
    'data_dir = "state"',
    '[pind]',
    'data_dir = "state/pind"',
    '[spooler.relay]',
    'host = "relay.example.test"',
    'username = "mx"',
    'password_file = "keys/relay.pass"',
    '[[spooler.dkim]]',
    'domain = "example.test"',
    'selector = "s1"',
    'key_file = "keys/dkim.pem"',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'sealpost.toml'), toml);
  return { dir, toml };
}

describe('sealpost config check opens every file the config names', () => {
  it('says config ok when every key, certificate and directory is good', async () => {
    const { dir } = await goodDeployment();
    const run = await check(['--config', 'sealpost.toml'], dir);
    expect(run).toEqual({ code: 0, stdout: 'config ok: sealpost.toml\n', stderr: '' });
  });

  it('exits 1 naming the key, the file and the problem of every one that is wrong', async () => {
    const { dir, toml } = await goodDeployment();
    const k = (name: string) => join(dir, 'keys', name);
    // The case: the TLS key, the authority key and the DKIM key do not exist.
    const broken = toml
      .replace('tls_key_file = "keys/key.pem"', 'tls_key_file = "keys/absent-key.pem"')
      .replace('authority_key_file = "keys/authority.json"', 'authority_key_file = "keys/absent.json"')
      .replace('key_file = "keys/dkim.pem"', 'key_file = "keys/absent-dkim.pem"')
      .replace('data_dir = "state"', 'data_dir = "blocker/state"')
      .replace('data_dir = "state/pind"', 'data_dir = "pind-file"');
    writeFileSync(join(dir, 'broken.toml'), broken);
    // And what parses wrong: a keypair, the credential key, the domaind pair, the peer CA.
    writeFileSync(k('delegate.json'), '[1, 2, 3]');
    writeFileSync(k('credential.key'), 'deadbeef'.repeat(8));
    writeFileSync(k('web-key.pem'), (await createSelfSignedCert(['other.example.test'])).key);
    writeFileSync(k('peer-ca.pem'), 'not a certificate\n');
    writeFileSync(join(dir, 'blocker'), 'a file where a directory would be made\n');
    writeFileSync(join(dir, 'pind-file'), '');

    const run = await check(['--config', 'broken.toml'], dir);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      [
        'file problems in broken.toml:',
        `  chain.authority_key_file (${k('absent.json')}): does not exist`,
        `  chain.delegate_key_file (${k('delegate.json')}): expected 64 numbers (32-byte seed + 32-byte public key), found 3`,
        `  api.credential_key_file (${k('credential.key')}): is 64 bytes; expected exactly 32 raw bytes (binary, not hex or base64; \`sealpost keygen credential-key FILE\` makes one)`,
        `  smtp.tls_key_file (${k('absent-key.pem')}): does not exist`,
        `  domaind.tls_key_file (${k('web-key.pem')}): does not match the certificate in ${k('web-cert.pem')} (domaind.tls_cert_file)`,
        `  smtp.peer_ca_file (${k('peer-ca.pem')}): holds no PEM certificate (expected "-----BEGIN CERTIFICATE-----" blocks)`,
        `  spooler.dkim[0].key_file (${k('absent-dkim.pem')}): does not exist`,
        `  store.data_dir (${join(dir, 'blocker', 'state')}): cannot be created: ${join(dir, 'blocker')} is not a directory`,
        `  pind.data_dir (${join(dir, 'pind-file')}): is not a directory`,
        '',
      ].join('\n'),
    );
  });

  it('refuses a DKIM key that is not RSA, as the spooler does, and a key that is not a key', async () => {
    const { dir } = await goodDeployment();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    writeFileSync(join(dir, 'keys', 'dkim.pem'), ec);
    writeFileSync(join(dir, 'keys', 'key.pem'), 'garbage\n');
    const run = await check(['--config', 'sealpost.toml'], dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `  spooler.dkim[0].key_file (${join(dir, 'keys', 'dkim.pem')}): is a ec key; rsa-sha256 needs RSA\n`,
    );
    expect(run.stderr).toContain(
      `  smtp.tls_key_file (${join(dir, 'keys', 'key.pem')}): is not a PEM private key\n`,
    );
  });

  it('notes default files not made yet without failing, and keeps exit 2 for schema errors', async () => {
    const dir = tempDir('sealpost-config-check-defaults-');
    writeFileSync(join(dir, 'sealpost.toml'), '[smtp]\nhostname = "mx.example.test"\n');
    const run = await check([], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('config ok: sealpost.toml\n');
    expect(run.stderr).toContain('notes on sealpost.toml:\n');
    expect(run.stderr).toContain(
      `  api.credential_key_file (${join(dir, '.data', 'credential.key')}): does not exist (the default path); \`sealpost serve\` will not start`,
    );
    expect(run.stderr).toContain(
      '  chain.authority_key_file ((not set)): `sealpost serve` refuses to start without it',
    );

    writeFileSync(
      join(dir, 'bad.toml'),
      '[smtp]\nhostnme = "x"\n[chain]\nauthority_key_file = "absent.json"\n',
    );
    const bad = await check(['--config', 'bad.toml'], dir);
    expect(bad).toMatchObject({
      code: 2,
      stderr: 'config error in bad.toml:\n  unknown key smtp.hostnme (did you mean smtp.hostname?)\n',
    });
  });

  it('opens [spam] password_file: missing or empty is a problem with [spam] on, a note with it off', async () => {
    const { dir, toml } = await goodDeployment();
    const pass = join(dir, 'keys', 'rspamd.pass');
    const spam = (enabled: boolean) =>
      `${toml}[spam]\nenabled = ${enabled}\npassword_file = "keys/rspamd.pass"\n`;
    writeFileSync(join(dir, 'on.toml'), spam(true));
    writeFileSync(join(dir, 'off.toml'), spam(false));
    const missing = await check(['--config', 'on.toml'], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `file problems in on.toml:\n  spam.password_file (${pass}): does not exist\n`,
    );
    const off = await check(['--config', 'off.toml'], dir);
    expect(off.code).toBe(0);
    expect(off.stderr).toContain(`  spam.password_file (${pass}): does not exist; [spam] is off`);
    writeFileSync(pass, '\n');
    expect((await check(['--config', 'on.toml'], dir)).stderr).toContain(
      `  spam.password_file (${pass}): is empty (expected the password)\n`,
    );
    writeFileSync(pass, 'controller-secret\n');
    expect(await check(['--config', 'on.toml'], dir)).toEqual({
      code: 0,
      stdout: 'config ok: on.toml\n',
      stderr: '',
    });
  });
});
