// The resolved recipient, shown under the To field of an on-chain send
// before anything is sealed, pinned or paid: the short wallet and the address
// it came from, or why the address is not an on-chain mailbox.
import { useEffect, useState } from 'preact/hooks';
import { addressForm, describeRecipient, resolveRecipient } from '../chain/recipient.ts';
import { useApp } from '../session.ts';
import { short } from './widgets.tsx';

type Check =
  | { kind: 'empty' }
  | { kind: 'checking' }
  | { kind: 'ok'; text: string; wallet: string }
  | { kind: 'error'; text: string };

const DEBOUNCE_MS = 350;

export function RecipientCheck({ to }: { to: string }) {
  const app = useApp();
  const s = app.session;
  const [check, setCheck] = useState<Check>({ kind: 'empty' });

  useEffect(() => {
    if (to.trim() === '') {
      setCheck({ kind: 'empty' });
      return;
    }
    const form = addressForm(to);
    if (form.kind === 'invalid') {
      setCheck({ kind: 'error', text: form.reason });
      return;
    }
    let live = true;
    setCheck({ kind: 'checking' });
    const timer = setTimeout(() => {
      resolveRecipient(s.conn, s.programId, to).then(
        (r) => {
          if (live) setCheck({ kind: 'ok', text: describeRecipient(r, short), wallet: r.wallet.toBase58() });
        },
        (err: unknown) => {
          if (live) setCheck({ kind: 'error', text: app.errorText(err) });
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [to, s.conn, s.programId]);

  if (check.kind === 'empty') return null;
  if (check.kind === 'checking') {
    return (
      <p class="hint" data-testid="recipient-checking">
        Looking up the recipient on chain…
      </p>
    );
  }
  if (check.kind === 'error') {
    return (
      <p class="error" aria-live="polite" data-testid="recipient-error">
        {check.text}
      </p>
    );
  }
  return (
    <p class="hint" data-testid="recipient-resolved" data-wallet={check.wallet} title={check.wallet}>
      Delivers to {check.text}.
    </p>
  );
}
