// Server mode reader: the sealed bytes come from the server's mail view
// (this is how no_ipfs mail is read), are opened here, and the message is
// marked \Seen. Reply links to the parent on chain (reply_to_hash, sent
// direct-signed) when the parent has an Email account and came from a wallet
// address, which has an on-chain mailbox; other replies go through the server
// with In-Reply-To and References.
import { useEffect, useState } from 'preact/hooks';
import { isBase58Key } from '../../../chain/hash.ts';
import { localPart } from '../chain/recipient.ts';
import { replySubject } from '../mail/build-message.ts';
import { type LoadedMessage, loadServerMessage } from '../messages.ts';
import { useApp } from '../session.ts';
import { AttestedBadge } from './attested-badge.tsx';
import type { ComposeDraft } from './compose.tsx';
import { MailBody } from './mail-body.tsx';
import { replyDraft } from './reader.tsx';
import { ErrorText } from './widgets.tsx';

export function ServerReaderView({ id, emailAddress }: { id: string; emailAddress: string | null }) {
  const app = useApp();
  const s = app.session;
  const [loaded, setLoaded] = useState<LoadedMessage | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const msg = await loadServerMessage(s, id);
        if (!live) return;
        setLoaded(msg);
        document.getElementById('mail-subject')?.focus();
        await s.api?.setFlags(id, ['\\Seen']).catch(() => {});
      } catch (err) {
        if (live) setError(app.errorText(err));
      }
    })();
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

  return (
    <section aria-label="Message">
      <div class="toolbar">
        <button type="button" onClick={() => app.navigate({ name: 'folders' })}>
          ← Folders
        </button>
        {loaded && (
          <button type="button" onClick={reply}>
            Reply
          </button>
        )}
      </div>
      <ErrorText text={error} />
      {!loaded && !error && <p aria-busy="true">Opening the message…</p>}
      {loaded && <AttestedBadge envelopeFrom={loaded.opened.envelope.from} />}
      {loaded && <MailBody mail={loaded.parsed} />}
    </section>
  );
}
