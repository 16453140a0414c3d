// The page: unlock, then (server mode) log in, then the shell with its
// navigation. Views change through history entries so Back works, focus
// moves to each view's heading, and any failure shows as text — the page is
// never left blank.
import type { ComponentChildren } from 'preact';
import { useEffect, useErrorBoundary, useMemo, useState } from 'preact/hooks';
import { humanError, isRefusal } from './errors.ts';
import { forgetMessages } from './messages.ts';
import { ApiClient } from './server/api.ts';
import { Ctx, makeConnection, type Session, type View } from './session.ts';
import type { ConnectionSettings, Mode } from './settings.ts';
import { AccountSettingsView } from './ui/account.tsx';
import { BalancesView } from './ui/balances.tsx';
import { ComposeView } from './ui/compose.tsx';
import { FoldersView } from './ui/folders.tsx';
import { Shortcuts } from './ui/help-overlay.tsx';
import { InboxView } from './ui/inbox.tsx';
import { KeysView } from './ui/keys.tsx';
import { LoginScreen } from './ui/login.tsx';
import { TopBar } from './ui/main-nav.tsx';
import { MarketView } from './ui/market.tsx';
import { PinProviderView } from './ui/pin-provider.tsx';
import { ReaderView } from './ui/reader.tsx';
import { ServerReaderView } from './ui/server-reader.tsx';
import { SettingsView } from './ui/settings-view.tsx';
import { TimelocksView } from './ui/timelocks.tsx';
import type { Unlocked } from './ui/unlock.tsx';
import { externalWallet, inPageWallet, type Wallet } from './wallet/wallet.ts';

interface Props {
  settings: ConnectionSettings;
  mode: Mode;
  storage: Storage;
  unlocked: Unlocked;
  /** Back to the unlock screen. */
  onLock: () => void;
}

function walletOf(u: Unlocked): Wallet {
  if (u.vault.wallet.type === 'in-page') return inPageWallet(Uint8Array.from(u.vault.wallet.secretKey));
  if (!u.provider) throw new Error('the browser wallet is not connected');
  return externalWallet(u.provider);
}

const TRUSTLESS_NAV: [View['name'], string][] = [
  ['inbox', 'Inbox'],
  ['compose', 'Compose'],
  ['balances', 'Balances'],
  ['keys', 'Keys'],
  ['settings', 'Settings'],
];

const SERVER_NAV: [View['name'], string][] = [
  ['folders', 'Mail'],
  ['inbox', 'Chain inbox'],
  ['compose', 'Compose'],
  ['balances', 'Balances'],
  ['market', 'Market'],
  ['timelocks', 'Timelocks'],
  ['keys', 'Keys'],
  ['account', 'Account'],
  ['pin-provider', 'Pin provider'],
  ['settings', 'Settings'],
];

const VIEW_TITLES: Record<View['name'], string> = {
  inbox: 'Inbox',
  message: 'Message',
  compose: 'Compose',
  balances: 'Balances',
  keys: 'Keys',
  settings: 'Settings',
  folders: 'Mail',
  'server-message': 'Message',
  account: 'Account',
  'pin-provider': 'Pin provider',
  market: 'Market',
  timelocks: 'Timelocks',
};

function Guard({ children, onHome }: { children: ComponentChildren; onHome: () => void }) {
  const [error, reset] = useErrorBoundary((err) => console.error(err));
  if (error) {
    return (
      <div role="alert" class="error card">
        <p>This screen failed: {error instanceof Error ? error.message : String(error)}</p>
        <button
          type="button"
          onClick={() => {
            reset();
            onHome();
          }}
        >
          Back
        </button>
      </div>
    );
  }
  return <>{children}</>;
}

export function App({ settings, mode, storage, unlocked, onLock }: Props) {
  const api = useMemo(() => (mode.kind === 'server' ? new ApiClient(mode.apiUrl) : null), [mode]);
  const [session, setSession] = useState<Session>(() => ({
    settings,
    mode,
    conn: makeConnection(settings.rpcUrl),
    programId: settings.programId,
    wallet: walletOf(unlocked),
    vault: unlocked.vault,
    passphrase: unlocked.passphrase,
    api,
    storage,
  }));
  const [loggedIn, setLoggedIn] = useState(false);
  const home: View = mode.kind === 'server' ? { name: 'folders' } : { name: 'inbox' };
  const [view, setView] = useState<View>(home);
  const [status, setStatus] = useState<{ text: string; kind: 'info' | 'error' } | null>(null);
  const errorText = (err: unknown) => {
    // A refusal is shown in words and is no fault: only the unexpected go to the console.
    if (!isRefusal(err)) console.error(err);
    return humanError(err, settings);
  };
  useEffect(() => {
    const onPop = (e: PopStateEvent) => setView((e.state as { view?: View } | null)?.view ?? home);
    const onRejection = (e: PromiseRejectionEvent) => setStatus({ text: errorText(e.reason), kind: 'error' });
    window.addEventListener('popstate', onPop);
    window.addEventListener('unhandledrejection', onRejection);
    history.replaceState({ view: home }, '');
    return () => {
      window.removeEventListener('popstate', onPop);
      window.removeEventListener('unhandledrejection', onRejection);
    };
  }, []);

  useEffect(() => {
    document.querySelector<HTMLElement>('#view h1')?.focus();
    // The inbox sets its own (with the unread count); a reader refines its own once the subject is known.
    if (view.name !== 'inbox') document.title = `${VIEW_TITLES[view.name]} — Sealpost`;
  }, [view]);

  if (api && !loggedIn) {
    return (
      <LoginScreen
        api={api}
        wallet={session.wallet}
        onLoggedIn={() => setLoggedIn(true)}
        errorText={errorText}
      />
    );
  }

  const navigate = (v: View) => {
    setStatus(null);
    history.pushState({ view: v }, '');
    setView(v);
  };
  const lock = () => {
    forgetMessages();
    if (api) api.token = null;
    onLock();
  };
  const nav = mode.kind === 'server' ? SERVER_NAV : TRUSTLESS_NAV;
  const ctx = {
    session,
    setSession,
    navigate,
    notify: (text: string, kind: 'info' | 'error' = 'info') => setStatus({ text, kind }),
    errorText,
  };

  return (
    <Ctx.Provider value={ctx}>
      <TopBar
        modeLabel={mode.kind === 'trustless' ? 'trustless' : 'server'}
        address={session.wallet.address}
        items={nav}
        current={view.name}
        onNavigate={navigate}
        onLock={lock}
      />
      <div role="status" aria-live="polite" class={status ? `status ${status.kind}` : 'status'}>
        {status?.text}
      </div>
      <main id="view">
        <Guard onHome={() => navigate(home)}>{renderView(view, settings, storage, lock)}</Guard>
      </main>
      <Shortcuts />
    </Ctx.Provider>
  );
}

function renderView(view: View, settings: ConnectionSettings, storage: Storage, lock: () => void) {
  switch (view.name) {
    case 'inbox':
      return <InboxView />;
    case 'message':
      return <ReaderView key={view.address} address={view.address} />;
    case 'compose':
      return <ComposeView key={JSON.stringify(view.draft ?? null)} initial={view.draft} />;
    case 'balances':
      return <BalancesView />;
    case 'keys':
      return <KeysView />;
    case 'settings':
      return <SettingsView current={settings} storage={storage} onLock={lock} />;
    case 'folders':
      return <FoldersView />;
    case 'server-message':
      return <ServerReaderView key={view.id} id={view.id} emailAddress={view.emailAddress ?? null} />;
    case 'account':
      return <AccountSettingsView />;
    case 'pin-provider':
      return <PinProviderView />;
    case 'market':
      return <MarketView />;
    case 'timelocks':
      return <TimelocksView />;
  }
}
