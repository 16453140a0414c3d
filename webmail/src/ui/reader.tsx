// One on-chain message: its chain facts, the opened body, Reply (on chain,
// with the parent's address as reply_to_hash), Forward (inline or as an
// attachment), Mark unread, Delete (DeleteMail, after a sheet with the rent
// refund and the bounty rule) and Claim bounty.
import { useEffect, useState } from 'preact/hooks';
import { getEmailAt, type InboxEntry } from '../../../chain/client/client.ts';
import { claimBountyInstruction } from '../../../chain/client/instructions.ts';
import { type Draft, formatSol } from '../chain/compose.ts';
import { type DeletePlan, prepareDeleteMail } from '../chain/delete-mail.ts';
import { sendInstructions } from '../chain/tx.ts';
import { inboxSnapshot, ReadMarks, saveInboxSnapshot } from '../inbox-state.ts';
import { replySubject } from '../mail/build-message.ts';
import { inboxEntries, type LoadedMessage, loadChainMessage } from '../messages.ts';
import { useApp } from '../session.ts';
import { ActionSheet } from './action-sheet.tsx';
import { AttestedBadge } from './attested-badge.tsx';
import { ForwardButtons } from './forward-buttons.tsx';
import { MailBody } from './mail-body.tsx';
import { ErrorText, formatTime } from './widgets.tsx';

export function replyDraft(parentEmail: string, loaded: LoadedMessage, localOnly: boolean): Draft {
  const p = loaded.parsed;
  // Local-only mail: the sealed envelope's sender (reference "Reply on-chain").
  const to = localOnly ? loaded.opened.envelope.from : (p.from?.address ?? loaded.opened.envelope.from);
  const quoted = (p.text ?? '')
    .split(/\r?\n/)
    .map((l) => `> ${l}`)
    .join('\n');
  return {
    to,
    subject: replySubject(p.subject),
    body: `\n\n${p.from?.address ?? to} wrote:\n${quoted}`,
    bountySol: '',
    claimDays: '',
    replyTo: { email: parentEmail, messageId: p.messageId, references: p.references },
  };
}

export function ReaderView({ address }: { address: string }) {
  const app = useApp();
  const s = app.session;
  const [entry, setEntry] = useState<InboxEntry | null>(inboxEntries.get(address) ?? null);
  const [loaded, setLoaded] = useState<LoadedMessage | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        let e = entry;
        if (!e) {
          const email = await getEmailAt(s.conn, s.programId, address);
          if (!email)
            throw new Error('This message account does not exist on chain (deleted, or a wrong address).');
          e = { address: email.recipient, email, lamports: 0 };
          if (live) setEntry(e);
        }
        const msg = await loadChainMessage(s, { address, email: e.email });
        if (live) setLoaded(msg);
      } catch (err) {
        if (live) setError(app.errorText(err));
      }
    })();
    return () => {
      live = false;
    };
  }, [address]);

  useEffect(() => {
    if (!loaded) return;
    document.getElementById('mail-subject')?.focus();
    document.title = `${loaded.parsed.subject || '(no subject)'} — Sealpost`;
    new ReadMarks(s.storage, s.wallet.address).mark([address]);
  }, [loaded]);

  // 'claiming' while the transaction is out, 'claimed' once submitted: no second claim either way.
  const [claimState, setClaimState] = useState<'none' | 'claiming' | 'claimed'>('none');
  const claim = async () => {
    if (claimState !== 'none') return;
    setClaimState('claiming');
    setNotice('Claiming the bounty…');
    try {
      const ix = claimBountyInstruction({
        programId: s.programId,
        recipient: s.wallet.publicKey,
        email: address,
      });
      const out = await sendInstructions(s.conn, s.wallet, [ix]);
      setClaimState('claimed');
      // The account as it is now (its bounty paid out), also for the inbox's cached entry.
      const fresh =
        out.status === 'confirmed' ? await getEmailAt(s.conn, s.programId, address).catch(() => null) : null;
      if (fresh && entry) {
        const next = { ...entry, email: fresh };
        inboxEntries.set(address, next);
        setEntry(next);
      }
      setNotice(
        out.status === 'confirmed'
          ? 'Bounty claimed.'
          : 'The claim is still pending; check your balance shortly.',
      );
    } catch (err) {
      setClaimState('none');
      setNotice('');
      setError(app.errorText(err));
    }
  };

  const [plan, setPlan] = useState<DeletePlan | null>(null);
  const [preparing, setPreparing] = useState(false);
  const askDelete = async () => {
    if (preparing || plan) return;
    setPreparing(true);
    setError('');
    try {
      setPlan(
        await prepareDeleteMail(
          { conn: s.conn, programId: s.programId, wallet: s.wallet.publicKey },
          address,
        ),
      );
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setPreparing(false);
    }
  };
  const deleted = (message: string) => {
    setPlan(null);
    // The inbox drops the row without reading the chain again.
    inboxEntries.delete(address);
    const snap = inboxSnapshot(s.wallet.address);
    if (snap)
      saveInboxSnapshot({ ...snap, entries: snap.entries.filter((e) => e.address.toBase58() !== address) });
    app.navigate({ name: 'inbox' });
    app.notify(message);
  };
  const markUnread = () => {
    new ReadMarks(s.storage, s.wallet.address).unmark([address]);
    app.navigate({ name: 'inbox' });
    app.notify('Marked as unread.');
  };

  const email = entry?.email;
  const nowSec = Date.now() / 1000;
  const claimable =
    email &&
    claimState !== 'claimed' &&
    email.bountyLamports > 0n &&
    nowSec < Number(email.expiresAt) &&
    email.recipient.equals(s.wallet.publicKey);

  return (
    <section aria-label="Message">
      <div class="toolbar">
        <button type="button" data-shortcut="Escape" onClick={() => app.navigate({ name: 'inbox' })}>
          ← Inbox
        </button>
        {loaded && email && (
          <button
            type="button"
            data-shortcut="r"
            onClick={() =>
              app.navigate({
                name: 'compose',
                draft: replyDraft(address, loaded, email.cid.startsWith('b3:')),
              })
            }
          >
            Reply
          </button>
        )}
        {(loaded || error) && <ForwardButtons loaded={loaded} onError={setError} />}
        <button type="button" data-shortcut="u" onClick={markUnread}>
          Mark unread
        </button>
        {email && (
          <button type="button" data-shortcut="e #" onClick={askDelete} disabled={preparing}>
            {preparing ? 'Reading the chain…' : 'Delete'}
          </button>
        )}
        {claimable && (
          <button type="button" onClick={claim} disabled={claimState === 'claiming'}>
            Claim bounty ({formatSol(email.bountyLamports)} SOL)
          </button>
        )}
      </div>
      <ErrorText text={error} />
      {notice && <p role="status">{notice}</p>}
      {!loaded && <h1 tabIndex={-1}>Message</h1>}
      {!loaded && !error && <p aria-busy="true">Fetching and opening the message…</p>}
      {loaded && <AttestedBadge envelopeFrom={loaded.opened.envelope.from} />}
      {loaded && <MailBody mail={loaded.parsed} />}
      {email && (
        <details class="chain-facts">
          <summary>On chain</summary>
          <dl class="headers">
            <dt>Message account</dt>
            <dd>
              <code data-testid="email-address">{address}</code>
            </dd>
            <dt>Index</dt>
            <dd>{String(email.index)}</dd>
            <dt>Signed by</dt>
            <dd>
              <code>{email.sender.toBase58()}</code>
            </dd>
            <dt>Chain time</dt>
            <dd>{formatTime(email.epoch)}</dd>
            <dt>CID</dt>
            <dd>
              <code>{email.cid}</code>
              {email.cid.startsWith('b3:') ? ' (local-only)' : ''}
            </dd>
            {email.bountyLamports > 0n && (
              <>
                <dt>Bounty</dt>
                <dd>
                  {formatSol(email.bountyLamports)} SOL, claim until {formatTime(email.expiresAt)}
                </dd>
              </>
            )}
            {loaded && (
              <>
                <dt>Envelope</dt>
                <dd>
                  from {loaded.opened.envelope.from || '<>'} to {loaded.opened.envelope.to}
                </dd>
              </>
            )}
          </dl>
        </details>
      )}
      {plan && <ActionSheet action={plan} onCancel={() => setPlan(null)} onDone={deleted} />}
    </section>
  );
}
