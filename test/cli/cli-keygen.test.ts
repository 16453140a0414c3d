// Black-box: `sealpost keygen …` run as a child process. Every key file is
// checked with a consumer other than the code that wrote it: keypairs with
// @solana/web3.js, the DKIM key by signing and verifying with mailauth
// against the printed TXT record, the credential key with its loader.
import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { dkimSign, dkimVerify } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { loadCredentialKey, openCredential, sealCredential } from '../../src/core/crypto/credential-seal.ts';
import { tempDir } from '../support/temp-dir.ts';

const BIN = resolve(import.meta.dirname, '..', '..', 'bin', 'sealpost.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sealpost(args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

const mode = (path: string) => statSync(path).mode & 0o777;

function loadWeb3(path: string): Keypair {
  return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')) as number[]));
}

/** The quoted strings of a zone-file TXT line, in order. */
function txtStrings(zoneLine: string): string[] {
  return [...zoneLine.matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
}

const MESSAGE = [
  'From: Alice <alice@example.org>',
  'To: Bob <bob@example.net>',
  'Subject: DKIM round trip',
  'Date: Tue, 04 Mar 2025 10:00:00 +0000',
  'Message-ID: <dkim-test@example.org>',
  '',
  'Signed with a key from sealpost keygen dkim.',
  '',
].join('\r\n');

/** Signs MESSAGE with the key file and verifies it against the given TXT strings. */
async function dkimRoundTrip(keyFile: string, selector: string, domain: string, txt: string[][]) {
  const signed = await dkimSign(MESSAGE, {
    signatureData: [{ signingDomain: domain, selector, privateKey: readFileSync(keyFile, 'utf8') }],
  } as Parameters<typeof dkimSign>[1]);
  expect(signed.errors).toEqual([]);
  const asked: string[] = [];
  const result = await dkimVerify(signed.signatures + MESSAGE, {
    resolver: async (name: string, type: string) => {
      asked.push(`${name} ${type}`);
      if (type === 'TXT' && name === `${selector}._domainkey.${domain}`) return txt;
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    },
  });
  return { result: result.results[0]?.status.result, asked };
}

// Each run starts a Node process with tsx; allow for a busy machine.
describe('sealpost keygen', { timeout: 180_000 }, () => {
  for (const kind of ['wallet', 'authority', 'delegate']) {
    it(`${kind}: a Solana CLI keypair file, mode 0600, loadable by @solana/web3.js`, async () => {
      const cwd = tempDir();
      const run = await sealpost(['keygen', kind, `keys/${kind}.json`], cwd);
      expect(run.code, run.stderr).toBe(0);
      const path = join(cwd, 'keys', `${kind}.json`);
      expect(mode(path)).toBe(0o600);
      const keypair = loadWeb3(path);
      expect(run.stdout).toBe(`${keypair.publicKey.toBase58()}\n`);
      expect(run.stderr).toContain(`wrote ${kind} keypair keys/${kind}.json (mode 0600)`);

      const json = await sealpost(['keygen', kind, 'second.json', '--json'], cwd);
      expect(json.code, json.stderr).toBe(0);
      const out = JSON.parse(json.stdout) as Record<string, string>;
      expect(out).toEqual({
        kind,
        file: join(cwd, 'second.json'),
        address: loadWeb3(join(cwd, 'second.json')).publicKey.toBase58(),
      });
      expect(out.address).not.toBe(keypair.publicKey.toBase58());
    });
  }

  it('never overwrites a key file without --force; --force replaces it', async () => {
    const cwd = tempDir();
    const path = join(cwd, 'wallet.json');
    expect((await sealpost(['keygen', 'wallet', 'wallet.json'], cwd)).code).toBe(0);
    const before = readFileSync(path, 'utf8');
    for (const kind of ['wallet', 'authority', 'delegate', 'credential-key', 'jwt-secret']) {
      const again = await sealpost(['keygen', kind, 'wallet.json'], cwd);
      expect(again.code).toBe(1);
      expect(again.stdout).toBe('');
      expect(again.stderr).toContain('wallet.json already exists; refusing to overwrite it (pass --force');
      expect(readFileSync(path, 'utf8')).toBe(before);
    }
    const forced = await sealpost(['keygen', 'authority', 'wallet.json', '--force'], cwd);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(path, 'utf8')).not.toBe(before);
    expect(forced.stdout).toBe(`${loadWeb3(path).publicKey.toBase58()}\n`);
    expect(mode(path)).toBe(0o600);
  });

  it('credential-key: 32 raw bytes accepted by the credential-seal loader, nothing on stdout', async () => {
    const cwd = tempDir();
    const run = await sealpost(['keygen', 'credential-key', 'credential.key'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    const path = join(cwd, 'credential.key');
    expect(mode(path)).toBe(0o600);
    const key = loadCredentialKey(path);
    expect(key).toHaveLength(32);
    const sealed = sealCredential(key, 'hunter2', 'mail-password:wallet');
    expect(openCredential(loadCredentialKey(path), sealed, 'mail-password:wallet')).toBe('hunter2');

    const json = await sealpost(['keygen', 'credential-key', 'second.key', '--json'], cwd);
    expect(JSON.parse(json.stdout)).toEqual({
      kind: 'credential-key',
      file: join(cwd, 'second.key'),
      bytes: 32,
    });
    expect(readFileSync(join(cwd, 'second.key')).equals(readFileSync(path))).toBe(false);
  });

  it('jwt-secret: 64 hex digits (32 random bytes), mode 0600, secret kept off stdout', async () => {
    const cwd = tempDir();
    const run = await sealpost(['keygen', 'jwt-secret', 'jwt.secret'], cwd);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    const path = join(cwd, 'jwt.secret');
    expect(mode(path)).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^[0-9a-f]{64}$/);
    expect(run.stderr).not.toContain(text);
    const json = await sealpost(['keygen', 'jwt-secret', 'jwt2.secret', '--json'], cwd);
    expect(JSON.parse(json.stdout)).toEqual({
      kind: 'jwt-secret',
      file: join(cwd, 'jwt2.secret'),
      format: 'hex',
      bytes: 32,
    });
    expect(readFileSync(join(cwd, 'jwt2.secret'), 'utf8')).not.toBe(text);
  });

  it('dkim: a 2048-bit PKCS#8 key whose printed TXT record verifies a mailauth signature', async () => {
    const cwd = tempDir();
    const run = await sealpost(
      ['keygen', 'dkim', 'keys/dkim.pem', '--domain', 'Example.ORG', '--selector', 'mail2025'],
      cwd,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('generating a 2048-bit RSA key');
    const path = join(cwd, 'keys', 'dkim.pem');
    expect(mode(path)).toBe(0o600);
    const pem = readFileSync(path, 'utf8');
    expect(pem.startsWith('-----BEGIN PRIVATE KEY-----\n')).toBe(true); // PKCS#8, not PKCS#1
    const key = createPrivateKey(pem);
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);

    // One zone-file line: name, class, type, then ≤255-character strings.
    const line = run.stdout.trimEnd();
    expect(run.stdout.endsWith('\n')).toBe(true);
    expect(line).toMatch(
      /^mail2025\._domainkey\.example\.org\. IN TXT "v=DKIM1; k=rsa; p=[^"]+"( "[^"]+")+$/,
    );
    const strings = txtStrings(line);
    expect(strings.length).toBeGreaterThan(1);
    for (const s of strings) expect(s.length).toBeLessThanOrEqual(255);

    const ok = await dkimRoundTrip(path, 'mail2025', 'example.org', [strings]);
    expect(ok.asked).toContain('mail2025._domainkey.example.org TXT');
    expect(ok.result).toBe('pass');

    // The same check fails when DNS publishes another key: the pass above is real.
    const other = await sealpost(
      ['keygen', 'dkim', 'other.pem', '--domain', 'example.org', '--selector', 'mail2025', '--json'],
      cwd,
    );
    const otherOut = JSON.parse(other.stdout) as { strings: string[] };
    const bad = await dkimRoundTrip(path, 'mail2025', 'example.org', [otherOut.strings]);
    expect(bad.result).toBe('fail');
  });

  it('dkim --json describes the record; the strings join to the value', async () => {
    const cwd = tempDir();
    const run = await sealpost(
      ['keygen', 'dkim', 'k.pem', '--domain', 'mail.example.net.', '--selector', 's1', '--json'],
      cwd,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown> & { strings: string[]; value: string };
    expect(out).toMatchObject({
      kind: 'dkim',
      file: join(cwd, 'k.pem'),
      domain: 'mail.example.net',
      selector: 's1',
      bits: 2048,
      name: 's1._domainkey.mail.example.net',
      type: 'TXT',
    });
    expect(out.strings.join('')).toBe(out.value);
    expect(out.zone_line).toBe(
      `s1._domainkey.mail.example.net. IN TXT ${out.strings.map((s) => `"${s}"`).join(' ')}`,
    );
    const pass = await dkimRoundTrip(join(cwd, 'k.pem'), 's1', 'mail.example.net', [out.strings]);
    expect(pass.result).toBe('pass');
  });

  it('dkim: bad names and missing options exit 2; an existing file exits 1 untouched', async () => {
    const cwd = tempDir();
    const badDomain = await sealpost(
      ['keygen', 'dkim', 'k.pem', '--domain', 'exa mple.org', '--selector', 's'],
      cwd,
    );
    expect(badDomain).toMatchObject({ code: 2, stdout: '' });
    expect(badDomain.stderr).toContain('domain "exa mple.org" is not a valid DNS name: bad label "exa mple"');
    const badSelector = await sealpost(
      ['keygen', 'dkim', 'k.pem', '--domain', 'a.org', '--selector', '-s'],
      cwd,
    );
    expect(badSelector.code).toBe(2);
    expect(badSelector.stderr).toContain('selector "-s" is not a valid DNS name');
    const noDomain = await sealpost(['keygen', 'dkim', 'k.pem', '--selector', 's'], cwd);
    expect(noDomain.code).toBe(2);
    expect(noDomain.stderr).toContain("required option '--domain <domain>' not specified");
    expect(() => statSync(join(cwd, 'k.pem'))).toThrow();

    writeFileSync(join(cwd, 'k.pem'), 'keep me');
    const exists = await sealpost(['keygen', 'dkim', 'k.pem', '--domain', 'a.org', '--selector', 's'], cwd);
    expect(exists).toMatchObject({ code: 1, stdout: '' });
    expect(exists.stderr).toContain('k.pem already exists; refusing to overwrite it');
    expect(exists.stderr).not.toContain('generating');
    expect(readFileSync(join(cwd, 'k.pem'), 'utf8')).toBe('keep me');
  });

  it('every keygen command has --help with an example', async () => {
    const cwd = tempDir();
    const top = await sealpost(['keygen', '--help'], cwd);
    expect(top.code).toBe(0);
    for (const sub of ['wallet', 'authority', 'delegate', 'credential-key', 'jwt-secret', 'dkim']) {
      expect(top.stdout).toContain(sub);
      const help = await sealpost(['keygen', sub, '--help'], cwd);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Examples?:\n {2}\$ sealpost keygen /);
      expect(help.stdout).toContain(`$ sealpost keygen ${sub} `);
      expect(help.stdout).toContain('--json');
    }
  });
});
