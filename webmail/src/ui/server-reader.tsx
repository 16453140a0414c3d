// Server mode reader: the sealed bytes come from the server's mail view
// (this is how no_ipfs mail is read), are opened here, and the message is
// marked \Seen. Reply links to the parent on chain (reply_to_hash, sent
// direct-signed) when the parent has an Email account and came from a wallet
// address, which has an on-chain mailbox; other replies go through the server
// with In-Reply-To and References. Forward (inline or as an attachment),
// Mark unread, Move to a folder (a Junk verdict sends the opened plaintext
// along so the server's spam filter learns from it), and Delete: to Trash,
// or — inside Trash — for good after a question.
import { useEffect, useRef, useState } from 'preact/hooks';
import { isBase58Key } from '../../../chain/client/hash.ts';
import { localPart } from '../chain/recipient.ts';
import { replySubject } from '../mail/build-message.ts';
import { type LoadedMessage, loadServerMessage } from '../messages.ts';
import type { ServerMailbox } from '../server/api.ts';
import { openedRows } from '../server/folder-state.ts';
import { useApp } from '../session.ts';
import { AttestedBadge } from './attested-badge.tsx';
import type { ComposeDraft } from './compose.tsx';
import { ForwardButtons } from './forward-buttons.tsx';
import { MailBody } from './mail-body.tsx';
import { replyDraft } from './reader.tsx';
import { Sheet } from './send-summary.tsx';
import { ErrorText } from './widgets.tsx';

/** Folders a message can always be moved to; the server makes them on first use. */
const STANDARD_FOLDERS = ['INBOX', 'Junk', 'Trash', 'Archive'];

/** Whether a move between these folders is a spam verdict the server's learner hears (src/mail/spam/learn.ts). */
export function learnsFrom(from: string | undefined, to: string): boolean {
  return (to === 'Junk' && from !== 'Junk') || (from === 'Junk' && to !== 'Junk' && to !== 'Trash');
}

export function ServerReaderView({ id, emailAddress }: { id: string; emailAddress: string | null }) {
  const app = useApp();
  const s = app.session;
  const [loaded, setLoaded] = useState<LoadedMessage | null>(null);
  const [error, setError] = useState('');
  const [boxes, setBoxes] = useState<ServerMailbox[]>([]);
  const [target, setTarget] = useState('');
  const [busy, setBusy] = useState(false);
  const [confirmExpunge, setConfirmExpunge] = useState(false);
  const expungeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirmExpunge) expungeRef.current?.focus();
  }, [confirmExpunge]);
  const from = openedRows.get(id);
  const folder = from?.mailbox.name;

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const msg = await loadServerMessage(s, id);
        if (!live) return;
        setLoaded(msg);
        document.getElementById('mail-subject')?.focus();
        const flags = new Set([...(from?.row.flags ?? []), '\\Seen']);
        await s.api?.setFlags(id, [...flags]).catch(() => {});
      } catch (err) {
        if (live) setError(app.errorText(err));
      }
    })();
    s.api
      ?.mailboxes()
      .then((r) => live && setBoxes(r.mailboxes))
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [id]);

  const reply = () => {
    if (!loaded) return;
    const p = loaded.parsed;
    const sender = p.from?.address ?? loaded.opened.envelope.from;
    if (emailAddress && isBase58Key(localPart(sender))) {
      app.navigate({ name: 'compose', draft: replyDraft(emailAddress, loaded, false) });
      return;
    }
    // Through the server: no chain link, but In-Reply-To and References thread it.
    const draft: ComposeDraft = {
      to: p.from?.address ?? loaded.opened.envelope.from,
      subject: replySubject(p.subject),
      body: `\n\n${p.from?.address ?? ''} wrote:\n${(p.text ?? '')
        .split(/\r?\n/)
        .map((l) => `> ${l}`)
        .join('\n')}`,
      bountySol: '',
      claimDays: '',
      replyTo: null,
      reply: { messageId: p.messageId, references: p.references },
    };
    app.navigate({ name: 'compose', draft });
  };

  /** Runs one server action, then goes back to the folder with its notice. */
  const act = async (fn: () => Promise<string>) => {
    if (busy || !s.api) return;
    setBusy(true);
    setError('');
    try {
      const notice = await fn();
      app.navigate({ name: 'folders' });
      app.notify(notice);
    } catch (err) {
      setError(app.errorText(err));
      setBusy(false);
    }
  };

  const move = (to: string) =>
    act(async () => {
      const api = s.api;
      if (!api) throw new Error('not in server mode');
      // The server cannot read the sealed copy: for a spam verdict the page sends the plaintext it opened.
      const learn = loaded && learnsFrom(folder, to) ? loaded.opened.raw : undefined;
      const out = await api.moveMessage(id, to, learn);
      openedRows.delete(id);
      return `Moved to ${out.mailbox.name === 'INBOX' ? 'Inbox' : out.mailbox.name}${out.learned ? ` (the spam filter learns it as ${out.learned})` : ''}.`;
    });

  const remove = () => {
    if (folder === 'Trash') {
      setConfirmExpunge(true);
      return;
    }
    void move('Trash');
  };

  const expunge = () =>
    act(async () => {
      await s.api?.deleteMessage(id);
      openedRows.delete(id);
      return 'Deleted permanently.';
    });

  const markUnread = () =>
    act(async () => {
      const flags = (from?.row.flags ?? ['\\Seen']).filter((f) => f !== '\\Seen');
      await s.api?.setFlags(id, flags);
      return 'Marked as unread.';
    });

  const names = [...new Set([...STANDARD_FOLDERS, ...boxes.map((b) => b.name)])].filter((n) => n !== folder);

  return (
    <section aria-label="Message">
      <div class="toolbar">
        <button type="button" data-shortcut="Escape" onClick={() => app.navigate({ name: 'folders' })}>
          ← Folders
        </button>
        {loaded && (
          <button type="button" data-shortcut="r" onClick={reply}>
            Reply
          </button>
        )}
        {(loaded || error) && <ForwardButtons loaded={loaded} onError={setError} />}
        <button type="button" data-shortcut="u" onClick={markUnread} disabled={busy}>
          Mark unread
        </button>
        <button type="button" data-shortcut="e #" onClick={remove} disabled={busy}>
          {folder === 'Trash' ? 'Delete permanently' : 'Delete'}
        </button>
        <label class="move">
          Move to{' '}
          <select value={target} onChange={(e) => setTarget(e.currentTarget.value)} disabled={busy}>
            <option value="">Choose a folder…</option>
            {names.map((n) => (
              <option key={n} value={n}>
                {n === 'INBOX' ? 'Inbox' : n}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => target && void move(target)} disabled={busy || !target}>
          Move
        </button>
      </div>
      <ErrorText text={error} />
      {!loaded && !error && <p aria-busy="true">Opening the message…</p>}
      {loaded && <AttestedBadge envelopeFrom={loaded.opened.envelope.from} />}
      {loaded && <MailBody mail={loaded.parsed} />}
      {confirmExpunge && (
        <Sheet
          title="Delete this message permanently?"
          testId="expunge-confirm"
          busy={busy}
          onCancel={() => setConfirmExpunge(false)}
        >
          <p>
            It leaves Trash and this server for good (mail clients over IMAP see it go too). This cannot be
            undone.
          </p>
          <p class="actions">
            <button type="button" class="primary" ref={expungeRef} onClick={expunge} disabled={busy}>
              {busy ? 'Deleting…' : 'Delete permanently'}
            </button>
            <button type="button" onClick={() => setConfirmExpunge(false)} disabled={busy}>
              Cancel
            </button>
          </p>
        </Sheet>
      )}
    </section>
  );
}
