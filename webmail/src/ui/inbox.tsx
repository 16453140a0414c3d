// The on-chain inbox: Email accounts enumerated newest first from the
// mailbox's mail_count, a page at a time; each listed message is fetched
// from the gateway and opened in the page to show its From and Subject.
import { useEffect, useState } from 'preact/hooks';
import { getMailbox, type InboxEntry, listInbox } from '../../../chain/client.ts';
import { formatSol } from '../chain/compose.ts';
import { inboxEntries, type LoadedMessage, loadChainMessage } from '../messages.ts';
import { useApp } from '../session.ts';
import { listKeys } from './keyboard.ts';
import { ErrorText, formatTime, short } from './widgets.tsx';

const PAGE = 20;

type RowState = { state: 'loading' } | { state: 'ok'; msg: LoadedMessage } | { state: 'error'; text: string };

export function InboxView() {
  const app = useApp();
  const s = app.session;
  const [entries, setEntries] = useState<InboxEntry[] | null>(null);
  const [mailCount, setMailCount] = useState<bigint | null>(null);
  const [rows, setRows] = useState<Record<string, RowState>>({});
  const [error, setError] = useState('');
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);

  const openRows = (list: InboxEntry[]) => {
    // Three at a time: enough to fill the screen quickly without flooding the gateway.
    const queue = [...list];
    const worker = async () => {
      for (let e = queue.shift(); e; e = queue.shift()) {
        const key = e.address.toBase58();
        if (e.email.cid.startsWith('b3:')) {
          setRows((r) => ({
            ...r,
            [key]: { state: 'error', text: 'local-only: stored on the operator’s server (no_ipfs)' },
          }));
          continue;
        }
        try {
          const msg = await loadChainMessage(s, e);
          setRows((r) => ({ ...r, [key]: { state: 'ok', msg } }));
        } catch (err) {
          setRows((r) => ({ ...r, [key]: { state: 'error', text: app.errorText(err) } }));
        }
      }
    };
    void Promise.all([worker(), worker(), worker()]);
  };

  const load = async (before?: bigint) => {
    setLoading(true);
    setError('');
    try {
      const mailbox = await getMailbox(s.conn, s.programId, s.wallet.publicKey);
      setMailCount(mailbox?.mailCount ?? null);
      const page = mailbox
        ? await listInbox(s.conn, s.programId, s.wallet.publicKey, { limit: PAGE, before })
        : [];
      for (const e of page) inboxEntries.set(e.address.toBase58(), e);
      setEntries((prev) => (before === undefined ? page : [...(prev ?? []), ...page]));
      const last = page[page.length - 1];
      setMore(page.length === PAGE && last !== undefined && last.email.index > 0n);
      setRows((r) => {
        const next = { ...r };
        for (const e of page) next[e.address.toBase58()] ??= { state: 'loading' };
        return next;
      });
      openRows(page);
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load();
  }, []);

  return (
    <section aria-labelledby="inbox-title">
      <div class="toolbar">
        <h1 id="inbox-title" tabIndex={-1}>
          Inbox
        </h1>
        <button type="button" onClick={() => load()} disabled={loading}>
          Refresh
        </button>
      </div>
      <ErrorText text={error} />
      {mailCount === null && entries !== null && !error && (
        <p>This wallet has no mailbox on chain yet, so nobody can send it mail.</p>
      )}
      {entries === null && !error && <p aria-busy="true">Reading the chain…</p>}
      {entries !== null && entries.length === 0 && mailCount !== null && <p>No messages yet.</p>}
      {entries !== null && entries.length > 0 && (
        <ul
          class="rows"
          data-rows
          aria-label="Messages, newest first"
          onKeyDown={(e) => listKeys(e as unknown as KeyboardEvent)}
        >
          {entries.map((e) => {
            const key = e.address.toBase58();
            const row = rows[key] ?? { state: 'loading' };
            const parsed = row.state === 'ok' ? row.msg.parsed : null;
            return (
              <li key={key}>
                <button
                  type="button"
                  class="row"
                  data-row
                  data-testid="inbox-row"
                  onClick={() => app.navigate({ name: 'message', address: key })}
                >
                  <span class="row-from">
                    {parsed
                      ? parsed.from?.name || parsed.from?.address || '(no sender)'
                      : `#${e.email.index}`}
                  </span>
                  <span class="row-subject">
                    {row.state === 'loading' && <em>Opening…</em>}
                    {row.state === 'error' && <em class="muted">{row.text}</em>}
                    {parsed && (parsed.subject || '(no subject)')}
                  </span>
                  <span class="row-meta">
                    {e.email.bountyLamports > 0n && (
                      <span class="badge">bounty {formatSol(e.email.bountyLamports)} SOL</span>
                    )}
                    {!isZero(e.email.replyToHash) && <span class="badge">reply</span>}
                    <time>{formatTime(e.email.epoch)}</time>
                    <span class="muted"> {short(key)}</span>
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {more && (
        <button
          type="button"
          onClick={() => load(entries?.[entries.length - 1]?.email.index)}
          disabled={loading}
        >
          Older messages
        </button>
      )}
    </section>
  );
}

function isZero(a: Uint8Array): boolean {
  return a.every((b) => b === 0);
}
