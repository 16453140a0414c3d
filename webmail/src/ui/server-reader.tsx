// Server mode reader: the sealed bytes come from the server's mail view
// (this is how no_ipfs mail is read), are opened here, and the message is
// marked \Seen.
import { useEffect, useState } from 'preact/hooks';
import { replySubject } from '../mail/build-message.ts';
import { type LoadedMessage, loadServerMessage } from '../messages.ts';
import { useApp } from '../session.ts';
import { MailBody } from './mail-body.tsx';
import { ErrorText } from './widgets.tsx';

export function ServerReaderView({ id }: { id: string }) {
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
    app.navigate({
      name: 'compose',
      draft: {
        to: p.from?.address ?? loaded.opened.envelope.from,
        subject: replySubject(p.subject),
        body: `\n\n${p.from?.address ?? ''} wrote:\n${(p.text ?? '')
          .split(/\r?\n/)
          .map((l) => `> ${l}`)
          .join('\n')}`,
        bountySol: '',
        claimDays: '',
        replyTo: null,
      },
    });
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
      {loaded && <MailBody mail={loaded.parsed} />}
    </section>
  );
}
