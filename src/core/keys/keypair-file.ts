// Solana CLI keypair files: a JSON array of 64 numbers, the 32-byte ed25519
// seed followed by its 32-byte public key, so keys made by `solana-keygen`
// work wherever Sealpost asks for a key file and vice versa.
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';

export interface Keypair {
  /** 64 bytes: seed then public key (Solana's secretKey layout). */
  secretKey: Uint8Array;
  publicKey: Uint8Array;
  /** base58 of publicKey. */
  address: string;
}

export class KeypairFileError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`keypair file ${path}: ${reason}`);
    this.name = 'KeypairFileError';
  }
}

export class FileExistsError extends Error {
  constructor(readonly path: string) {
    super(`${path} already exists; refusing to overwrite it (pass --force to replace it)`);
    this.name = 'FileExistsError';
  }
}

export function keypairFromSeed(seed: Uint8Array): Keypair {
  if (seed.length !== 32) throw new Error(`ed25519 seed must be 32 bytes, got ${seed.length}`);
  const publicKey = ed25519.getPublicKey(seed);
  const secretKey = new Uint8Array(64);
  secretKey.set(seed, 0);
  secretKey.set(publicKey, 32);
  return { secretKey, publicKey, address: bs58.encode(publicKey) };
}

export function generateKeypair(): Keypair {
  return keypairFromSeed(new Uint8Array(randomBytes(32)));
}

/** Validates the JSON text of a keypair file; `source` names it in errors. */
export function parseKeypairJson(text: string, source: string): Keypair {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new KeypairFileError(
      source,
      'not JSON; expected an array of 64 numbers (Solana CLI keypair format)',
    );
  }
  if (!Array.isArray(value)) {
    throw new KeypairFileError(source, 'expected a JSON array of 64 numbers (Solana CLI keypair format)');
  }
  if (value.length !== 64) {
    throw new KeypairFileError(
      source,
      `expected 64 numbers (32-byte seed + 32-byte public key), found ${value.length}`,
    );
  }
  const bad = value.findIndex((n) => typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 255);
  if (bad !== -1) {
    throw new KeypairFileError(
      source,
      `element ${bad} is ${JSON.stringify(value[bad])}; expected an integer 0-255`,
    );
  }
  const bytes = Uint8Array.from(value as number[]);
  const keypair = keypairFromSeed(bytes.subarray(0, 32));
  const stored = bytes.subarray(32);
  if (!stored.every((b, i) => b === keypair.publicKey[i])) {
    throw new KeypairFileError(
      source,
      `the public key half (${bs58.encode(stored)}) does not belong to the seed (which gives ${keypair.address})`,
    );
  }
  return keypair;
}

export function readKeypairFile(path: string): Keypair {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint = 'create one with `sealpost keygen wallet FILE` or `solana-keygen new -o FILE`';
    throw new KeypairFileError(path, code === 'ENOENT' ? `file not found; ${hint}` : (err as Error).message);
  }
  return parseKeypairJson(text, path);
}

/**
 * Writes a secret file with mode 0600. Without `force` an existing file is
 * never touched (FileExistsError); the file appears complete or not at all,
 * because it is written aside and then linked (exclusive) or renamed (force).
 */
export function writeSecretFile(
  path: string,
  data: string | Uint8Array,
  opts: { force?: boolean } = {},
): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  writeFileSync(tmp, data, { mode: 0o600, flag: 'wx' });
  try {
    if (opts.force) {
      renameSync(tmp, path);
      return;
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new FileExistsError(path);
      throw err;
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

/** Writes the keypair in Solana CLI format (`[n,n,…]`), mode 0600. */
export function writeKeypairFile(path: string, keypair: Keypair, opts: { force?: boolean } = {}): void {
  writeSecretFile(path, JSON.stringify(Array.from(keypair.secretKey)), opts);
}
