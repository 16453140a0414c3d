// Locking a reader key's 32-byte secret under the mail password: scrypt
// (its own random salt, not the password hash's) gives an AES-256-GCM key;
// associated data binds the lock to the wallet and reader id, so a locked
// secret copied to another row does not open. Text form:
//   p1$ln=<log2 N>,r=<r>,p=<p>$<salt b64>$<iv b64>$<ciphertext‖tag b64>
// The caller seals this text once more under the credential key, so an
// offline guess at the password also needs the server's key file.
import { createCipheriv, createDecipheriv, randomBytes as nodeRandomBytes, scrypt } from 'node:crypto';

export interface LockParams {
  logN: number;
  r: number;
  p: number;
}

/** About 32 MiB and tens of milliseconds per derivation, like the password hash. */
export const DEFAULT_LOCK_PARAMS: LockParams = { logN: 15, r: 8, p: 1 };

const VERSION = 'p1';
const SALT_BYTES = 16;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const MAXMEM = 256 * 1024 * 1024;

export class ReaderKeyLockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReaderKeyLockError';
  }
}

export type RandomBytes = (length: number) => Uint8Array;

const defaultRandom: RandomBytes = (n) => new Uint8Array(nodeRandomBytes(n));

function deriveKey(password: string, salt: Uint8Array, params: LockParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_BYTES,
      { N: 2 ** params.logN, r: params.r, p: params.p, maxmem: MAXMEM },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

export async function lockSecret(
  secret: Uint8Array,
  password: string,
  aad: string,
  opts: { params?: LockParams; randomBytes?: RandomBytes } = {},
): Promise<string> {
  const params = opts.params ?? DEFAULT_LOCK_PARAMS;
  const random = opts.randomBytes ?? defaultRandom;
  const salt = random(SALT_BYTES);
  const iv = random(IV_BYTES);
  const key = await deriveKey(password, salt, params);
  try {
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(secret), cipher.final(), cipher.getAuthTag()]);
    return [
      VERSION,
      `ln=${params.logN},r=${params.r},p=${params.p}`,
      Buffer.from(salt).toString('base64'),
      Buffer.from(iv).toString('base64'),
      body.toString('base64'),
    ].join('$');
  } finally {
    key.fill(0);
  }
}

/** The secret, or null when the password (or the binding) is wrong. Malformed text throws. */
export async function unlockSecret(
  locked: string,
  password: string,
  aad: string,
): Promise<Uint8Array | null> {
  const parts = locked.split('$');
  const m = /^ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})$/.exec(parts[1] ?? '');
  if (parts.length !== 5 || parts[0] !== VERSION || !m) {
    throw new ReaderKeyLockError('the locked reader key has an unknown format');
  }
  const params = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (params.logN < 1 || params.logN > 22 || params.r < 1 || params.p < 1) {
    throw new ReaderKeyLockError('the locked reader key has out-of-range parameters');
  }
  const salt = Buffer.from(parts[2] as string, 'base64');
  const iv = Buffer.from(parts[3] as string, 'base64');
  const body = Buffer.from(parts[4] as string, 'base64');
  if (salt.length !== SALT_BYTES || iv.length !== IV_BYTES || body.length !== KEY_BYTES + TAG_BYTES) {
    throw new ReaderKeyLockError('the locked reader key is truncated or malformed');
  }
  const key = await deriveKey(password, salt, params);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(body.subarray(KEY_BYTES));
    return new Uint8Array(Buffer.concat([decipher.update(body.subarray(0, KEY_BYTES)), decipher.final()]));
  } catch {
    return null;
  } finally {
    key.fill(0);
  }
}
