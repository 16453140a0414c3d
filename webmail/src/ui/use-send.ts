// What every on-chain send in the page shares: the compose dependencies
// (chain, wallet, pin service), progress in plain words, and a synchronous
// one-at-a-time guard — a second click or Enter that arrives before the
// re-render disabling the button must not start a second send.
import { useRef, useState } from 'preact/hooks';
import type { ComposeDeps, ComposeStep } from '../chain/compose.ts';
import { pinBytes } from '../chain/pin.ts';
import { useApp } from '../session.ts';

const STEP_TEXT: Record<ComposeStep, string> = {
  resolve: 'Looking up the recipient on chain…',
  seal: 'Encrypting the message so only the recipient can open it…',
  pin: 'Storing the encrypted message on IPFS…',
  sign: 'Waiting for your wallet to sign the transaction…',
  confirm: 'Waiting for the network to confirm the message…',
};

export function useSend() {
  const app = useApp();
  const s = app.session;
  const [step, setStep] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const inFlight = useRef(false);

  const deps: ComposeDeps = {
    conn: s.conn,
    programId: s.programId,
    wallet: s.wallet,
    pin: (bytes: Uint8Array) => pinBytes(s.settings.pinUrl, s.settings.pinToken, bytes),
    onStep: (st: ComposeStep) => setStep(STEP_TEXT[st]),
  };

  /** Runs `fn` unless a send is under way; its failure becomes `error`. */
  const guarded = async (fn: () => Promise<void>) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    setError('');
    try {
      await fn();
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      inFlight.current = false;
      setBusy(false);
      setStep('');
    }
  };

  return { deps, step, setStep, busy, error, setError, guarded };
}
