// The key backup file: the vault's contents (an in-page wallet's secret key,
// or an external wallet's address, plus every delegated mailbox key) in a
// passphrase-protected JSON file the holder downloads and restores in another
// browser. The format is documented in docs/webmail.md ("Key backup"):
// PBKDF2-HMAC-SHA256 → AES-256-GCM as in the vault, with the header fields
// bound as additional authenticated data so a changed address or format is
// detected like a wrong passphrase.
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import {
  b64,
  deriveKey,
  MIN_PASSPHRASE,
  PBKDF2_ITERATIONS,
  type StoredMailboxKey,
  unb64,
  type VaultContents,
} from './vault.ts';

export const BACKUP_FORMAT = 'sealpost-key-backup';
export const BACKUP_VERSION = 1;
/** Bounds on a file's iteration count: weaker is refused, higher would freeze the page. */
const MIN_ITERATIONS = 100_000;
const MAX_ITERATIONS = 10_000_000;

export interface BackupFile {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  /** The wallet's base58 address (in the clear, so the file can be told apart). */
  address: string;
  kind: VaultContents['wallet']['type'];
  /** ISO time of the backup. */
  created: string;
  mailbox_keys: number;
  kdf: { name: 'pbkdf2-sha256'; iterations: number; salt: string };
  cipher: { name: 'aes-256-gcm'; iv: string };
  /** base64 of AES-GCM(JSON of the vault contents), tag included. */
  box: string;
}

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

export class BackupPassphraseError extends BackupError {
  constructor() {
    super('That passphrase does not open this backup (or the file was changed). Try again.');
    this.name = 'BackupPassphraseError';
  }
}

function headerAad(f: Pick<BackupFile, 'format' | 'version' | 'address' | 'kind'>): Uint8Array {
  return new TextEncoder().encode(`${f.format}\n${f.version}\n${f.address}\n${f.kind}`);
}

function walletAddress(contents: VaultContents): string {
  return contents.wallet.type === 'in-page'
    ? bs58.encode(Uint8Array.from(contents.wallet.secretKey).subarray(32))
    : contents.wallet.address;
}

export async function createBackup(
  contents: VaultContents,
  passphrase: string,
  now: Date = new Date(),
): Promise<BackupFile> {
  if (passphrase.length < MIN_PASSPHRASE) {
    throw new BackupError(`Choose a backup passphrase of at least ${MIN_PASSPHRASE} characters.`);
  }
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const header = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    address: walletAddress(contents),
    kind: contents.wallet.type,
  } as const;
  const key = await deriveKey(passphrase, salt, PBKDF2_ITERATIONS);
  const plain = new TextEncoder().encode(JSON.stringify(contents));
  const box = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: headerAad(header) as BufferSource },
      key,
      plain,
    ),
  );
  plain.fill(0);
  return {
    ...header,
    created: now.toISOString(),
    mailbox_keys: contents.mailboxKeys.length,
    kdf: { name: 'pbkdf2-sha256', iterations: PBKDF2_ITERATIONS, salt: b64(salt) },
    cipher: { name: 'aes-256-gcm', iv: b64(iv) },
    box: b64(box),
  };
}

/** Reads the file's header, refusing anything that is not a backup this page can open. */
export function parseBackup(text: string): BackupFile {
  let f: Partial<BackupFile>;
  try {
    f = JSON.parse(text) as Partial<BackupFile>;
  } catch {
    throw new BackupError('This file is not a Sealpost key backup (it is not JSON).');
  }
  if (typeof f !== 'object' || f === null || f.format !== BACKUP_FORMAT) {
    throw new BackupError('This file is not a Sealpost key backup.');
  }
  if (f.version !== BACKUP_VERSION) {
    throw new BackupError(`This backup has version ${String(f.version)}; this page reads version 1.`);
  }
  const iterations = f.kdf?.iterations;
  if (
    f.kdf?.name !== 'pbkdf2-sha256' ||
    typeof iterations !== 'number' ||
    !Number.isInteger(iterations) ||
    iterations < MIN_ITERATIONS ||
    iterations > MAX_ITERATIONS ||
    typeof f.kdf.salt !== 'string' ||
    f.cipher?.name !== 'aes-256-gcm' ||
    typeof f.cipher.iv !== 'string' ||
    typeof f.box !== 'string' ||
    typeof f.address !== 'string' ||
    (f.kind !== 'in-page' && f.kind !== 'external')
  ) {
    throw new BackupError('This key backup is damaged or incomplete; use another copy.');
  }
  return f as BackupFile;
}

function checkContents(c: unknown, address: string): VaultContents {
  const v = c as VaultContents;
  const okKey = (k: StoredMailboxKey) =>
    typeof k?.secret === 'string' && typeof k.publicKey === 'string' && typeof k.addedAt === 'number';
  if (!v || !Array.isArray(v.mailboxKeys) || !v.mailboxKeys.every(okKey) || !v.wallet) {
    throw new BackupError('This key backup opened but its contents are damaged; use another copy.');
  }
  if (v.wallet.type === 'in-page') {
    const sk = Uint8Array.from(v.wallet.secretKey ?? []);
    const pub = sk.length === 64 ? ed25519.getPublicKey(sk.subarray(0, 32)) : null;
    if (!pub?.every((b, i) => b === sk[32 + i])) {
      throw new BackupError('The wallet key in this backup is damaged; use another copy.');
    }
  } else if (v.wallet.type !== 'external' || typeof v.wallet.address !== 'string') {
    throw new BackupError('This key backup opened but its contents are damaged; use another copy.');
  }
  if (walletAddress(v) !== address) {
    throw new BackupError('The wallet inside this backup is not the one its header names; use another copy.');
  }
  return v;
}

export async function openBackup(file: BackupFile, passphrase: string): Promise<VaultContents> {
  let salt: Uint8Array;
  let iv: Uint8Array;
  let box: Uint8Array;
  try {
    salt = unb64(file.kdf.salt);
    iv = unb64(file.cipher.iv);
    box = unb64(file.box);
  } catch {
    throw new BackupError('This key backup is damaged (bad base64); use another copy.');
  }
  const key = await deriveKey(passphrase, salt, file.kdf.iterations);
  let plain: Uint8Array;
  try {
    plain = new Uint8Array(
      await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: iv as BufferSource, additionalData: headerAad(file) as BufferSource },
        key,
        box as BufferSource,
      ),
    );
  } catch {
    throw new BackupPassphraseError();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(plain));
  } finally {
    plain.fill(0);
  }
  return checkContents(parsed, file.address);
}

/** The file name offered for download. */
export function backupFileName(file: BackupFile): string {
  return `sealpost-keys-${file.address.slice(0, 8)}-${file.created.slice(0, 10)}.json`;
}
