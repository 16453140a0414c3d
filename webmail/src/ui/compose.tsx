// Compose. Trustless: the compose flow of chain/compose.ts, with the prepay
// card when a stamp is needed and an automatic re-send once the purchase
// confirms. Server mode: the message goes to the server's submission path,
// or (for a bounty or a reply on chain) direct-signed like trustless. When
// the server holds wallet recipients for postage (its 402 names them), the
// others get the message at once and each held one gets the trustless prepay
// card; after the purchase that recipient's copy goes on chain, signed by
// the wallet (the stamp is bought for the wallet's own frombox).
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ComposeResult, type Draft, executeSend, type Prepared, prepareSend } from '../chain/compose.ts';
import { PinServiceError } from '../chain/pin.ts';
import type { PurchaseOutcome } from '../chain/prepay.ts';
import { buildMessage, newMessageId } from '../mail/build-message.ts';
import { type PostageHold, postageHolds } from '../server/api.ts';
import { useApp } from '../session.ts';
import { PrepayCard } from './prepay-card.tsx';
import { RecipientCheck } from './recipient-check.tsx';
import { SendConfirm } from './send-summary.tsx';
import { ServerReceipt } from './server-receipt.tsx';
import { useSend } from './use-send.ts';
import { ErrorText, Field, short } from './widgets.tsx';

/**
 * A draft as compose keeps it: `reply` names the parent of a reply sent
 * through the server (In-Reply-To, References) when it has no on-chain link.
 */
export type ComposeDraft = Draft & { reply?: { messageId: string | null; references: string[] } };

const EMPTY: ComposeDraft = { to: '', subject: '', body: '', bountySol: '', claimDays: '', replyTo: null };

/** In-Reply-To and References of a reply: the parent's References, then the parent. */
export function replyHeaders(d: ComposeDraft): { inReplyTo?: string; references?: string[] } {
  const parent = d.replyTo ?? d.reply;
  if (!parent?.messageId) return {};
  return { inReplyTo: parent.messageId, references: [...parent.references, parent.messageId] };
}

type Outcome =
  | { kind: 'idle' }
  | { kind: 'receipt'; emailAddress: string; signature: string; pending: boolean }
  | { kind: 'confirm'; prepared: Extract<Prepared, { kind: 'ready' }> }
  | { kind: 'held'; prepared: Extract<Prepared, { kind: 'held' }> }
  | { kind: 'server-sent'; msgid: string | null; sentTo: string[]; held: PostageHold[] };

export function ComposeView({ initial }: { initial?: ComposeDraft }) {
  const app = useApp();
  const s = app.session;
  const [draft, setDraft] = useState<ComposeDraft>(initial ?? EMPTY);
  const [via, setVia] = useState<'chain' | 'server'>(s.api && !initial?.replyTo ? 'server' : 'chain');
  const { deps, step, setStep, busy, error, setError, guarded } = useSend();
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });
  const set = (patch: Partial<ComposeDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const receiptRef = useRef<HTMLElement>(null);
  // Errors sit just above Send and are scrolled into view: the form is taller than a laptop screen.
  const errorRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (error) errorRef.current?.scrollIntoView({ block: 'nearest' });
  }, [error]);
  const sent = outcome.kind === 'receipt' || outcome.kind === 'server-sent';
  useEffect(() => {
    if (!sent) return;
    receiptRef.current?.focus();
    receiptRef.current?.scrollIntoView({ block: 'nearest' });
  }, [sent]);
  const newMessage = () => {
    setDraft(EMPTY);
    setOutcome({ kind: 'idle' });
    setError('');
    setVia(s.api ? 'server' : 'chain');
  };

  const showResult = (result: ComposeResult) => {
    if (result.kind === 'held') {
      // Stamps were spent meanwhile: price the send again and hold it.
      void prepareSend(deps, draft).then(
        (p) => setOutcome(p.kind === 'held' ? { kind: 'held', prepared: p } : { kind: 'idle' }),
        (err: unknown) => setError(app.errorText(err)),
      );
      return;
    }
    setOutcome({
      kind: 'receipt',
      emailAddress: result.emailAddress,
      signature: result.signature,
      pending: result.kind === 'pending',
    });
  };

  /** Checks and prices the draft; nothing is spent until the holder confirms. */
  const prepareOnChain = async (d: Draft) => {
    const p = await prepareSend(deps, d);
    setOutcome(p.kind === 'held' ? { kind: 'held', prepared: p } : { kind: 'confirm', prepared: p });
  };

  // A failure after confirming (pin service or RPC down mid-send) closes the
  // sheet so the error shows beside the kept draft.
  const confirmSend = (prepared: Extract<Prepared, { kind: 'ready' }>) =>
    guarded(async () => {
      try {
        showResult(await executeSend(deps, draft, prepared));
      } catch (err) {
        setOutcome({ kind: 'idle' });
        // Pinning comes before any signature: nothing left the wallet.
        const kept = err instanceof PinServiceError ? ' Nothing was sent or paid; your draft is kept.' : '';
        setError(`${app.errorText(err)}${kept}`);
      }
    });

  const sendViaServer = async (d: ComposeDraft) => {
    if (!s.api) throw new Error('No account API in this mode.');
    const api = s.api;
    const { addresses } = await api.mailboxes();
    const from = addresses[0];
    if (!from) throw new Error('The server lists no address for your wallet.');
    const domain = from.slice(from.lastIndexOf('@') + 1);
    const to = [
      ...new Set(
        d.to
          .split(/[,;]\s*|\s+/)
          .map((t) => t.trim())
          .filter(Boolean),
      ),
    ];
    const raw = buildMessage({
      from,
      to,
      subject: d.subject,
      text: d.body,
      date: new Date(),
      messageId: newMessageId(domain, (n) => crypto.getRandomValues(new Uint8Array(n))),
      ...replyHeaders(d),
    });
    setStep('Handing the message to the server…');
    // A 402 sends to nobody and names every recipient held for postage: the
    // same bytes go again to the others, so no one gets the message twice.
    const held: PostageHold[] = [];
    let rest = to;
    let msgid: string | null = null;
    while (rest.length > 0) {
      try {
        msgid = (await api.send(raw, rest)).msgid;
        break;
      } catch (err) {
        const holds = postageHolds(err);
        const named = new Set(holds?.map((h) => h.address));
        const left = rest.filter((t) => !named.has(t));
        if (!holds || left.length === rest.length) throw err;
        held.push(...holds.filter((h) => rest.includes(h.address)));
        rest = left;
        if (rest.length > 0) setStep('Sending to the recipients that need no postage…');
      }
    }
    setOutcome({ kind: 'server-sent', msgid, sentTo: msgid ? rest : [], held });
  };

  const send = (d: ComposeDraft = draft) =>
    guarded(async () => {
      setOutcome({ kind: 'idle' });
      if (via === 'server' && s.api) await sendViaServer(d);
      else await prepareOnChain(d);
    });

  // The prepay card showed the stamps and this send's costs together, so a
  // completed purchase sends at once, without a second confirmation.
  const afterPurchase = async (out: PurchaseOutcome) => {
    if (out.status === 'pending') {
      setOutcome({ kind: 'idle' });
      setError('The stamp purchase is still pending on chain. Your draft is kept: send again shortly.');
      return;
    }
    app.notify('Stamps bought. Sending your message…');
    await guarded(async () => {
      const p = await prepareSend(deps, draft);
      if (p.kind === 'held') setOutcome({ kind: 'held', prepared: p });
      else showResult(await executeSend(deps, draft, p));
    });
  };

  return (
    <section aria-labelledby="compose-title">
      <h1 id="compose-title" tabIndex={-1}>
        {draft.replyTo || draft.reply ? 'Reply' : 'New message'}
      </h1>
      {!sent && (
        <form
          class="compose"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          {s.api && (
            <fieldset class="inline">
              <legend>Send</legend>
              <label>
                <input type="radio" name="via" checked={via === 'server'} onChange={() => setVia('server')} />{' '}
                through the server
              </label>
              <label>
                <input type="radio" name="via" checked={via === 'chain'} onChange={() => setVia('chain')} />{' '}
                on chain, signed by my wallet
              </label>
            </fieldset>
          )}
          {draft.replyTo && (
            <p class="chip" data-testid="reply-chip">
              Replying to message <code>{short(draft.replyTo.email)}</code> (linked on chain)
              <button type="button" class="link" onClick={() => set({ replyTo: null })}>
                Clear
              </button>
            </p>
          )}
          <Field
            label="To"
            hint={
              via === 'chain'
                ? 'A wallet address, an alias, or alias@domain for a mail domain on chain (on-chain mailboxes only)'
                : 'Addresses, separated by commas'
            }
          >
            <input
              type="text"
              name="to"
              value={draft.to}
              onInput={(e) => set({ to: e.currentTarget.value })}
              autoComplete="off"
              spellcheck={false}
            />
          </Field>
          {via === 'chain' && <RecipientCheck to={draft.to} />}
          <Field label="Subject">
            <input
              type="text"
              name="subject"
              value={draft.subject}
              onInput={(e) => set({ subject: e.currentTarget.value })}
            />
          </Field>
          <Field label="Message">
            <textarea
              name="body"
              rows={10}
              value={draft.body}
              onInput={(e) => set({ body: e.currentTarget.value })}
            />
          </Field>
          {via === 'chain' && (
            <fieldset class="inline">
              <legend>Bounty (optional)</legend>
              <Field label="Amount in SOL" hint="Blank for a plain send">
                <input
                  type="text"
                  inputMode="decimal"
                  name="bounty"
                  value={draft.bountySol}
                  onInput={(e) => set({ bountySol: e.currentTarget.value })}
                />
              </Field>
              <Field label="Claim window (days)">
                <input
                  type="number"
                  name="claim-days"
                  min={0}
                  placeholder="7"
                  value={draft.claimDays}
                  onInput={(e) => set({ claimDays: e.currentTarget.value })}
                />
              </Field>
            </fieldset>
          )}
          <div ref={errorRef}>
            <ErrorText text={error} />
          </div>
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Send'}
          </button>
        </form>
      )}
      {sent && <ErrorText text={error} />}
      {step && (
        <p role="status" class="toast" data-testid="send-progress">
          {step}
        </p>
      )}
      {outcome.kind === 'confirm' && (
        <SendConfirm
          prepared={outcome.prepared}
          busy={busy}
          onConfirm={() => void confirmSend(outcome.prepared)}
          onCancel={() => setOutcome({ kind: 'idle' })}
        />
      )}
      {outcome.kind === 'receipt' && (
        <section
          class="card receipt"
          data-testid="receipt"
          aria-label="Receipt"
          tabIndex={-1}
          ref={receiptRef}
        >
          <h2>{outcome.pending ? 'Submitted, not yet confirmed' : 'Sent'}</h2>
          <dl class="headers">
            <dt>Message account</dt>
            <dd>
              <code data-testid="receipt-email">{outcome.emailAddress}</code>
            </dd>
            <dt>Transaction</dt>
            <dd>
              <code data-testid="receipt-signature">{outcome.signature}</code>
            </dd>
          </dl>
          {outcome.pending && (
            <p>
              The chain has not confirmed it within the wait; check the inbox of the recipient shortly. Do not
              send it again: it is submitted.
            </p>
          )}
          <ReceiptActions onNew={newMessage} />
        </section>
      )}
      {outcome.kind === 'server-sent' && (
        <ServerReceipt
          msgid={outcome.msgid}
          sentTo={outcome.sentTo}
          held={outcome.held}
          draft={draft}
          receiptRef={receiptRef}
          actions={<ReceiptActions onNew={newMessage} />}
        />
      )}
      {outcome.kind === 'held' && (
        <>
          <p role="status" class="notice">
            Your draft is held until postage is paid.
          </p>
          <PrepayCard
            recipient={outcome.prepared.recipient.wallet}
            recipientLabel={outcome.prepared.recipient.input}
            quote={outcome.prepared.quote}
            actionSuffix="and send"
            send={outcome.prepared.cost}
            onBought={afterPurchase}
          />
        </>
      )}
    </section>
  );
}

function ReceiptActions({ onNew }: { onNew: () => void }) {
  const app = useApp();
  const home = app.session.api ? 'folders' : 'inbox';
  return (
    <p class="actions">
      <button type="button" class="primary" onClick={() => app.navigate({ name: home })}>
        Back to {app.session.api ? 'mail' : 'inbox'}
      </button>{' '}
      <button type="button" onClick={onNew}>
        New message
      </button>
    </p>
  );
}
