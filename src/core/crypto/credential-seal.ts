// Sealing of stored credentials (mail passwords, pin-provider secrets) under
// the server-wide credential key: AES-256-GCM, at rest only — the server can
// always open them because it needs them at delivery. Server-only module.
//
// Sealed text: `v1:<base64 iv (12 bytes)>:<base64 ciphertext ‖ 16-byte tag>`.
// Associated data (e.g. purpose + wallet) is authenticated, not stored: a
// value copied to another wallet's row or another purpose fails to open.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeSecretFile } from '../keys/keypair-file.ts';

export const CREDENTIAL_KEY_BYTES = 32;
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// The version is part of the authenticated data so a future format cannot be
// confused with this one.
const AAD_PREFIX = 'sealpost credential v1\n';

export class CredentialKeyError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'CredentialKeyError';
  }
}

export class CredentialSealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialSealError';
  }
}

function howToCreate(path: string): string {
  return `Create one with \`sealpost keygen credential-key ${path}\` (or run \`sealpost dev\`, which generates it).`;
}

/** Reads the 32-byte raw key named by `[api] credential_key_file`. */
export function loadCredentialKey(path: string): Uint8Array {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const what = code === 'ENOENT' ? 'not found' : `unreadable (${(err as Error).message})`;
    throw new CredentialKeyError(
      path,
      `credential key file ${path} ${what}; expected a file of exactly ${CREDENTIAL_KEY_BYTES} raw bytes. ${howToCreate(path)}`,
    );
  }
  if (bytes.length !== CREDENTIAL_KEY_BYTES) {
    throw new CredentialKeyError(
      path,
      `credential key file ${path} is ${bytes.length} bytes; expected exactly ${CREDENTIAL_KEY_BYTES} raw bytes ` +
        `(binary, not hex or base64 text). ${howToCreate(path)}`,
    );
  }
  return new Uint8Array(bytes);
}

/** Writes a fresh random key (mode 0600); refuses to overwrite unless `force`. */
export function createCredentialKeyFile(path: string, opts: { force?: boolean } = {}): Uint8Array {
  const key = new Uint8Array(randomBytes(CREDENTIAL_KEY_BYTES));
  writeSecretFile(path, key, opts);
  return key;
}

/** Associated data that ties a sealed value to its row and use. */
export function credentialAad(purpose: string, wallet: string): string {
  return `${purpose}:${wallet}`;
}

function checkKey(key: Uint8Array): void {
  if (key.length !== CREDENTIAL_KEY_BYTES) {
    throw new CredentialSealError(`credential key must be ${CREDENTIAL_KEY_BYTES} bytes, got ${key.length}`);
  }
}

export function sealCredential(key: Uint8Array, plaintext: string | Uint8Array, aad = ''): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(AAD_PREFIX + aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}:${iv.toString('base64')}:${body.toString('base64')}`;
}

export function openCredentialBytes(key: Uint8Array, sealed: string, aad = ''): Uint8Array {
  checkKey(key);
  const parts = sealed.split(':');
  if (parts[0] !== VERSION || parts.length !== 3) {
    throw new CredentialSealError(`sealed credential has an unknown format (expected "${VERSION}:iv:data")`);
  }
  const iv = Buffer.from(parts[1] ?? '', 'base64');
  const body = Buffer.from(parts[2] ?? '', 'base64');
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) {
    throw new CredentialSealError('sealed credential is truncated or malformed');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(AAD_PREFIX + aad, 'utf8'));
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  try {
    return new Uint8Array(
      Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]),
    );
  } catch {
    // GCM cannot tell a wrong key from tampering or wrong associated data.
    throw new CredentialSealError(
      'sealed credential failed authentication (wrong key, tampered, or wrong binding)',
    );
  }
}

export function openCredential(key: Uint8Array, sealed: string, aad = ''): string {
  return Buffer.from(openCredentialBytes(key, sealed, aad)).toString('utf8');
}

/** The same operations with the key bound once, for constructor injection. */
export class CredentialSealer {
  constructor(private readonly key: Uint8Array) {
    checkKey(key);
  }
  seal(plaintext: string | Uint8Array, aad = ''): string {
    return sealCredential(this.key, plaintext, aad);
  }
  open(sealed: string, aad = ''): string {
    return openCredential(this.key, sealed, aad);
  }
}

/**
 * An independent 32-byte key for another purpose (HKDF-SHA256 over the
 * credential key). Used for the JWT signing key when `[api] jwt_secret_file`
 * is not set: purpose `jwt`.
 */
export function deriveSubkey(key: Uint8Array, purpose: string): Uint8Array {
  checkKey(key);
  return new Uint8Array(hkdfSync('sha256', key, new Uint8Array(0), `sealpost/${purpose}/v1`, 32));
}
