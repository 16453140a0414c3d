// What an unlocked page holds: the settings it loaded with, the wallet, the
// vault contents (re-saved under the same passphrase when keys change), the
// chain connection and, in server mode, the API client.
import { Connection } from '@solana/web3.js';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ReaderKeypair } from '../../src/mail/seal/index.ts';
import type { ApiClient } from './server/api.ts';
import type { ConnectionSettings, Mode } from './settings.ts';
import { type StoredMailboxKey, saveVault, type VaultContents } from './wallet/vault.ts';
import { readerKeys, type Wallet } from './wallet/wallet.ts';

export interface Session {
  settings: ConnectionSettings;
  mode: Mode;
  conn: Connection;
  programId: string;
  wallet: Wallet;
  vault: VaultContents;
  passphrase: string;
  api: ApiClient | null;
  storage: Storage;
}

export function makeConnection(rpcUrl: string): Connection {
  return new Connection(rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true });
}

export function readers(s: Session): ReaderKeypair[] {
  return readerKeys(s.wallet, s.vault.mailboxKeys);
}

/** Adds a delegated key to the vault and stores it, before anything is published. */
export async function addMailboxKey(s: Session, key: StoredMailboxKey): Promise<Session> {
  const vault: VaultContents = {
    ...s.vault,
    mailboxKeys: [...s.vault.mailboxKeys.filter((k) => k.publicKey !== key.publicKey), key],
  };
  await saveVault(s.storage, s.passphrase, vault, s.wallet.address);
  return { ...s, vault };
}

export interface AppContext {
  session: Session;
  setSession: (s: Session) => void;
  navigate: (v: View) => void;
  /** Shown in the status line (aria-live). */
  notify: (text: string, kind?: 'info' | 'error') => void;
  errorText: (err: unknown) => string;
}

export type View =
  | { name: 'inbox' }
  | { name: 'message'; address: string }
  | { name: 'compose'; draft?: import('./chain/compose.ts').Draft }
  | { name: 'balances' }
  | { name: 'keys' }
  | { name: 'settings' }
  | { name: 'folders' }
  | { name: 'server-message'; id: string; emailAddress?: string | null }
  | { name: 'account' }
  | { name: 'pin-provider' }
  | { name: 'market' }
  | { name: 'timelocks' };

export const Ctx = createContext<AppContext | null>(null);

export function useApp(): AppContext {
  const c = useContext(Ctx);
  if (!c) throw new Error('the app context is missing');
  return c;
}
