// Trustless mode's drafts: kept in this browser only, never in the clear.
// One localStorage record per wallet (`sealpost.drafts.v1.<wallet>`) holds
// every draft as one AES-256-GCM box under a key derived from the vault's
// passphrase (PBKDF2-HMAC-SHA256, the vault's iteration count, the record's
// own random salt; a fresh IV per write). The derived key is kept in the
// tab's memory so saving twice does not derive twice.
import type { Draft } from './chain/compose.ts';
import { b64, deriveKey, PBKDF2_ITERATIONS, unb64 } from './wallet/vault.ts';

export interface LocalDraft {
  id: string;
  savedAt: number;
  draft: Draft;
}

interface DraftsRecord {
  v: 1;
  salt: string;
  iv: string;
  box: string;
}

export function localDraftsKey(wallet: string): string {
  return `sealpost.drafts.v1.${wallet}`;
}

const keys = new Map<string, Promise<CryptoKey>>();

function keyFor(passphrase: string, salt: string): Promise<CryptoKey> {
  const k = `${salt}\n${passphrase}`;
  let hit = keys.get(k);
  if (!hit) {
    hit = deriveKey(passphrase, unb64(salt), PBKDF2_ITERATIONS);
    keys.set(k, hit);
    hit.catch(() => keys.delete(k));
  }
  return hit;
}

function readRecord(storage: Storage, wallet: string): DraftsRecord | null {
  try {
    const r = JSON.parse(storage.getItem(localDraftsKey(wallet)) ?? 'null') as DraftsRecord | null;
    return r && r.v === 1 && typeof r.box === 'string' ? r : null;
  } catch {
    return null;
  }
}

/** The saved drafts, newest first; throws when they were saved under another passphrase. */
export async function listLocalDrafts(
  storage: Storage,
  wallet: string,
  passphrase: string,
): Promise<LocalDraft[]> {
  const r = readRecord(storage, wallet);
  if (!r) return [];
  let plain: ArrayBuffer;
  try {
    const key = await keyFor(passphrase, r.salt);
    plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: unb64(r.iv) as BufferSource },
      key,
      unb64(r.box) as BufferSource,
    );
  } catch {
    throw new Error('The drafts in this browser were saved under another passphrase and cannot be opened.');
  }
  const list = JSON.parse(new TextDecoder().decode(plain)) as LocalDraft[];
  return list.sort((a, b) => b.savedAt - a.savedAt);
}

async function writeAll(
  storage: Storage,
  wallet: string,
  passphrase: string,
  list: LocalDraft[],
): Promise<void> {
  if (list.length === 0) {
    storage.removeItem(localDraftsKey(wallet));
    return;
  }
  const salt = readRecord(storage, wallet)?.salt ?? b64(crypto.getRandomValues(new Uint8Array(16)));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await keyFor(passphrase, salt);
  const plain = new TextEncoder().encode(JSON.stringify(list));
  const box = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plain));
  plain.fill(0);
  const record: DraftsRecord = { v: 1, salt, iv: b64(iv), box: b64(box) };
  storage.setItem(localDraftsKey(wallet), JSON.stringify(record));
}

/** Saves (or replaces, by id) a draft; returns its id. */
export async function saveLocalDraft(
  storage: Storage,
  wallet: string,
  passphrase: string,
  draft: Draft,
  id?: string,
): Promise<string> {
  const list = await listLocalDrafts(storage, wallet, passphrase);
  const key = id ?? `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const next = [{ id: key, savedAt: Date.now(), draft }, ...list.filter((d) => d.id !== key)];
  await writeAll(storage, wallet, passphrase, next);
  return key;
}

export async function deleteLocalDraft(
  storage: Storage,
  wallet: string,
  passphrase: string,
  id: string,
): Promise<void> {
  const list = await listLocalDrafts(storage, wallet, passphrase);
  if (!list.some((d) => d.id === id)) return;
  await writeAll(
    storage,
    wallet,
    passphrase,
    list.filter((d) => d.id !== id),
  );
}
