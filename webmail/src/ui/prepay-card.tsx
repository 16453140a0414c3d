// The prepay card: stamp count (default 1) and the per-stamp funding math —
// the recipient's posted postage, the settlement surcharge, the live
// protocol fee — plus rent when the purchase creates the frombox.
import type { PublicKey } from '@solana/web3.js';
import { useState } from 'preact/hooks';
import type { StampQuote } from '../../../chain/client.ts';
import { formatSol } from '../chain/compose.ts';
import { buyPostage, type PurchaseOutcome } from '../chain/prepay.ts';
import { useApp } from '../session.ts';
import { ErrorText, Field, short } from './widgets.tsx';

interface Props {
  recipient: PublicKey;
  recipientLabel: string;
  quote: StampQuote;
  /** Shown on the button, e.g. "and send". */
  actionSuffix?: string;
  onBought: (out: PurchaseOutcome) => void | Promise<void>;
  /** Poll budget for the purchase (ms). */
  budgetMs?: number;
}

function Sol({ lamports }: { lamports: bigint }) {
  return <span>{formatSol(lamports)} SOL</span>;
}

export function PrepayCard({ recipient, recipientLabel, quote, actionSuffix, onBought, budgetMs }: Props) {
  const app = useApp();
  const s = app.session;
  const [count, setCount] = useState('1');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const n = /^\d+$/.test(count.trim()) ? BigInt(count.trim()) : 0n;
  const total = quote.perStamp * n + quote.rent;

  const buy = async () => {
    setBusy(true);
    setError('');
    try {
      if (n < 1n) throw new Error('Buy at least one stamp.');
      const out = await buyPostage(s.conn, s.programId, s.wallet, recipient, n, quote, { budgetMs });
      await onBought(out);
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card prepay" aria-labelledby="prepay-title" data-testid="prepay-card">
      <h2 id="prepay-title">Postage needed</h2>
      <p>
        {recipientLabel} (wallet{' '}
        <code data-testid="prepay-wallet" title={recipient.toBase58()}>
          {short(recipient.toBase58())}
        </code>
        ) asks first-contact senders for postage. Buy stamps to send; each message spends one.
      </p>
      <table class="math">
        <tbody>
          <tr>
            <th scope="row">Postage per stamp (posted by the recipient)</th>
            <td data-testid="quote-postage">
              <Sol lamports={quote.postage} />
            </td>
          </tr>
          <tr>
            <th scope="row">Settlement surcharge per stamp</th>
            <td>
              <Sol lamports={quote.surcharge} />
            </td>
          </tr>
          <tr>
            <th scope="row">Protocol fee per stamp (live)</th>
            <td>
              <Sol lamports={quote.fee} />
            </td>
          </tr>
          <tr>
            <th scope="row">Per stamp</th>
            <td>
              <Sol lamports={quote.perStamp} />
            </td>
          </tr>
          {quote.rent > 0n && (
            <tr>
              <th scope="row">Account rent (first purchase)</th>
              <td>
                <Sol lamports={quote.rent} />
              </td>
            </tr>
          )}
          <tr class="total">
            <th scope="row">
              Total for {String(n)} stamp{n === 1n ? '' : 's'}
            </th>
            <td data-testid="quote-total">
              <Sol lamports={total} />
            </td>
          </tr>
        </tbody>
      </table>
      <Field label="Stamps">
        <input
          type="number"
          min={1}
          step={1}
          value={count}
          onInput={(e) => setCount(e.currentTarget.value)}
        />
      </Field>
      <p class="muted">
        The price is capped at the quoted postage: if the recipient raises it meanwhile, nothing is bought.
      </p>
      <button type="button" onClick={buy} disabled={busy || n < 1n}>
        {busy
          ? 'Buying…'
          : `Buy ${String(n)} stamp${n === 1n ? '' : 's'}${actionSuffix ? ` ${actionSuffix}` : ''}`}
      </button>
      <ErrorText text={error} />
    </section>
  );
}
