// Server mode: wallet-challenge login. The nonce's exact UTF-8 bytes are
// signed in the page (in-page wallet) or by the browser wallet.
import bs58 from 'bs58';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiClient } from '../server/api.ts';
import type { Wallet } from '../wallet/wallet.ts';
import { ErrorText, short } from './widgets.tsx';

export async function signNonce(wallet: Wallet, nonce: string): Promise<string> {
  return bs58.encode(await wallet.signMessage(new TextEncoder().encode(nonce)));
}

/** A fresh step-up proof: challenge, then the wallet's signature over its exact bytes. */
export async function stepUpProof(api: ApiClient, wallet: Wallet): Promise<string> {
  const { nonce } = await api.stepUpChallenge();
  return signNonce(wallet, nonce);
}

export function LoginScreen({
  api,
  wallet,
  onLoggedIn,
  errorText,
}: {
  api: ApiClient;
  wallet: Wallet;
  onLoggedIn: () => void;
  errorText: (e: unknown) => string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [needsAccount, setNeedsAccount] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  useEffect(() => first.current?.focus(), []);

  const login = async () => {
    setBusy(true);
    setError('');
    try {
      if (!api.token) {
        const { nonce } = await api.challenge(wallet.address);
        await api.login(wallet.address, await signNonce(wallet, nonce));
      }
      try {
        await api.account();
        onLoggedIn();
      } catch (err) {
        if ((err as { code?: string }).code === 'account_not_found') setNeedsAccount(true);
        else throw err;
      }
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const create = async () => {
    setBusy(true);
    setError('');
    try {
      await api.createAccount();
      onLoggedIn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="card narrow" aria-labelledby="login-title">
      <h1 id="login-title">Log in to {api.base}</h1>
      <p>
        Your wallet <code>{short(wallet.address)}</code> signs a one-time challenge from the server. No
        password, no transaction.
      </p>
      {!needsAccount ? (
        <button type="button" ref={first} onClick={login} disabled={busy}>
          {busy ? 'Signing…' : 'Log in with my wallet'}
        </button>
      ) : (
        <>
          <p>This server has no account for your wallet yet.</p>
          <button type="button" onClick={create} disabled={busy}>
            Create my account
          </button>
        </>
      )}
      <ErrorText text={error} />
    </main>
  );
}
