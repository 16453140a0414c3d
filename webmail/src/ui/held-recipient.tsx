// One recipient the server held for postage (its 402 named it): the same
// prepay card as trustless mode, quoted for the wallet the server resolved,
// and after the purchase this recipient's copy is sent on chain, signed by
// the wallet — BuyStamps funds the wallet's own frombox, which a direct-
// signed send spends (the server's relayed send would need a frombox keyed
// on the address, which only the recipient can open). One send per recipient.
// The card is bound to what it quoted: Buy re-reads the chain first and
// quotes again (nothing bought) when the wallet, the price or the need for
// postage changed; a reprice refusal re-quotes in place.
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Draft, executeSend, type Prepared, prepareSend } from '../chain/compose.ts';
import { freshDifference, type QuoteSnapshot, quoteSnapshot } from '../chain/held-quote.ts';
import type { PurchaseOutcome, RepricedError } from '../chain/prepay.ts';
import { Refusal } from '../refusal.ts';
import type { PostageHold } from '../server/api.ts';
import { useApp } from '../session.ts';
import { PrepayCard } from './prepay-card.tsx';
import { SendConfirm } from './send-summary.tsx';
import { useSend } from './use-send.ts';
import { ErrorText, short } from './widgets.tsx';

type State =
  | { kind: 'checking' }
  | { kind: 'held'; prepared: Extract<Prepared, { kind: 'held' }>; snapshot: QuoteSnapshot; notice?: string }
  | { kind: 'ready'; prepared: Extract<Prepared, { kind: 'ready' }>; notice?: string }
  | { kind: 'sent'; emailAddress: string; signature: string; pending: boolean }
  | { kind: 'failed' };

export function HeldRecipient({
  hold,
  draft,
  onSent,
}: {
  hold: PostageHold;
  draft: Draft;
  /** Called once this recipient's copy is submitted on chain. */
  onSent?: () => void;
}) {
  const app = useApp();
  const [state, setState] = useState<State>({ kind: 'checking' });
  const { deps, step, setStep, busy, error, setError, guarded: once } = useSend();
  // One send for this recipient, also across a slow confirmation.
  const done = useRef(false);

  // This recipient only, with no bounty (bounties never go through a server draft).
  const single: Draft = { ...draft, to: hold.address, bountySol: '', claimDays: '', replyTo: null };
  /** Prices the send again; refuses a chain resolution that is not the wallet the server named. */
  const prepare = async (): Promise<Prepared> => {
    const p = await prepareSend(deps, single);
    const wallet = p.recipient.wallet.toBase58();
    if (wallet !== hold.wallet) {
      throw new Refusal(
        `${hold.address} resolves on chain to wallet ${short(wallet)}, not ${short(hold.wallet)} as the server said. Nothing was bought or sent.`,
      );
    }
    return p;
  };

  const show = (p: Prepared, notice?: string) =>
    setState(
      p.kind === 'held'
        ? { kind: 'held', prepared: p, snapshot: quoteSnapshot(single, p), notice }
        : { kind: 'ready', prepared: p, notice },
    );

  useEffect(() => {
    prepare()
      .then(show, (err: unknown) => {
        setError(app.errorText(err));
        setState({ kind: 'failed' });
      })
      .finally(() => setStep(''));
  }, [hold.address]);

  const guarded = (fn: () => Promise<void>) => (done.current ? Promise.resolve() : once(fn));

  const deliver = async (prepared: Extract<Prepared, { kind: 'ready' }>) => {
    const r = await executeSend(deps, single, prepared);
    if (r.kind === 'held') {
      // The stamp was spent meanwhile: quote again.
      show(await prepare());
      return;
    }
    done.current = true;
    onSent?.();
    setState({
      kind: 'sent',
      emailAddress: r.emailAddress,
      signature: r.signature,
      pending: r.kind === 'pending',
    });
  };

  const sendNow = (prepared: Extract<Prepared, { kind: 'ready' }>) => guarded(() => deliver(prepared));

  /** Buy was pressed: true only when a fresh read still matches the card; else the new quote, nothing bought. */
  const stillAsQuoted = async (snapshot: QuoteSnapshot): Promise<boolean> => {
    let go = false;
    await guarded(async () => {
      const fresh = await prepare();
      const why = freshDifference(snapshot, fresh);
      if (why === null) go = true;
      else show(fresh, why);
    });
    return go;
  };

  const requote = (err: RepricedError) =>
    guarded(async () => {
      show(await prepare(), err.message);
    });

  // The card itemized the stamps and this send together: a confirmed purchase sends at once.
  const afterPurchase = async (out: PurchaseOutcome) => {
    if (out.status === 'pending') {
      setError(
        `The stamp purchase for ${hold.address} is still pending on chain. Nothing was sent to it yet: send again shortly.`,
      );
      return;
    }
    await guarded(async () => {
      setStep(`Stamp bought. Sending to ${hold.address}…`);
      const p = await prepare();
      if (p.kind === 'held') show(p);
      else await deliver(p);
    });
  };

  return (
    <section class="card held" data-testid="held-recipient" aria-label={`Held for postage: ${hold.address}`}>
      <h2>
        {state.kind === 'sent' ? 'Sent on chain to ' : 'Held for postage: '}
        <span data-testid="held-address">{hold.address}</span>
      </h2>
      {state.kind === 'checking' && <p aria-busy="true">Quoting postage on chain…</p>}
      {state.kind === 'held' && (
        <PrepayCard
          recipient={state.prepared.recipient.wallet}
          recipientLabel={hold.address}
          quote={state.prepared.quote}
          actionSuffix="and send"
          send={state.prepared.cost}
          notice={state.notice}
          beforeBuy={() => stillAsQuoted(state.snapshot)}
          onRepriced={requote}
          onBought={afterPurchase}
        />
      )}
      {state.kind === 'ready' && (
        <>
          <p>Your wallet already holds a stamp toward this recipient: the message can go on chain now.</p>
          <SendConfirm
            prepared={state.prepared}
            notice={state.notice}
            busy={busy}
            onConfirm={() => void sendNow(state.prepared)}
            onCancel={() => setState({ kind: 'failed' })}
          />
        </>
      )}
      {state.kind === 'sent' && (
        <dl class="headers" data-testid="held-receipt">
          <dt>Message account</dt>
          <dd>
            <code data-testid="held-email">{state.emailAddress}</code>
          </dd>
          <dt>Transaction</dt>
          <dd>
            <code>{state.signature}</code>
          </dd>
          {state.pending && <dd>Not yet confirmed: do not send it again, it is submitted.</dd>}
        </dl>
      )}
      {state.kind === 'failed' && !error && <p>Not sent to {hold.address}.</p>}
      {step && (
        <p role="status" class="toast">
          {step}
        </p>
      )}
      <ErrorText text={error} />
    </section>
  );
}
