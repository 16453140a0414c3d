// Compose. Trustless: the compose flow of chain/compose.ts, with the prepay
// card when a stamp is needed and an automatic re-send once the purchase
// confirms. Server mode: the message goes to the server's submission path,
// or (for a bounty or a reply on chain) direct-signed like trustless. When
// the server holds wallet recipients for postage (its 402 names them), the
// others get the message at once and each held one gets the trustless prepay
// card; after the purchase that recipient's copy goes on chain, signed by
// the wallet (the stamp is bought for the wallet's own frombox).
// A held draft's card is bound to a snapshot of what it quoted (recipient
// wallet, bounty, expiry, price): Buy first compares the draft as it stands
// and a fresh chain read with it, and on any difference shows the new quote
// (or the send's confirmation) instead of spending; while a purchase and
// its send run, the terms cannot be edited.
// Save draft keeps the draft: in server mode in the server's Drafts folder
// (replacing the previous save), in trustless mode encrypted in this browser
// (drafts-local.ts, listed above the form); a sent draft is removed.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type ComposeResult,
  type Draft,
  executeSend,
  formatSol,
  type Prepared,
  prepareSend,
} from '../chain/compose.ts';
import {
  changedNotice,
  draftChanges,
  freshDifference,
  type QuoteSnapshot,
  quoteSnapshot,
} from '../chain/held-quote.ts';
import { PinServiceError } from '../chain/pin.ts';
import type { PurchaseOutcome, RepricedError } from '../chain/prepay.ts';
import { deleteLocalDraft, type LocalDraft, listLocalDrafts, saveLocalDraft } from '../drafts-local.ts';
import { buildMessage, newMessageId, toOutgoing } from '../mail/build-message.ts';
import { Refusal } from '../refusal.ts';
import { type PostageHold, postageHolds } from '../server/api.ts';
import { useApp } from '../session.ts';
import { PrepayCard } from './prepay-card.tsx';
import { RecipientCheck } from './recipient-check.tsx';
import { SendConfirm } from './send-summary.tsx';
import { ServerReceipt } from './server-receipt.tsx';
import { useSend } from './use-send.ts';
import { ErrorText, Field, formatTime, short } from './widgets.tsx';

/**
 * A draft as compose keeps it: `reply` names the parent of a reply sent
 * through the server (In-Reply-To, References) when it has no on-chain link.
 */
export type ComposeDraft = Draft & {
  reply?: { messageId: string | null; references: string[] };
  /** The server's stored draft this one was opened from (saving replaces it; sending removes it). */
  serverDraftId?: string;
  /** The browser's saved draft this one was opened from. */
  localDraftId?: string;
};

/** The draft as the message the server is handed (send or Save draft). */
function serverRaw(d: ComposeDraft, from: string, to: string[]): Uint8Array {
  const domain = from.slice(from.lastIndexOf('@') + 1);
  return buildMessage({
    from,
    to,
    subject: d.subject,
    text: d.body,
    date: new Date(),
    messageId: newMessageId(domain, (n) => crypto.getRandomValues(new Uint8Array(n))),
    ...replyHeaders(d),
    attachments: toOutgoing(d.attachments),
  });
}

function recipientsOf(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[,;]\s*|\s+/)
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

const EMPTY: ComposeDraft = { to: '', subject: '', body: '', bountySol: '', claimDays: '', replyTo: null };

/** In-Reply-To and References of a reply: the parent's References, then the parent. */
export function replyHeaders(d: ComposeDraft): { inReplyTo?: string; references?: string[] } {
  const parent = d.replyTo ?? d.reply;
  if (!parent?.messageId) return {};
  return { inReplyTo: parent.messageId, references: [...parent.references, parent.messageId] };
}

type Ready = Extract<Prepared, { kind: 'ready' }>;
type Held = Extract<Prepared, { kind: 'held' }>;

/** The stamp bought for this send, when one was. */
interface Bought {
  stamps: bigint;
  signature: string;
}

type Outcome =
  | { kind: 'idle' }
  | {
      kind: 'receipt';
      emailAddress: string;
      signature: string;
      pending: boolean;
      prepared: Ready;
      bought: Bought | null;
    }
  | { kind: 'confirm'; prepared: Ready; notice?: string }
  | { kind: 'held'; prepared: Held; snapshot: QuoteSnapshot; notice?: string }
  | { kind: 'server-sent'; msgid: string | null; sentTo: string[]; held: PostageHold[] };

export function ComposeView({ initial }: { initial?: ComposeDraft }) {
  const app = useApp();
  const s = app.session;
  const [draft, setDraft] = useState<ComposeDraft>(initial ?? EMPTY);
  // The draft as typed, read by the purchase's checks (which may run after renders they did not see).
  const draftRef = useRef(draft);
  const [via, setViaState] = useState<'chain' | 'server'>(s.api && !initial?.replyTo ? 'server' : 'chain');
  const viaRef = useRef(via);
  const setVia = (v: 'chain' | 'server') => {
    viaRef.current = v;
    setViaState(v);
  };
  const { deps, step, setStep, busy, error, setError, guarded } = useSend();
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });
  // A stamp purchase (or its check) is under way: the draft's terms are locked.
  const [purchasing, setPurchasing] = useState(false);
  const locked = busy || purchasing;
  const set = (patch: Partial<ComposeDraft>) => {
    draftRef.current = { ...draftRef.current, ...patch };
    setDraft(draftRef.current);
  };
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
    // A sent draft is removed wherever it was saved.
    const saved = savedRef.current;
    savedRef.current = {};
    if (saved.server) s.api?.deleteMessage(saved.server).catch(() => {});
    if (saved.local)
      void deleteLocalDraft(s.storage, s.wallet.address, s.passphrase, saved.local).catch(() => {});
  }, [sent]);
  // Where this draft was last saved: the server's Drafts row, the browser's record.
  const savedRef = useRef<{ server?: string; local?: string }>({
    server: initial?.serverDraftId,
    local: initial?.localDraftId,
  });
  const [draftNotice, setDraftNotice] = useState('');
  const [savingDraft, setSavingDraft] = useState(false);
  const saveDraft = async () => {
    if (savingDraft) return;
    setSavingDraft(true);
    setDraftNotice('');
    setError('');
    const { serverDraftId: _s, localDraftId: _l, ...d } = draftRef.current;
    try {
      if (s.api) {
        const { addresses } = await s.api.mailboxes();
        const from = addresses[0];
        if (!from) throw new Error('The server lists no address for your wallet.');
        const row = await s.api.saveDraft(serverRaw(d, from, recipientsOf(d.to)), savedRef.current.server);
        savedRef.current.server = row.id;
        setDraftNotice('Draft saved in Drafts on the server.');
      } else {
        savedRef.current.local = await saveLocalDraft(
          s.storage,
          s.wallet.address,
          s.passphrase,
          d,
          savedRef.current.local,
        );
        setDraftNotice('Draft saved in this browser, encrypted with your passphrase.');
      }
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setSavingDraft(false);
    }
  };
  const newMessage = () => {
    draftRef.current = EMPTY;
    setDraft(EMPTY);
    setOutcome({ kind: 'idle' });
    setError('');
    setVia(s.api ? 'server' : 'chain');
    savedRef.current = {};
    setDraftNotice('');
  };

  /** Shows a priced draft: its prepay card (bound to these terms) or its confirmation. */
  const show = (p: Prepared, terms: Draft, notice?: string) =>
    setOutcome(
      p.kind === 'held'
        ? { kind: 'held', prepared: p, snapshot: quoteSnapshot(terms, p), notice }
        : { kind: 'confirm', prepared: p, notice },
    );

  const showResult = async (result: ComposeResult, prepared: Ready, bought: Bought | null) => {
    if (result.kind === 'held') {
      // Stamps were spent meanwhile: price the send again and hold it.
      const d = draftRef.current;
      const p = await prepareSend(deps, d);
      show(p, d, 'The stamp was spent meanwhile (another send?): nothing was sent. Check the new quote.');
      return;
    }
    setOutcome({
      kind: 'receipt',
      emailAddress: result.emailAddress,
      signature: result.signature,
      pending: result.kind === 'pending',
      prepared,
      bought,
    });
  };

  /** Checks and prices the draft; nothing is spent until the holder confirms. */
  const prepareOnChain = async (d: Draft) => show(await prepareSend(deps, d), d);

  // A failure after confirming (pin service or RPC down mid-send) closes the
  // sheet so the error shows beside the kept draft.
  const confirmSend = (prepared: Ready) =>
    guarded(async () => {
      try {
        await showResult(await executeSend(deps, draftRef.current, prepared), prepared, null);
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
    const to = recipientsOf(d.to);
    const raw = serverRaw(d, from, to);
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

  const send = (d: ComposeDraft = draftRef.current) =>
    guarded(async () => {
      setOutcome({ kind: 'idle' });
      if (viaRef.current === 'server' && s.api) await sendViaServer(d);
      else await prepareOnChain(d);
    });

  /**
   * Buy was pressed on a held draft's card: true only when the draft as it
   * stands and a fresh chain read still match what the card quoted.
   * Otherwise the new quote (or the send's confirmation) replaces the card,
   * with the reason, and nothing is bought.
   */
  const stillAsQuoted = async (snapshot: QuoteSnapshot): Promise<boolean> => {
    let go = false;
    await guarded(async () => {
      const d = draftRef.current;
      if (viaRef.current !== 'chain') {
        setOutcome({ kind: 'idle' });
        throw new Refusal(
          'The draft now goes through the server: nothing was bought. Press Send to send it.',
        );
      }
      const changes = draftChanges(snapshot, d);
      let fresh: Prepared;
      try {
        fresh = await prepareSend(deps, d);
      } catch (err) {
        // The edited draft does not price (a recipient that is no mailbox, a bad bounty).
        setOutcome({ kind: 'idle' });
        throw new Refusal(
          `${changes.length > 0 ? `The draft changed after the postage quote (${changes.join(', ')}). ` : ''}${app.errorText(err)} Nothing was bought; your draft is kept.`,
        );
      }
      const why = changes.length > 0 ? changedNotice(changes) : freshDifference(snapshot, fresh);
      if (why === null) {
        go = true;
        return;
      }
      show(fresh, d, why);
    });
    return go;
  };

  /** A reprice refusal: the card is quoted again in place, with the new price and the reason. */
  const requote = (err: RepricedError) =>
    guarded(async () => {
      const d = draftRef.current;
      let fresh: Prepared;
      try {
        fresh = await prepareSend(deps, d);
      } catch (e) {
        // No new quote to show: the old card must not stay up with its Buy.
        setOutcome({ kind: 'idle' });
        throw new Refusal(`${err.message} The new quote could not be read: ${app.errorText(e)}`);
      }
      show(fresh, d, err.message);
    });

  // The prepay card showed the stamps and this send's costs together, so a
  // completed purchase sends at once, without a second confirmation — to the
  // wallet the card named, and only if the draft still resolves to it.
  const afterPurchase = async (out: PurchaseOutcome, snapshot: QuoteSnapshot, stamps: bigint) => {
    if (out.status === 'pending') {
      setOutcome({ kind: 'idle' });
      setError('The stamp purchase is still pending on chain. Your draft is kept: send again shortly.');
      return;
    }
    await guarded(async () => {
      setStep('Stamp bought. Sending your message…');
      const d = draftRef.current;
      const p = await prepareSend(deps, d);
      const wallet = p.recipient.wallet.toBase58();
      if (wallet !== snapshot.wallet) {
        setOutcome({ kind: 'idle' });
        throw new Refusal(
          `The stamp was bought toward wallet ${short(snapshot.wallet)}, but ${p.recipient.input} now resolves to ${short(wallet)}. Nothing was sent; your draft is kept.`,
        );
      }
      if (p.bounty.lamports !== snapshot.bountyLamports) {
        setOutcome({ kind: 'idle' });
        throw new Refusal(
          `The stamp was bought, but the bounty now prices at ${formatSol(p.bounty.lamports)} SOL, not the ${formatSol(snapshot.bountyLamports)} SOL the card showed. Nothing was sent; your draft is kept: press Send to send it with the stamp.`,
        );
      }
      if (p.kind === 'held') {
        show(p, d, 'The stamp was spent meanwhile (another send?): nothing was sent. Check the new quote.');
        return;
      }
      await showResult(await executeSend(deps, d, p), p, { stamps, signature: out.signature });
    });
  };

  return (
    <section aria-labelledby="compose-title">
      <h1 id="compose-title" tabIndex={-1}>
        {draft.replyTo || draft.reply
          ? 'Reply'
          : /^Fwd:/.test(initial?.subject ?? '')
            ? 'Forward'
            : 'New message'}
      </h1>
      {!s.api && !sent && <LocalDrafts key={draftNotice} current={savedRef.current.local} />}
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
                <input
                  type="radio"
                  name="via"
                  checked={via === 'server'}
                  disabled={locked}
                  onChange={() => setVia('server')}
                />{' '}
                through the server
              </label>
              <label>
                <input
                  type="radio"
                  name="via"
                  checked={via === 'chain'}
                  disabled={locked}
                  onChange={() => setVia('chain')}
                />{' '}
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
              readOnly={locked}
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
                  readOnly={locked}
                  onInput={(e) => set({ bountySol: e.currentTarget.value })}
                />
              </Field>
              <Field label="Claim window (days)" hint="Blank for 7; fractions count (0.5 is 12 hours)">
                <input
                  type="number"
                  name="claim-days"
                  min={0}
                  step="any"
                  placeholder="7"
                  readOnly={locked}
                  value={draft.claimDays}
                  onInput={(e) => set({ claimDays: e.currentTarget.value })}
                />
              </Field>
            </fieldset>
          )}
          {(draft.attachments ?? []).map((a, i) => (
            <p class="chip" data-testid="attachment-chip" key={a.filename}>
              Attached: {a.filename} ({Math.ceil((a.base64.length * 3) / 4 / 1024)} KiB)
              <button
                type="button"
                class="link"
                disabled={locked}
                onClick={() => set({ attachments: (draft.attachments ?? []).filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </p>
          ))}
          <div ref={errorRef}>
            <ErrorText text={error} />
          </div>
          <p class="actions">
            <button type="submit" disabled={locked}>
              {busy ? 'Sending…' : purchasing ? 'Buying the stamp…' : 'Send'}
            </button>{' '}
            <button type="button" onClick={saveDraft} disabled={locked || savingDraft}>
              {savingDraft ? 'Saving…' : 'Save draft'}
            </button>
          </p>
          {draftNotice && (
            <p role="status" data-testid="draft-status">
              {draftNotice}
            </p>
          )}
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
          notice={outcome.notice}
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
            <dt>To</dt>
            <dd data-testid="receipt-recipient">
              {outcome.prepared.recipient.input}
              {outcome.prepared.recipient.input !== outcome.prepared.recipient.wallet.toBase58() && (
                <>
                  {' '}
                  (wallet <code>{outcome.prepared.recipient.wallet.toBase58()}</code>)
                </>
              )}
            </dd>
            <dt>Postage</dt>
            <dd data-testid="receipt-stamp">
              {outcome.bought ? (
                <>
                  {String(outcome.bought.stamps)} stamp{outcome.bought.stamps === 1n ? '' : 's'} bought toward
                  this recipient (transaction <code>{outcome.bought.signature}</code>); this message spent
                  one.
                </>
              ) : (
                'No stamp bought for this send.'
              )}
            </dd>
            <dt>Bounty</dt>
            <dd data-testid="receipt-bounty">
              {outcome.prepared.bounty.lamports > 0n
                ? `${formatSol(outcome.prepared.bounty.lamports)} SOL, the recipient's to claim until ${formatTime(outcome.prepared.bounty.expiresAt)}; unclaimed, it comes back to you with the rent when the message is deleted after that.`
                : 'None.'}
            </dd>
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
            key={outcome.snapshot.wallet}
            recipient={outcome.prepared.recipient.wallet}
            recipientLabel={outcome.prepared.recipient.input}
            quote={outcome.prepared.quote}
            actionSuffix="and send"
            send={outcome.prepared.cost}
            notice={outcome.notice}
            changes={draftChanges(outcome.snapshot, draft)}
            beforeBuy={() => stillAsQuoted(outcome.snapshot)}
            onRepriced={requote}
            onBusy={setPurchasing}
            onBought={(out, stamps) => afterPurchase(out, outcome.snapshot, stamps)}
          />
        </>
      )}
    </section>
  );
}

/** Trustless mode: the drafts saved in this browser, to reopen or delete. */
function LocalDrafts({ current }: { current?: string }) {
  const app = useApp();
  const s = app.session;
  const [list, setList] = useState<LocalDraft[] | null>(null);
  const [error, setError] = useState('');
  const load = () =>
    listLocalDrafts(s.storage, s.wallet.address, s.passphrase)
      .then(setList)
      .catch((err: unknown) => setError(app.errorText(err)));
  useEffect(() => {
    void load();
  }, []);
  if (!error && (!list || list.length === 0)) return null;
  return (
    <section class="card drafts" aria-labelledby="local-drafts-title" data-testid="local-drafts">
      <h2 id="local-drafts-title">Drafts ({list?.length ?? 0})</h2>
      <ErrorText text={error} />
      <ul>
        {(list ?? []).map((d) => (
          <li key={d.id} data-testid="local-draft">
            <span>
              {d.draft.subject || '(no subject)'}
              {d.draft.to ? ` — to ${d.draft.to}` : ''}{' '}
              <span class="muted">saved {formatTime(BigInt(Math.floor(d.savedAt / 1000)))}</span>
            </span>{' '}
            {d.id !== current && (
              <button
                type="button"
                onClick={() =>
                  app.navigate({ name: 'compose', draft: { ...d.draft, localDraftId: d.id } as Draft })
                }
              >
                Open
              </button>
            )}{' '}
            <button
              type="button"
              onClick={async () => {
                await deleteLocalDraft(s.storage, s.wallet.address, s.passphrase, d.id).catch(
                  (err: unknown) => setError(app.errorText(err)),
                );
                await load();
              }}
            >
              Delete draft
            </button>
          </li>
        ))}
      </ul>
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
