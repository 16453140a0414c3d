// Entry: read the settings (or the server's defaults on a first visit in
// server mode), decide the mode, and show the unlock screen. The unlock
// screen is all the first load carries; the app itself (chain client,
// sealing, mail parsing) loads in parallel while the user types the
// passphrase. A failure before the app is up is written into the page.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  type ConnectionSettings,
  type Mode,
  modeOf,
  type ServerDefaults,
  storedSettings,
  withServerDefaults,
} from './settings.ts';
import { type Unlocked, UnlockScreen } from './ui/unlock.tsx';
import { listenForWallets } from './wallet/external.ts';
import './styles.css';

type AppModule = typeof import('./app.tsx');
const appModule: Promise<AppModule> = import('./app.tsx');

async function serverDefaults(): Promise<ServerDefaults | null> {
  try {
    const res = await fetch('./config.json', { cache: 'no-store' });
    return res.ok ? ((await res.json()) as ServerDefaults) : null;
  } catch {
    return null;
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

function Root({ settings, mode, storage }: { settings: ConnectionSettings; mode: Mode; storage: Storage }) {
  const [unlocked, setUnlocked] = useState<Unlocked | null>(null);
  const [app, setApp] = useState<AppModule | null>(null);
  const [loadError, setLoadError] = useState('');
  useEffect(() => {
    appModule.then(setApp, (err) =>
      setLoadError(`The webmail could not load: ${messageOf(err)}. Reload the page.`),
    );
  }, []);
  const modeLabel = mode.kind === 'trustless' ? 'Trustless mode' : `Server: ${mode.apiUrl}`;
  if (!unlocked) {
    return (
      <UnlockScreen
        storage={storage}
        settings={settings}
        onUnlocked={setUnlocked}
        errorText={messageOf}
        modeLabel={modeLabel}
      />
    );
  }
  if (loadError)
    return (
      <p role="alert" class="error card narrow">
        {loadError}
      </p>
    );
  if (!app)
    return (
      <p aria-busy="true" class="card narrow">
        Loading…
      </p>
    );
  return (
    <app.App
      settings={settings}
      mode={mode}
      storage={storage}
      unlocked={unlocked}
      onLock={() => setUnlocked(null)}
    />
  );
}

async function boot(root: HTMLElement): Promise<void> {
  listenForWallets(window);
  const storage = window.localStorage;
  // No stored settings means "same origin": ask the serving API for its chain and IPFS addresses.
  const settings = storedSettings(storage) ?? withServerDefaults(await serverDefaults());
  const mode = modeOf(settings, location.origin);
  root.textContent = '';
  render(<Root settings={settings} mode={mode} storage={storage} />, root);
}

const root = document.getElementById('app') as HTMLElement;
boot(root).catch((err: unknown) => {
  root.textContent = `The webmail could not start: ${messageOf(err)}. Reload the page; if it persists, clear this site's data.`;
});
