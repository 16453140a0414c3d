import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CredentialKeyError,
  CredentialSealError,
  CredentialSealer,
  createCredentialKeyFile,
  credentialAad,
  deriveSubkey,
  loadCredentialKey,
  openCredential,
  sealCredential,
} from '../../src/core/crypto/credential-seal.ts';
import { FileExistsError } from '../../src/core/keys/keypair-file.ts';
import { tempDir } from '../support/temp-dir.ts';

function keyFile(): { path: string; key: Uint8Array } {
  const path = join(tempDir(), 'credential.key');
  return { path, key: createCredentialKeyFile(path) };
}

/** Flips one bit of the base64-decoded field `index` (1 = iv, 2 = ciphertext+tag) at byte `at`. */
function flip(sealed: string, index: 1 | 2, at: number): string {
  const parts = sealed.split(':');
  const bytes = Buffer.from(parts[index] ?? '', 'base64');
  const pos = at < 0 ? bytes.length + at : at;
  bytes[pos] = (bytes[pos] ?? 0) ^ 0x01;
  parts[index] = bytes.toString('base64');
  return parts.join(':');
}

describe('credential sealing', () => {
  it('round-trips with and without associated data', () => {
    const { key } = keyFile();
    const aad = credentialAad('pin-provider', 'WaLLet111');
    const secret = JSON.stringify({ kind: 's3_bucket', access_key: 'AK', secret_key: 'SK ünïcode' });
    const sealed = sealCredential(key, secret, aad);
    expect(sealed).toMatch(/^v1:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/=]+$/);
    expect(Buffer.from(sealed.split(':')[1] ?? '', 'base64')).toHaveLength(12);
    expect(openCredential(key, sealed, aad)).toBe(secret);
    expect(openCredential(key, sealCredential(key, 'pw'))).toBe('pw');
    // A fresh IV each time.
    expect(sealCredential(key, secret, aad)).not.toBe(sealed);
  });

  it('detects tampering with the ciphertext, the tag and the iv', () => {
    const { key } = keyFile();
    const sealed = sealCredential(key, 'hunter2', 'mail-password:w');
    for (const bad of [flip(sealed, 2, 0), flip(sealed, 2, -1), flip(sealed, 1, 3)]) {
      expect(() => openCredential(key, bad, 'mail-password:w')).toThrow(CredentialSealError);
    }
    expect(() => openCredential(key, sealed.slice(0, -8), 'mail-password:w')).toThrow(CredentialSealError);
    expect(() => openCredential(key, `v2${sealed.slice(2)}`, 'mail-password:w')).toThrow(/unknown format/);
  });

  it('fails with the wrong associated data or the wrong key', () => {
    const { key } = keyFile();
    const sealed = sealCredential(key, 'secret', credentialAad('pin-provider', 'A'));
    expect(() => openCredential(key, sealed, credentialAad('pin-provider', 'B'))).toThrow(
      /failed authentication/,
    );
    expect(() => openCredential(key, sealed)).toThrow(CredentialSealError);
    const other = new Uint8Array(32).fill(7);
    expect(() => openCredential(other, sealed, credentialAad('pin-provider', 'A'))).toThrow(
      CredentialSealError,
    );
  });

  it('offers the same through a bound sealer', () => {
    const { key } = keyFile();
    const sealer = new CredentialSealer(key);
    expect(sealer.open(sealer.seal('x', 'ad'), 'ad')).toBe('x');
    expect(openCredential(key, sealer.seal('y'))).toBe('y');
  });

  it('derives independent subkeys deterministically', () => {
    const { key } = keyFile();
    const jwt = deriveSubkey(key, 'jwt');
    expect(jwt).toHaveLength(32);
    expect(deriveSubkey(key, 'jwt')).toEqual(jwt);
    expect(deriveSubkey(key, 'other')).not.toEqual(jwt);
    expect(jwt).not.toEqual(key);
  });
});

describe('credential key file', () => {
  it('is created with 32 random bytes, mode 0600, and never overwritten without force', () => {
    const { path, key } = keyFile();
    expect(readFileSync(path)).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadCredentialKey(path)).toEqual(key);
    expect(() => createCredentialKeyFile(path)).toThrow(FileExistsError);
    expect(loadCredentialKey(path)).toEqual(key);
    const replaced = createCredentialKeyFile(path, { force: true });
    expect(replaced).not.toEqual(key);
    expect(loadCredentialKey(path)).toEqual(replaced);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('explains a file of the wrong size', () => {
    const path = join(tempDir(), 'short.key');
    writeFileSync(path, 'a'.repeat(64)); // hex text instead of raw bytes
    expect(() => loadCredentialKey(path)).toThrow(CredentialKeyError);
    expect(() => loadCredentialKey(path)).toThrow(
      `credential key file ${path} is 64 bytes; expected exactly 32 raw bytes (binary, not hex or base64 text). ` +
        `Create one with \`sealpost keygen credential-key ${path}\` (or run \`sealpost dev\`, which generates it).`,
    );
  });

  it('explains a missing file', () => {
    const path = join(tempDir(), 'absent.key');
    expect(() => loadCredentialKey(path)).toThrow(
      `credential key file ${path} not found; expected a file of exactly 32 raw bytes. ` +
        `Create one with \`sealpost keygen credential-key ${path}\` (or run \`sealpost dev\`, which generates it).`,
    );
  });
});
