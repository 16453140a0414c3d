// Compose. Trustless: the compose flow of chain/compose.ts, with the prepay
// card when a stamp is needed and an automatic re-send once the purchase
// confirms. Server mode: the message goes to the server's submission path,
// or (for a bounty or a reply on chain) direct-signed like trustless.
import { useState } from 'preact/hooks';
import { type ComposeResult, type ComposeStep, composeAndSend, type Draft } from '../chain/compose.ts';
import { pinBytes } from '../chain/pin.ts';
import type { PurchaseOutcome } from '../chain/prepay.ts';
import { buildMessage, newMessageId } from '../mail/build-message.ts';
import { useApp } from '../session.ts';
import { PrepayCard } from './prepay-card.tsx';
import { RecipientCheck } from './recipient-check.tsx';
import { ErrorText, Field, short } from './widgets.tsx';

const EMPTY: Draft = { to: '', subject: '', body: '', bountySol: '', claimDays: '', replyTo: null };

const STEP_TEXT: Record<ComposeStep, string> = {
  resolve: 'Reading the recipient’s mailbox and key from the chain…',
  seal: 'Sealing the message in the page…',
  pin: 'Pinning the sealed message…',
  sign: 'Signing SendMail…',
  confirm: 'Waiting for the chain to confirm…',
};

type Outcome =
  | { kind: 'idle' }
  | { kind: 'receipt'; emailAddress: string; signature: string; pending: boolean }
  | { kind: 'held'; result: Extract<ComposeResult, { kind: 'held' }> }
  | { kind: 'server-sent'; msgid: string };

export function ComposeView({ initial }: { initial?: Draft }) {
  const app = useApp();
  const s = app.session;
  const [draft, setDraft] = useState<Draft>(initial ?? EMPTY);
  const [via, setVia] = useState<'chain' | 'server'>(s.api && !initial?.replyTo ? 'server' : 'chain');
  const [step, setStep] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));

  const sendOnChain = async (d: Draft) => {
    const result = await composeAndSend(
      {
        conn: s.conn,
        programId: s.programId,
        wallet: s.wallet,
        pin: (bytes) => pinBytes(s.settings.pinUrl, s.settings.pinToken, bytes),
        onStep: (st) => setStep(STEP_TEXT[st]),
      },
      d,
    );
    if (result.kind === 'held') setOutcome({ kind: 'held', result });
    else
      setOutcome({
        kind: 'receipt',
        emailAddress: result.emailAddress,
        signature: result.signature,
        pending: result.kind === 'pending',
      });
  };

  const sendViaServer = async (d: Draft) => {
    if (!s.api) throw new Error('No account API in this mode.');
    const { addresses } = await s.api.mailboxes();
    const from = addresses[0];
    if (!from) throw new Error('The server lists no address for your wallet.');
    const domain = from.slice(from.lastIndexOf('@') + 1);
    const to = d.to
      .split(/[,;]\s*|\s+/)
      .map((t) => t.trim())
      .filter(Boolean);
    const raw = buildMessage({
      from,
      to,
      subject: d.subject,
      text: d.body,
      date: new Date(),
      messageId: newMessageId(domain, (n) => crypto.getRandomValues(new Uint8Array(n))),
      inReplyTo: d.replyTo?.messageId ?? undefined,
    });
    setStep('Handing the message to the server…');
    const r = await s.api.send(raw, to);
    setOutcome({ kind: 'server-sent', msgid: r.msgid });
  };

  const send = async (d: Draft = draft) => {
    setBusy(true);
    setError('');
    setOutcome({ kind: 'idle' });
    try {
      if (via === 'server' && s.api) await sendViaServer(d);
      else await sendOnChain(d);
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setBusy(false);
      setStep('');
    }
  };

  const afterPurchase = async (out: PurchaseOutcome) => {
    if (out.status === 'pending') {
      setOutcome({ kind: 'idle' });
      setError('The stamp purchase is still pending on chain. Your draft is kept: send again shortly.');
      return;
    }
    app.notify('Stamps bought. Sending your message…');
    await send(draft);
  };

  return (
    <section aria-labelledby="compose-title">
      <h1 id="compose-title" tabIndex={-1}>
        {draft.replyTo ? 'Reply' : 'New message'}
      </h1>
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
              <input type="radio" name="via" checked={via === 'chain'} onChange={() => setVia('chain')} /> on
              chain, signed by my wallet
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
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Send'}
        </button>
      </form>
      {step && <p role="status">{step}</p>}
      <ErrorText text={error} />
      {outcome.kind === 'receipt' && (
        <section class="card receipt" data-testid="receipt" aria-label="Receipt">
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
            <p>The chain has not confirmed it within the wait; check the inbox of the recipient shortly.</p>
          )}
        </section>
      )}
      {outcome.kind === 'server-sent' && (
        <section class="card receipt" data-testid="server-receipt">
          <h2>Handed to the server</h2>
          <p>
            Message id <code>{outcome.msgid}</code>. The server delivers it.
          </p>
        </section>
      )}
      {outcome.kind === 'held' && (
        <>
          <p role="status" class="notice">
            Your draft is held until postage is paid.
          </p>
          <PrepayCard
            recipient={outcome.result.recipient.wallet}
            recipientLabel={outcome.result.recipient.input}
            quote={outcome.result.quote}
            actionSuffix="and send"
            onBought={afterPurchase}
          />
        </>
      )}
    </section>
  );
}
