// Server mode: the server's mail view. Folders and rows come from the API;
// bodies are sealed there, so they are opened here, and search runs in the
// page over the messages it has opened (the server holds only ciphertext).
// A message in Drafts opens in compose, to be finished or saved again.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { type LoadedMessage, loadServerMessage } from '../messages.ts';
import type { ServerMailbox, ServerMessage } from '../server/api.ts';
import { lastFolder, openedRows, rememberFolder } from '../server/folder-state.ts';
import { useApp } from '../session.ts';
import type { ComposeDraft } from './compose.tsx';
import { listKeys } from './keyboard.ts';
import { ErrorText, Field } from './widgets.tsx';

function matches(m: LoadedMessage, q: string): boolean {
  const p = m.parsed;
  const hay = [p.subject, p.from?.address, p.from?.name, ...p.to.map((t) => t.address), p.text ?? '']
    .join('\n')
    .toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/** A stored draft back in compose: its recipients, subject and text; saving again replaces it. */
export function draftFromServer(m: LoadedMessage, id: string): ComposeDraft {
  const p = m.parsed;
  return {
    to: p.to.map((t) => t.address).join(', '),
    subject: p.subject,
    body: p.text ?? '',
    bountySol: '',
    claimDays: '',
    replyTo: null,
    serverDraftId: id,
  };
}

export function FoldersView() {
  const app = useApp();
  const s = app.session;
  const api = s.api;
  const [boxes, setBoxes] = useState<ServerMailbox[] | null>(null);
  const [box, setBox] = useState<string | null>(null);
  const [rows, setRows] = useState<ServerMessage[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [opened, setOpened] = useState<Record<string, LoadedMessage | string>>({});
  const [query, setQuery] = useState('');
  const [error, setError] = useState('');

  const openAll = (list: ServerMessage[]) => {
    const queue = [...list];
    const worker = async () => {
      for (let m = queue.shift(); m; m = queue.shift()) {
        const id = m.id;
        try {
          const msg = await loadServerMessage(s, id);
          setOpened((o) => ({ ...o, [id]: msg }));
        } catch (err) {
          setOpened((o) => ({ ...o, [id]: app.errorText(err) }));
        }
      }
    };
    void Promise.all([worker(), worker(), worker()]);
  };

  const loadRows = async (mailbox: string, before?: number) => {
    if (!api) return;
    try {
      const page = await api.messages(mailbox, before);
      setRows((r) => (before === undefined ? page.messages : [...r, ...page.messages]));
      setNext(page.next_before);
      openAll(page.messages);
    } catch (err) {
      setError(app.errorText(err));
    }
  };

  useEffect(() => {
    (async () => {
      if (!api) return;
      try {
        const r = await api.mailboxes();
        setBoxes(r.mailboxes);
        const first =
          r.mailboxes.find((b) => b.id === lastFolder()) ??
          r.mailboxes.find((b) => b.name === 'INBOX') ??
          r.mailboxes[0];
        if (first) {
          setBox(first.id);
          rememberFolder(first.id);
          await loadRows(first.id);
        }
      } catch (err) {
        setError(app.errorText(err));
      }
    })();
  }, []);

  const shown = useMemo(() => {
    const q = query.trim();
    if (!q) return rows;
    return rows.filter((r) => {
      const o = opened[r.id];
      return typeof o === 'object' && matches(o, q);
    });
  }, [rows, opened, query]);
  const openedCount = rows.filter((r) => typeof opened[r.id] === 'object').length;
  // The Sent folder (filled by the server for mail sent through it) lists whom each went to.
  const current = boxes?.find((b) => b.id === box);
  const inSent = current?.name === 'Sent';
  const open = async (r: ServerMessage) => {
    if (current) openedRows.set(r.id, { row: r, mailbox: { id: current.id, name: current.name } });
    if (current?.name !== 'Drafts') {
      app.navigate({ name: 'server-message', id: r.id, emailAddress: r.email_address });
      return;
    }
    try {
      app.navigate({ name: 'compose', draft: draftFromServer(await loadServerMessage(s, r.id), r.id) });
    } catch (err) {
      setError(app.errorText(err));
    }
  };

  return (
    <section aria-labelledby="folders-title" class="folders">
      <h1 id="folders-title" tabIndex={-1}>
        Mail on the server
      </h1>
      <ErrorText text={error} />
      {boxes !== null && boxes.length === 0 && <p>No mail has been delivered to this account yet.</p>}
      {boxes && boxes.length > 0 && (
        <nav aria-label="Folders" class="folder-list">
          {boxes.map((b) => (
            <button
              type="button"
              key={b.id}
              aria-current={b.id === box ? 'true' : undefined}
              onClick={() => {
                setBox(b.id);
                rememberFolder(b.id);
                void loadRows(b.id);
              }}
            >
              {b.name}{' '}
              <span class="muted">
                ({b.messages}
                {b.unseen ? `, ${b.unseen} unread` : ''})
              </span>
            </button>
          ))}
        </nav>
      )}
      <Field
        label="Search"
        hint={`Searches the ${openedCount} message(s) opened in this page: the server holds only sealed bodies.`}
      >
        <input type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </Field>
      <ul
        class="rows"
        data-rows
        onKeyDown={(e) => listKeys(e as unknown as KeyboardEvent)}
        aria-label="Messages, newest first"
      >
        {shown.map((r) => {
          const o = opened[r.id];
          const unseen = !r.flags.includes('\\Seen');
          return (
            <li key={r.id}>
              <button
                type="button"
                class={`row${unseen ? ' unseen' : ''}`}
                data-row
                data-testid="server-row"
                onClick={() => void open(r)}
              >
                <span class="row-from">
                  {typeof o !== 'object'
                    ? `#${r.uid}`
                    : inSent
                      ? `To: ${o.parsed.to.map((t) => t.address).join(', ')}`
                      : (o.parsed.from?.address ?? '')}
                </span>
                <span class="row-subject">
                  {o === undefined ? (
                    <em>Opening…</em>
                  ) : typeof o === 'string' ? (
                    <em class="muted">{o}</em>
                  ) : (
                    o.parsed.subject || '(no subject)'
                  )}
                </span>
                <span class="row-meta">
                  <time>{new Date(r.received_at).toLocaleString()}</time>
                  {r.cid?.startsWith('b3:') && <span class="badge">local-only</span>}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
      {query.trim() && shown.length === 0 && <p>No opened message matches.</p>}
      {next !== null && box && (
        <button type="button" onClick={() => loadRows(box, next)}>
          Older messages
        </button>
      )}
    </section>
  );
}
