// The first screen: unlock the wallet stored in this browser, import a
// secret key into a new one, or connect an external wallet (whose delegated
// mailbox keys the vault then keeps).

import bs58 from 'bs58';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ConnectionSettings } from '../settings.ts';
import type { BackupFile } from '../wallet/backup.ts';
import {
  availableWallets,
  chainIdFor,
  type ExternalProvider,
  type WalletChoice,
} from '../wallet/external.ts';
import { parseSecretKey } from '../wallet/secret-key.ts';
import {
  forgetVault,
  MIN_PASSPHRASE,
  openVault,
  saveVault,
  type VaultContents,
  vaultSummary,
} from '../wallet/vault.ts';
import { RestoreFields, restoreContents } from './restore.tsx';
import { SettingsView } from './settings-view.tsx';
import { Field, short } from './widgets.tsx';

export interface Unlocked {
  /** The connected browser wallet, for a vault of kind 'external'. */
  provider: ExternalProvider | null;
  vault: VaultContents;
  passphrase: string;
}

interface Props {
  storage: Storage;
  settings: ConnectionSettings;
  onUnlocked: (u: Unlocked) => void;
  errorText: (err: unknown) => string;
  modeLabel: string;
}

async function connectExternal(choice: WalletChoice, expected?: string): Promise<ExternalProvider> {
  const provider = await choice.connect();
  if (expected && provider.address !== expected) {
    throw new Error(
      `${choice.name} is connected to ${short(provider.address)}, but this browser’s vault belongs to ${short(expected)}. Switch accounts in the wallet, or forget the stored wallet.`,
    );
  }
  return provider;
}

export function UnlockScreen(props: Props) {
  const [showSettings, setShowSettings] = useState(false);
  return (
    <>
      <UnlockForm {...props} />
      <div class="narrow centered">
        <button
          type="button"
          class="link"
          aria-expanded={showSettings}
          onClick={() => setShowSettings(!showSettings)}
        >
          Connection settings
        </button>
      </div>
      {showSettings && (
        <div class="card narrow">
          <SettingsView current={props.settings} storage={props.storage} />
        </div>
      )}
    </>
  );
}

type SetupTab = 'import' | 'external' | 'restore';

const SETUP_TABS: [SetupTab, string][] = [
  ['import', 'Import a secret key'],
  ['external', 'Connect a browser wallet'],
  ['restore', 'Restore a backup'],
];

function UnlockForm({ storage, settings, onUnlocked, errorText, modeLabel }: Props) {
  const chain = chainIdFor(settings.rpcUrl);
  const [stored, setStored] = useState(() => vaultSummary(storage));
  const [tab, setTab] = useState<SetupTab>('import');
  // The WAI-ARIA tabs pattern: one tab in the Tab order (the selected one);
  // Left/Right (wrapping), Home and End move to a tab and select it.
  const onTabKey = (e: KeyboardEvent) => {
    const at = SETUP_TABS.findIndex(([id]) => id === tab);
    const n = SETUP_TABS.length;
    const to =
      e.key === 'ArrowRight'
        ? (at + 1) % n
        : e.key === 'ArrowLeft'
          ? (at - 1 + n) % n
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? n - 1
              : -1;
    if (to < 0) return;
    e.preventDefault();
    const id = (SETUP_TABS[to] as [SetupTab, string])[0];
    setTab(id);
    document.getElementById(`setup-tab-${id}`)?.focus();
  };
  const [backup, setBackup] = useState<BackupFile | null>(null);
  const [backupPass, setBackupPass] = useState('');
  const [passphrase, setPassphrase] = useState('');
  const [confirm, setConfirm] = useState('');
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [wallets, setWallets] = useState<WalletChoice[]>([]);
  const passRef = useRef<HTMLInputElement>(null);
  useEffect(() => passRef.current?.focus(), [stored]);

  useEffect(() => {
    // Extensions may announce themselves a little after load.
    const look = () => setWallets(availableWallets(window, chain));
    look();
    const t = setTimeout(look, 500);
    return () => clearTimeout(t);
  }, []);

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError('');
    try {
      await fn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const unlock = () =>
    run(async () => {
      const vault = await openVault(storage, passphrase);
      let provider: ExternalProvider | null = null;
      if (vault.wallet.type === 'external') {
        const choice = availableWallets(window, chain)[0];
        if (!choice)
          throw new Error(
            'This vault belongs to a browser wallet, but no wallet extension answers on this page.',
          );
        provider = await connectExternal(choice, vault.wallet.address);
      }
      onUnlocked({ provider, vault, passphrase });
    });

  const checkNewPassphrase = () => {
    if (passphrase.length < MIN_PASSPHRASE)
      throw new Error(`Choose a passphrase of at least ${MIN_PASSPHRASE} characters.`);
    if (passphrase !== confirm) throw new Error('The two passphrases differ.');
  };

  const importKey = () =>
    run(async () => {
      const key = parseSecretKey(secret);
      checkNewPassphrase();
      const address = bs58.encode(key.subarray(32));
      const vault: VaultContents = {
        wallet: { type: 'in-page', secretKey: Array.from(key) },
        mailboxKeys: [],
      };
      await saveVault(storage, passphrase, vault, address);
      setSecret('');
      onUnlocked({ provider: null, vault, passphrase });
    });

  const restore = () =>
    run(async () => {
      const vault = await restoreContents(backup, backupPass);
      checkNewPassphrase();
      let provider: ExternalProvider | null = null;
      let address: string;
      if (vault.wallet.type === 'external') {
        const choice = availableWallets(window, chain)[0];
        if (!choice)
          throw new Error('This backup belongs to a browser wallet; connect that wallet’s extension first.');
        provider = await connectExternal(choice, vault.wallet.address);
        address = vault.wallet.address;
      } else {
        address = bs58.encode(Uint8Array.from(vault.wallet.secretKey).subarray(32));
      }
      await saveVault(storage, passphrase, vault, address);
      setBackupPass('');
      onUnlocked({ provider, vault, passphrase });
    });

  const connect = (choice: WalletChoice) =>
    run(async () => {
      checkNewPassphrase();
      const provider = await connectExternal(choice);
      const vault: VaultContents = {
        wallet: { type: 'external', address: provider.address },
        mailboxKeys: [],
      };
      await saveVault(storage, passphrase, vault, provider.address);
      onUnlocked({ provider, vault, passphrase });
    });

  if (stored) {
    return (
      <main class="card narrow" aria-labelledby="unlock-title">
        <h1 id="unlock-title">Unlock your wallet</h1>
        <p>
          {stored.kind === 'in-page' ? 'Wallet' : 'Browser wallet'} <code>{short(stored.address)}</code> is
          stored in this browser, encrypted under your passphrase. <span class="badge">{modeLabel}</span>
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            unlock();
          }}
        >
          <Field label="Passphrase">
            <input
              ref={passRef}
              type="password"
              autoComplete="current-password"
              value={passphrase}
              onInput={(e) => setPassphrase(e.currentTarget.value)}
            />
          </Field>
          <button type="submit" disabled={busy}>
            {busy ? 'Unlocking…' : 'Unlock'}
          </button>
        </form>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <p>
          <button
            type="button"
            class="link"
            onClick={() => {
              if (confirmForget()) {
                forgetVault(storage);
                setStored(null);
              }
            }}
          >
            Forget this wallet
          </button>
        </p>
      </main>
    );
  }

  return (
    <main class="card narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">Sealpost webmail</h1>
      <p>
        Your wallet opens your mail. Keys stay in this browser, encrypted under a passphrase you choose.{' '}
        <span class="badge">{modeLabel}</span>
      </p>
      <div role="tablist" class="tabs" aria-label="How to set up" onKeyDown={onTabKey}>
        {SETUP_TABS.map(([id, label]) => (
          <button
            type="button"
            role="tab"
            key={id}
            id={`setup-tab-${id}`}
            aria-selected={tab === id}
            aria-controls="setup-panel"
            tabIndex={tab === id ? 0 : -1}
            onClick={() => setTab(id)}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="setup-panel" aria-labelledby={`setup-tab-${tab}`}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (tab === 'import') importKey();
            if (tab === 'restore') restore();
          }}
        >
          {tab === 'import' && (
            <>
              <Field
                label="Keypair file"
                hint="A Solana CLI keypair file (id.json); it is read in this page only"
              >
                <input
                  type="file"
                  accept="application/json,.json"
                  data-testid="keypair-file"
                  onChange={async (e) => {
                    const picked = e.currentTarget.files?.[0];
                    if (picked) setSecret((await picked.text()).trim());
                  }}
                />
              </Field>
              <Field label="Secret key (Solana CLI keypair JSON or base58)">
                <input
                  type="password"
                  value={secret}
                  onInput={(e) => setSecret(e.currentTarget.value)}
                  spellcheck={false}
                  autoComplete="off"
                />
              </Field>
              <p class="warning">
                Whoever sees this key controls the wallet and its funds. Paste it only on a computer you
                trust, with nobody watching the screen.
              </p>
            </>
          )}
          {tab === 'restore' && (
            <>
              <RestoreFields
                file={backup}
                onFile={(f, err) => {
                  setBackup(f);
                  setError(err);
                }}
              />
              <Field label="Backup passphrase">
                <input
                  type="password"
                  autoComplete="off"
                  value={backupPass}
                  onInput={(e) => setBackupPass(e.currentTarget.value)}
                />
              </Field>
            </>
          )}
          <Field label="New passphrase">
            <input
              type="password"
              autoComplete="new-password"
              value={passphrase}
              onInput={(e) => setPassphrase(e.currentTarget.value)}
            />
          </Field>
          <Field label="Passphrase again">
            <input
              type="password"
              autoComplete="new-password"
              value={confirm}
              onInput={(e) => setConfirm(e.currentTarget.value)}
            />
          </Field>
          {tab === 'import' || tab === 'restore' ? (
            <button type="submit" disabled={busy}>
              {busy ? 'Encrypting…' : tab === 'import' ? 'Import and unlock' : 'Restore and unlock'}
            </button>
          ) : wallets.length === 0 ? (
            <p>
              No browser wallet answers on this page. Install one (it must support signAndSendTransaction), or
              import a key.
            </p>
          ) : (
            <ul class="plain">
              {wallets.map((w) => (
                <li key={w.name}>
                  <button type="button" disabled={busy} onClick={() => connect(w)}>
                    Connect {w.name}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </form>
        {tab === 'external' && (
          <p class="muted">
            A browser wallet cannot decrypt mail: after connecting, publish a mailbox key under Keys. Its
            secret is kept in this browser’s vault.
          </p>
        )}
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </main>
  );
}

function confirmForget(): boolean {
  return window.confirm(
    'Remove the encrypted wallet and its mailbox keys from this browser? Keep a copy of your keys first.',
  );
}
