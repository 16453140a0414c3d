// The prepay card: stamp count (default 1) and the per-stamp funding math —
// the recipient's posted postage, the settlement surcharge, the live
// protocol fee — plus rent when the purchase creates the frombox, the
// purchase's network fee and, for a held draft, what the send itself costs
// (message rent, bounty, fee): one total and the balance afterwards, all
// shown before anything is spent. A held draft's card is bound to the quote
// it shows: its owner's `beforeBuy` re-checks the draft and the chain and may
// re-quote instead of buying; a reprice refusal re-quotes in place. Buy is
// one press at a time, and after a re-quote it waits a moment before it
// takes a press again, so a double press cannot agree to a price unseen.
import type { PublicKey } from '@solana/web3.js';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { fetchStampQuote, type StampQuote } from '../../../chain/client/client.ts';
import { buyStampsInstruction } from '../../../chain/client/instructions.ts';
import { formatSol, type SendCost, SIGNATURE_FEE } from '../chain/compose.ts';
import { buyPostage, type PurchaseOutcome, RepricedError } from '../chain/prepay.ts';
import { type FeeQuote, quotePriorityFee } from '../chain/tx.ts';
import { Refusal } from '../refusal.ts';
import { useApp } from '../session.ts';
import { SendCostRows } from './send-summary.tsx';
import { ErrorText, Field, short } from './widgets.tsx';

/** How long Buy stays disabled after the card was quoted again (a second press of a double click lands in it). */
export const REARM_MS = 1500;

interface Props {
  recipient: PublicKey;
  recipientLabel: string;
  quote: StampQuote;
  /** Shown on the button, e.g. "and send". */
  actionSuffix?: string;
  onBought: (out: PurchaseOutcome, stamps: bigint) => void | Promise<void>;
  /** The held send that follows the purchase: its costs join the total. */
  send?: SendCost;
  /** Poll budget for the purchase (ms). */
  budgetMs?: number;
  /**
   * Runs when Buy is pressed, before anything is spent: false when the
   * owner found the quote stale and quoted again (nothing is bought).
   */
  beforeBuy?: () => Promise<boolean>;
  /** A reprice refusal: the owner quotes again in place. Without it the card re-reads its own quote. */
  onRepriced?: (err: RepricedError) => Promise<void>;
  /** Why the card was quoted again (shown with the new quote). */
  notice?: string;
  /** What changed in the draft since this quote (Buy then quotes again first). */
  changes?: string[];
  /** A purchase (or its check) is under way, so the owner can lock the draft. */
  onBusy?: (busy: boolean) => void;
}

function Sol({ lamports }: { lamports: bigint }) {
  return <span>{formatSol(lamports)} SOL</span>;
}

export function PrepayCard({
  recipient,
  recipientLabel,
  quote: quoted,
  actionSuffix,
  onBought,
  send,
  budgetMs,
  beforeBuy,
  onRepriced,
  notice,
  changes,
  onBusy,
}: Props) {
  const app = useApp();
  const s = app.session;
  const titleId = useId();
  const [count, setCount] = useState('1');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  // A card without an owner that re-quotes (Balances) quotes itself again after a reprice.
  const [own, setOwn] = useState<{ quote: StampQuote; notice: string } | null>(null);
  useEffect(() => setOwn(null), [quoted]);
  const quote = own?.quote ?? quoted;
  const shownNotice = notice ?? own?.notice ?? '';
  // One press at a time: a second click can arrive before the re-render that disables the button.
  const inFlight = useRef(false);
  // Re-armed a moment after each (re-)quote.
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    setArmed(false);
    const t = setTimeout(() => setArmed(true), REARM_MS);
    return () => clearTimeout(t);
  }, [quote, shownNotice]);
  const n = /^\d+$/.test(count.trim()) ? BigInt(count.trim()) : 0n;
  const stampsTotal = quote.perStamp * n + quote.rent;
  const [feeQuote, setFeeQuote] = useState<FeeQuote | null>(null);
  const priority = feeQuote?.lamports ?? 0n;
  const total = stampsTotal + SIGNATURE_FEE + priority + (send?.total ?? 0n);
  // The held message spends one of the stamps, and a direct send gets that stamp's surcharge back.
  const back = send && n > 0n ? quote.surcharge : 0n;
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
    if (inFlight.current || !armed) return;
    inFlight.current = true;
    setBusy(true);
    onBusy?.(true);
    setError('');
    try {
      if (n < 1n) throw new Refusal('Buy at least one stamp.');
      if (beforeBuy && !(await beforeBuy())) return;
      let out: PurchaseOutcome;
      try {
        out = await buyPostage(s.conn, s.programId, s.wallet, recipient, n, quote, {
          budgetMs,
          ...(feeQuote ? { priorityFee: feeQuote } : {}),
        });
      } catch (err) {
        if (!(err instanceof RepricedError)) throw err;
        if (onRepriced) await onRepriced(err);
        else {
          const fresh = await fetchStampQuote(s.conn, s.programId, {
            buyer: s.wallet.publicKey,
            recipient,
            stamps: 1n,
          });
          setOwn({ quote: fresh, notice: err.message });
        }
        return;
      }
      await onBought(out, n);
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      inFlight.current = false;
      setBusy(false);
      onBusy?.(false);
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
        ){' '}
        {quote.postage > 0n
          ? 'asks first-contact senders for postage. Buy stamps to send; each message spends one.'
          : 'asks no postage of you, so a message to it needs no stamp.'}
      </p>
      {shownNotice && (
        <p role="alert" class="error" data-testid="requote-notice">
          {shownNotice}
        </p>
      )}
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
          {send && quote.surcharge > 0n && (
            <tr>
              <th scope="row">Settlement surcharge back when the message spends its stamp</th>
              <td data-testid="quote-surcharge-back">{formatSol(quote.surcharge)} SOL back</td>
            </tr>
          )}
          {balance !== null && (
            <tr>
              <th scope="row">Balance afterwards</th>
              <td data-testid="quote-after">
                <Sol lamports={balance - total + back} />
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
      {changes && changes.length > 0 && !busy && (
        <p class="hint" data-testid="prepay-changed">
          You changed {changes.join(', ')} since this quote: Buy quotes again first and buys nothing until you
          confirm the new quote.
        </p>
      )}
      <button type="button" onClick={buy} disabled={busy || !armed || n < 1n}>
        {busy
          ? 'Checking and buying…'
          : `Buy ${String(n)} stamp${n === 1n ? '' : 's'}${actionSuffix ? ` ${actionSuffix}` : ''}`}
      </button>
      <ErrorText text={error} />
    </section>
  );
}
