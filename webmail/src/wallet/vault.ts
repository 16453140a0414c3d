// The in-page wallet's storage: everything secret the page keeps (the wallet
// secret key of an imported wallet, the delegated mailbox keys) in one
// record in localStorage, encrypted under a passphrase. Decision: WebCrypto
// PBKDF2-HMAC-SHA256 (600 000 iterations, 16-byte random salt) derives an
// AES-256-GCM key (12-byte random IV); the GCM tag detects a wrong
// passphrase. libsodium's Argon2id is only in its "sumo" build, which would
// double the page's WebAssembly; WebCrypto is native and needs nothing.
export const VAULT_KEY = 'sealpost.vault.v1';

export interface StoredMailboxKey {
  /** base64 of the 32-byte X25519 secret key. */
  secret: string;
  /** base58 of the public key, as published in the MailboxKey account. */
  publicKey: string;
  addedAt: number;
}

export type VaultWallet = { type: 'in-page'; secretKey: number[] } | { type: 'external'; address: string };

export interface VaultContents {
  wallet: VaultWallet;
  mailboxKeys: StoredMailboxKey[];
}

interface VaultRecord {
  v: 1;
  kdf: 'pbkdf2-sha256';
  iterations: number;
  cipher: 'aes-256-gcm';
  salt: string;
  iv: string;
  box: string;
  /** Shown on the unlock screen before the passphrase is typed. */
  address: string;
  kind: VaultWallet['type'];
}

export class WrongPassphraseError extends Error {
  constructor() {
    super('Wrong passphrase. Try again.');
    this.name = 'WrongPassphraseError';
  }
}

export const MIN_PASSPHRASE = 8;

const b64 = (u: Uint8Array) => btoa(String.fromCharCode(...u));
const unb64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

export function vaultSummary(storage: Storage): { address: string; kind: VaultWallet['type'] } | null {
  const text = storage.getItem(VAULT_KEY);
  if (!text) return null;
  try {
    const r = JSON.parse(text) as VaultRecord;
    return r.v === 1 ? { address: r.address, kind: r.kind } : null;
  } catch {
    return null;
  }
}

export const PBKDF2_ITERATIONS = 600_000;

export async function deriveKey(
  passphrase: string,
  salt: Uint8Array,
  iterations: number,
): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, [
    'deriveKey',
  ]);
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt: salt as BufferSource, iterations },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

export async function saveVault(
  storage: Storage,
  passphrase: string,
  contents: VaultContents,
  address: string,
): Promise<void> {
  if (passphrase.length < MIN_PASSPHRASE) {
    throw new Error(`Choose a passphrase of at least ${MIN_PASSPHRASE} characters.`);
  }
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await deriveKey(passphrase, salt, PBKDF2_ITERATIONS);
  const plain = new TextEncoder().encode(JSON.stringify(contents));
  const box = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plain));
  plain.fill(0);
  const record: VaultRecord = {
    v: 1,
    kdf: 'pbkdf2-sha256',
    iterations: PBKDF2_ITERATIONS,
    cipher: 'aes-256-gcm',
    salt: b64(salt),
    iv: b64(iv),
    box: b64(box),
    address,
    kind: contents.wallet.type,
  };
  storage.setItem(VAULT_KEY, JSON.stringify(record));
}

export async function openVault(storage: Storage, passphrase: string): Promise<VaultContents> {
  const text = storage.getItem(VAULT_KEY);
  if (!text) throw new Error('No wallet is stored in this browser yet.');
  let r: VaultRecord;
  try {
    r = JSON.parse(text) as VaultRecord;
  } catch {
    throw new Error('The stored wallet is damaged (not JSON); forget it and import the key again.');
  }
  if (r.v !== 1 || r.kdf !== 'pbkdf2-sha256' || r.cipher !== 'aes-256-gcm') {
    throw new Error('The stored wallet has a format this page does not know.');
  }
  const key = await deriveKey(passphrase, unb64(r.salt), r.iterations);
  let plain: Uint8Array;
  try {
    plain = new Uint8Array(
      await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: unb64(r.iv) as BufferSource },
        key,
        unb64(r.box) as BufferSource,
      ),
    );
  } catch {
    throw new WrongPassphraseError();
  }
  const contents = JSON.parse(new TextDecoder().decode(plain)) as VaultContents;
  plain.fill(0);
  return contents;
}

export function forgetVault(storage: Storage): void {
  storage.removeItem(VAULT_KEY);
}

export { b64, unb64 };
