// The on-chain inbox: Email accounts enumerated newest first from the
// mailbox's mail_count, a page at a time; each listed message is fetched
// from the gateway and opened in the page to show its sender's name, subject
// and first words. Going back to the inbox asks the chain only for indexes
// past the mail_count seen last (inbox-state.ts); Refresh reads it afresh.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { getMailbox, type InboxEntry, listInbox } from '../../../chain/client.ts';
import { formatSol } from '../chain/compose.ts';
import {
  inboxSnapshot,
  mergeEntries,
  ReadMarks,
  relativeTime,
  saveInboxSnapshot,
  snippetOf,
} from '../inbox-state.ts';
import type { ParsedAddress } from '../mail/parse.ts';
import { inboxEntries, type LoadedMessage, loadChainMessage } from '../messages.ts';
import { useApp } from '../session.ts';
import { listKeys } from './keyboard.ts';
import { ErrorText, formatTime, short } from './widgets.tsx';

const PAGE = 20;

type RowState = { state: 'loading' } | { state: 'ok'; msg: LoadedMessage } | { state: 'error'; text: string };

/** A sender as a person reads it: the display name, else the address with a wallet shortened. */
export function senderLabel(from: ParsedAddress | null | undefined): string {
  if (!from) return '(no sender)';
  if (from.name) return from.name;
  const at = from.address.lastIndexOf('@');
  const local = at < 0 ? from.address : from.address.slice(0, at);
  return local.length >= 32 ? `${short(local)}${at < 0 ? '' : from.address.slice(at)}` : from.address;
}

export function InboxView() {
  const app = useApp();
  const s = app.session;
  const wallet = s.wallet.address;
  const cached = inboxSnapshot(wallet);
  const marks = useMemo(() => new ReadMarks(s.storage, wallet), [wallet]);
  const [entries, setEntries] = useState<InboxEntry[] | null>(cached?.entries ?? null);
  const [mailCount, setMailCount] = useState<bigint | null>(cached?.mailCount ?? null);
  const [rows, setRows] = useState<Record<string, RowState>>({});
  const [error, setError] = useState('');
  const [more, setMore] = useState(cached?.more ?? false);
  const [loading, setLoading] = useState(false);
  const [, setMarksVersion] = useState(0);

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

  const show = (list: InboxEntry[], count: bigint | null, hasMore: boolean) => {
    for (const e of list) inboxEntries.set(e.address.toBase58(), e);
    setEntries(list);
    setMailCount(count);
    setMore(hasMore);
    if (count !== null) saveInboxSnapshot({ wallet, entries: list, mailCount: count, more: hasMore });
    setRows((r) => {
      const next = { ...r };
      for (const e of list) next[e.address.toBase58()] ??= { state: 'loading' };
      return next;
    });
    openRows(list);
  };

  /** `mode`: 'fresh' reads the newest page; 'new' only indexes past the known mail_count; 'older' the next page down. */
  const load = async (mode: 'fresh' | 'new' | 'older') => {
    setLoading(true);
    setError('');
    try {
      const mailbox = await getMailbox(s.conn, s.programId, s.wallet.publicKey);
      if (!mailbox) return show([], null, false);
      const known = mode === 'fresh' ? [] : (entries ?? []);
      if (mode === 'older') {
        const last = known[known.length - 1];
        const page = await listInbox(s.conn, s.programId, s.wallet.publicKey, {
          limit: PAGE,
          before: last?.email.index,
        });
        const end = page[page.length - 1];
        return show(
          [...known, ...page],
          mailbox.mailCount,
          page.length === PAGE && (end?.email.index ?? 0n) > 0n,
        );
      }
      const seen = mode === 'new' ? (mailCount ?? 0n) : 0n;
      if (mode === 'new' && seen >= mailbox.mailCount) return show(known, mailbox.mailCount, more);
      const page = await listInbox(s.conn, s.programId, s.wallet.publicKey, {
        limit: mode === 'new' ? Number(mailbox.mailCount - seen) : PAGE,
        after: seen,
      });
      if (mode === 'new') return show(mergeEntries(page, known), mailbox.mailCount, more);
      const end = page[page.length - 1];
      show(page, mailbox.mailCount, page.length === PAGE && (end?.email.index ?? 0n) > 0n);
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    if (cached) {
      show(cached.entries, cached.mailCount, cached.more);
      void load('new');
    } else void load('fresh');
  }, []);

  const unread = (entries ?? []).filter((e) => !marks.has(e.address.toBase58())).length;
  useEffect(() => {
    document.title = unread > 0 ? `Inbox (${unread}) — Sealpost` : 'Inbox — Sealpost';
  }, [unread]);

  const markAllRead = () => {
    marks.mark((entries ?? []).map((e) => e.address.toBase58()));
    setMarksVersion((v) => v + 1);
  };

  return (
    <section aria-labelledby="inbox-title">
      <div class="toolbar">
        <h1 id="inbox-title" tabIndex={-1}>
          Inbox
        </h1>
        <span class="muted" data-testid="unread-count">
          {unread > 0 ? `${unread} unread` : ''}
        </span>
        <button type="button" onClick={() => load('fresh')} disabled={loading}>
          Refresh
        </button>
        {unread > 0 && (
          <button type="button" onClick={markAllRead}>
            Mark all read
          </button>
        )}
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
            const isUnread = !marks.has(key);
            return (
              <li key={key}>
                <button
                  type="button"
                  class={isUnread ? 'row unread' : 'row'}
                  data-row
                  data-testid="inbox-row"
                  data-unread={isUnread ? 'true' : 'false'}
                  onClick={() => {
                    marks.mark([key]);
                    app.navigate({ name: 'message', address: key });
                  }}
                >
                  <span class="row-from">
                    {isUnread && <span class="visually-hidden">Unread. </span>}
                    {parsed ? senderLabel(parsed.from) : `#${e.email.index}`}
                  </span>
                  <span class="row-subject">
                    {row.state === 'loading' && <em>Opening…</em>}
                    {row.state === 'error' && <em class="muted">{row.text}</em>}
                    {parsed && (
                      <>
                        <span class="subject">{parsed.subject || '(no subject)'}</span>
                        <span class="snippet" data-testid="inbox-snippet">
                          {snippetOf(parsed.text)}
                        </span>
                      </>
                    )}
                  </span>
                  <span class="row-meta">
                    {e.email.bountyLamports > 0n && (
                      <span class="badge">bounty {formatSol(e.email.bountyLamports)} SOL</span>
                    )}
                    {!isZero(e.email.replyToHash) && <span class="badge">reply</span>}
                    <time title={formatTime(e.email.epoch)} data-testid="inbox-time">
                      {relativeTime(e.email.epoch)}
                    </time>
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {more && (
        <button type="button" onClick={() => load('older')} disabled={loading}>
          Older messages
        </button>
      )}
    </section>
  );
}

function isZero(a: Uint8Array): boolean {
  return a.every((b) => b === 0);
}
