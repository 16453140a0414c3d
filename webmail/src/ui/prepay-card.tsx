// The prepay card: stamp count (default 1) and the per-stamp funding math —
// the recipient's posted postage, the settlement surcharge, the live
// protocol fee — plus rent when the purchase creates the frombox, the
// purchase's network fee and, for a held draft, what the send itself costs
// (message rent, bounty, fee): one total and the balance afterwards, all
// shown before anything is spent.
import type { PublicKey } from '@solana/web3.js';
import { useEffect, useId, useState } from 'preact/hooks';
import type { StampQuote } from '../../../chain/client.ts';
import { buyStampsInstruction } from '../../../chain/instructions.ts';
import { formatSol, type SendCost, SIGNATURE_FEE } from '../chain/compose.ts';
import { buyPostage, type PurchaseOutcome } from '../chain/prepay.ts';
import { type FeeQuote, quotePriorityFee } from '../chain/tx.ts';
import { useApp } from '../session.ts';
import { SendCostRows } from './send-summary.tsx';
import { ErrorText, Field, short } from './widgets.tsx';

interface Props {
  recipient: PublicKey;
  recipientLabel: string;
  quote: StampQuote;
  /** Shown on the button, e.g. "and send". */
  actionSuffix?: string;
  onBought: (out: PurchaseOutcome) => void | Promise<void>;
  /** The held send that follows the purchase: its costs join the total. */
  send?: SendCost;
  /** Poll budget for the purchase (ms). */
  budgetMs?: number;
}

function Sol({ lamports }: { lamports: bigint }) {
  return <span>{formatSol(lamports)} SOL</span>;
}

export function PrepayCard({
  recipient,
  recipientLabel,
  quote,
  actionSuffix,
  onBought,
  send,
  budgetMs,
}: Props) {
  const app = useApp();
  const s = app.session;
  const titleId = useId();
  const [count, setCount] = useState('1');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const n = /^\d+$/.test(count.trim()) ? BigInt(count.trim()) : 0n;
  const stampsTotal = quote.perStamp * n + quote.rent;
  const [feeQuote, setFeeQuote] = useState<FeeQuote | null>(null);
  const priority = feeQuote?.lamports ?? 0n;
  const total = stampsTotal + SIGNATURE_FEE + priority + (send?.total ?? 0n);
  useEffect(() => {
    // The purchase's priority fee: a BuyStamps (the larger of the two) to this recipient.
    const ix = buyStampsInstruction({
      programId: s.programId,
      buyer: s.wallet.publicKey,
      recipient,
      stamps: 1n,
    });
    quotePriorityFee(s.conn, [ix], s.wallet.publicKey).then(setFeeQuote, () => setFeeQuote(null));
  }, [recipient.toBase58()]);
  const [balance, setBalance] = useState<bigint | null>(send?.balance ?? null);
  useEffect(() => {
    if (send) return;
    s.conn.getBalance(s.wallet.publicKey, 'confirmed').then(
      (b) => setBalance(BigInt(b)),
      () => setBalance(null),
    );
  }, [send]);

  const buy = async () => {
    setBusy(true);
    setError('');
    try {
      if (n < 1n) throw new Error('Buy at least one stamp.');
      const out = await buyPostage(s.conn, s.programId, s.wallet, recipient, n, quote, {
        budgetMs,
        ...(feeQuote ? { priorityFee: feeQuote } : {}),
      });
      await onBought(out);
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card prepay" aria-labelledby={titleId} data-testid="prepay-card">
      <h2 id={titleId}>Postage needed</h2>
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
          <tr>
            <th scope="row">
              Stamps: {String(n)} × <Sol lamports={quote.perStamp} />
              {quote.rent > 0n ? ' and rent' : ''}
            </th>
            <td data-testid="quote-stamps-total">
              <Sol lamports={stampsTotal} />
            </td>
          </tr>
          <tr>
            <th scope="row">Network fee for the purchase</th>
            <td>
              <Sol lamports={SIGNATURE_FEE} />
            </td>
          </tr>
          <tr>
            <th scope="row">Priority fee for the purchase</th>
            <td data-testid="quote-priority">
              <Sol lamports={priority} />
            </td>
          </tr>
          {send && <SendCostRows cost={send} label="Then the message: account rent" />}
          <tr class="total">
            <th scope="row">Total{send ? ', stamps and message' : ''}</th>
            <td data-testid="quote-total">
              <Sol lamports={total} />
            </td>
          </tr>
          {balance !== null && (
            <tr>
              <th scope="row">Balance afterwards</th>
              <td data-testid="quote-after">
                <Sol lamports={balance - total} />
              </td>
            </tr>
          )}
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
