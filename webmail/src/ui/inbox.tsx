// The on-chain inbox: Email accounts enumerated newest first from the
// mailbox's mail_count, a page at a time; each listed message is fetched
// from the gateway and opened in the page to show its sender's name, subject
// and first words. Going back to the inbox asks the chain only for indexes
// past the mail_count seen last (inbox-state.ts); Refresh reads it afresh.
// The unread count covers the whole mailbox (unread.ts); the loaded pages and
// the scroll position survive a visit to a message; older pages load as the
// list's end scrolls into view (the "Older messages" button stays for the
// keyboard); search covers the messages this tab has opened.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { getMailbox, type InboxEntry, listInbox } from '../../../chain/client/client.ts';
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
import { inboxEntries, type LoadedMessage, loadChainMessage, loadedNow } from '../messages.ts';
import { matchesQuery } from '../search.ts';
import { useApp } from '../session.ts';
import { countUnread, mailboxAddresses, type UnreadCount } from '../unread.ts';
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

/** Where the inbox was scrolled to when left, per wallet (the page's lifetime). */
const scrollAt = new Map<string, number>();
/** The last whole-mailbox unread count, per wallet, shown at once on return. */
const unreadAt = new Map<string, UnreadCount & { mailCount: bigint }>();

function initialRows(list: InboxEntry[] | undefined): Record<string, RowState> {
  const out: Record<string, RowState> = {};
  for (const e of list ?? []) {
    const key = e.address.toBase58();
    const msg = loadedNow(`chain:${key}`);
    if (msg) out[key] = { state: 'ok', msg };
  }
  return out;
}

/** Words only a screen reader hears, so a row's name from its content reads its parts apart. */
const Said = ({ text }: { text: string }) => <span class="visually-hidden">{text}</span>;

export function InboxView() {
  const app = useApp();
  const s = app.session;
  const wallet = s.wallet.address;
  const cached = inboxSnapshot(wallet);
  const marks = useMemo(() => new ReadMarks(s.storage, wallet), [wallet]);
  const [entries, setEntries] = useState<InboxEntry[] | null>(cached?.entries ?? null);
  const [mailCount, setMailCount] = useState<bigint | null>(cached?.mailCount ?? null);
  const [rows, setRows] = useState<Record<string, RowState>>(() => initialRows(cached?.entries));
  const [error, setError] = useState('');
  const [more, setMore] = useState(cached?.more ?? false);
  const [loading, setLoading] = useState(false);
  const [marksVersion, setMarksVersion] = useState(0);
  const [unreadTotal, setUnreadTotal] = useState<UnreadCount | null>(() => {
    const u = unreadAt.get(wallet);
    return u && cached && u.mailCount === cached.mailCount ? u : null;
  });
  const [query, setQuery] = useState('');
  // The latest state for callbacks that outlive a render (the scroll observer, load()).
  const live = useRef({ entries, mailCount, more, loading });
  live.current = { entries, mailCount, more, loading };
  const sentinel = useRef<HTMLLIElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  const openRows = (list: InboxEntry[]) => {
    // Three at a time: enough to fill the screen quickly without flooding the gateway.
    const queue = list.filter((e) => !loadedNow(`chain:${e.address.toBase58()}`));
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

  const recount = async (count: bigint, list: InboxEntry[]) => {
    try {
      const known = new Set(list.map((e) => e.address.toBase58()));
      const u = await countUnread(s.conn, s.programId, wallet, count, (a) => marks.has(a), known);
      unreadAt.set(wallet, { ...u, mailCount: count });
      setUnreadTotal(u);
    } catch (err) {
      // The rows still show their own state; the count waits for the next read.
      console.warn('unread count', err);
    }
  };

  const show = (list: InboxEntry[], count: bigint | null, hasMore: boolean) => {
    for (const e of list) inboxEntries.set(e.address.toBase58(), e);
    live.current = { ...live.current, entries: list, mailCount: count, more: hasMore };
    setEntries(list);
    setMailCount(count);
    setMore(hasMore);
    if (count !== null) saveInboxSnapshot({ wallet, entries: list, mailCount: count, more: hasMore });
    setRows((r) => {
      const next = { ...r };
      for (const e of list) {
        const key = e.address.toBase58();
        const msg = loadedNow(`chain:${key}`);
        next[key] ??= msg ? { state: 'ok', msg } : { state: 'loading' };
      }
      return next;
    });
    openRows(list);
  };

  /** `mode`: 'fresh' reads the newest page; 'new' only indexes past the known mail_count; 'older' the next page down. */
  const load = async (mode: 'fresh' | 'new' | 'older') => {
    if (live.current.loading) return;
    live.current = { ...live.current, loading: true };
    setLoading(true);
    setError('');
    try {
      const mailbox = await getMailbox(s.conn, s.programId, s.wallet.publicKey);
      if (!mailbox) return show([], null, false);
      const known = mode === 'fresh' ? [] : (live.current.entries ?? []);
      if (mode === 'older') {
        const last = known[known.length - 1];
        const page = await listInbox(s.conn, s.programId, s.wallet.publicKey, {
          limit: PAGE,
          before: last?.email.index,
        });
        const end = page[page.length - 1];
        const list = mergeEntries([], [...known, ...page]);
        show(
          list,
          live.current.mailCount ?? mailbox.mailCount,
          page.length === PAGE && (end?.email.index ?? 0n) > 0n,
        );
        return;
      }
      const seen = mode === 'new' ? (live.current.mailCount ?? 0n) : 0n;
      if (mode === 'new' && seen >= mailbox.mailCount) {
        show(known, mailbox.mailCount, live.current.more);
      } else {
        const page = await listInbox(s.conn, s.programId, s.wallet.publicKey, {
          limit: mode === 'new' ? Number(mailbox.mailCount - seen) : PAGE,
          after: seen,
        });
        if (mode === 'new') show(mergeEntries(page, known), mailbox.mailCount, live.current.more);
        else {
          const end = page[page.length - 1];
          show(page, mailbox.mailCount, page.length === PAGE && (end?.email.index ?? 0n) > 0n);
        }
      }
      // Back from a message with no new mail: the last count stands (read marks are subtracted below);
      // a refresh or new mail counts again.
      if (mode !== 'new' || unreadAt.get(wallet)?.mailCount !== mailbox.mailCount) {
        void recount(mailbox.mailCount, live.current.entries ?? []);
      }
    } catch (err) {
      setError(app.errorText(err));
    } finally {
      live.current = { ...live.current, loading: false };
      setLoading(false);
    }
  };

  useEffect(() => {
    if (cached) {
      show(cached.entries, cached.mailCount, cached.more);
      void load('new');
    } else void load('fresh');
  }, []);

  // Back from a message: the same pages, scrolled where they were. The
  // heading takes focus here without scrolling, so the shell's focus() on it
  // afterwards (a no-op on the focused element) does not jump to the top.
  useLayoutEffect(() => {
    const y = scrollAt.get(wallet);
    if (!cached || y === undefined) return;
    heading.current?.focus({ preventScroll: true });
    window.scrollTo(0, y);
  }, []);
  useEffect(() => {
    const remember = () => scrollAt.set(wallet, window.scrollY);
    window.addEventListener('scroll', remember, { passive: true });
    return () => window.removeEventListener('scroll', remember);
  }, [wallet]);

  // Older pages load as the end of the list comes into view. A new observer
  // per state change: its first report says whether the end is still in view
  // after a page arrived, so a tall screen keeps filling.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !more || loading || query || typeof IntersectionObserver === 'undefined') return;
    const io = new IntersectionObserver(
      (seen) => {
        if (seen.some((x) => x.isIntersecting) && live.current.more && !live.current.loading)
          void load('older');
      },
      { rootMargin: '0px 0px 600px 0px' },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [more, loading, entries?.length, query]);

  // Marks changed here (a row opened, Mark all read): the count follows without a chain read.
  const unreadLoaded = (entries ?? []).filter((e) => !marks.has(e.address.toBase58()));
  const unread = unreadTotal
    ? new Set(
        [...unreadTotal.unread, ...unreadLoaded.map((e) => e.address.toBase58())].filter(
          (a) => !marks.has(a),
        ),
      ).size
    : unreadLoaded.length;
  const unreadText = unreadTotal?.capped ? `${unread}+` : `${unread}`;
  useEffect(() => {
    document.title = unread > 0 ? `Inbox (${unreadText}) — Sealpost` : 'Inbox — Sealpost';
  }, [unread, unreadText]);

  const markAllRead = () => {
    const count = mailCount ?? 0n;
    marks.mark([
      ...mailboxAddresses(s.programId, wallet, count),
      ...(entries ?? []).map((e) => e.address.toBase58()),
    ]);
    const u = { unread: [], capped: false };
    unreadAt.set(wallet, { ...u, mailCount: count });
    setUnreadTotal(u);
    setMarksVersion(marksVersion + 1);
  };

  const q = query.trim();
  const opened = (entries ?? []).filter((e) => loadedNow(`chain:${e.address.toBase58()}`)).length;
  const shown =
    q === ''
      ? (entries ?? [])
      : (entries ?? []).filter((e) => {
          const msg = loadedNow(`chain:${e.address.toBase58()}`);
          return msg ? matchesQuery(msg.parsed, q) : false;
        });

  return (
    <section aria-labelledby="inbox-title">
      <div class="toolbar">
        <h1 id="inbox-title" tabIndex={-1} ref={heading}>
          {unread > 0 ? `Inbox (${unreadText})` : 'Inbox'}
        </h1>
        <span class="muted" data-testid="unread-count">
          {unread > 0 ? `${unreadText} unread` : ''}
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
      {entries !== null && entries.length > 0 && (
        <search class="inbox-search">
          <label for="inbox-search">Search</label>
          <input
            id="inbox-search"
            type="search"
            value={query}
            aria-describedby="inbox-search-scope"
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
          <p id="inbox-search-scope" class="muted small" data-testid="search-scope">
            Searches mail opened in this browser tab: the {opened} message{opened === 1 ? '' : 's'} listed so
            far (subject, sender, text). Nothing is sent anywhere or stored; older mail is searched once its
            page is loaded.
          </p>
        </search>
      )}
      <ErrorText text={error} />
      {mailCount === null && entries !== null && !error && (
        <p>This wallet has no mailbox on chain yet, so nobody can send it mail.</p>
      )}
      {entries === null && !error && <p aria-busy="true">Reading the chain…</p>}
      {entries !== null && entries.length === 0 && mailCount !== null && <p>No messages yet.</p>}
      {q !== '' && (
        <p role="status" data-testid="search-status">
          {shown.length === 0
            ? `No opened message matches “${q}”.`
            : `${shown.length} opened message${shown.length === 1 ? ' matches' : 's match'} “${q}”.`}
        </p>
      )}
      {shown.length > 0 && (
        <ul
          class="rows"
          data-rows
          aria-label={q ? 'Search results, newest first' : 'Messages, newest first'}
          onKeyDown={(e) => listKeys(e as unknown as KeyboardEvent)}
        >
          {shown.map((e) => {
            const key = e.address.toBase58();
            const row = rows[key] ?? { state: 'loading' };
            const parsed = row.state === 'ok' ? row.msg.parsed : null;
            const isUnread = !marks.has(key);
            const from = parsed ? senderLabel(parsed.from) : `#${e.email.index}`;
            const subject = parsed ? parsed.subject || '(no subject)' : null;
            const snippet = parsed ? snippetOf(parsed.text) : '';
            const when = relativeTime(e.email.epoch);
            return (
              <li key={key}>
                <button
                  type="button"
                  class={isUnread ? 'row unread' : 'row'}
                  data-row
                  data-testid="inbox-row"
                  data-unread={isUnread ? 'true' : 'false'}
                  onClick={() => {
                    scrollAt.set(wallet, window.scrollY);
                    marks.mark([key]);
                    app.navigate({ name: 'message', address: key });
                  }}
                >
                  {/* The accessible name is the row's own text (WCAG 2.5.3, label in name), its parts
                      named by words only a screen reader hears: "Unread, From …, Subject: …, Snippet: …, 5 min ago".
                      A separator ends the cell before it: the grid's cells are blocks, read with a space between. */}
                  <span class="row-from">
                    <Said text={isUnread ? 'Unread, From ' : 'Read, From '} />
                    {from}
                    <Said text="," />
                  </span>
                  <span class="row-subject">
                    {row.state === 'loading' && <em>Opening…</em>}
                    {row.state === 'error' && <em class="muted">{row.text}</em>}
                    {parsed && (
                      <>
                        <Said text="Subject: " />
                        <span class="subject">{subject}</span>
                        {snippet && <Said text=", Snippet: " />}
                        <span class="snippet" data-testid="inbox-snippet">
                          {snippet}
                        </span>
                      </>
                    )}
                    <Said text="," />
                  </span>
                  <span class="row-meta">
                    {e.email.bountyLamports > 0n && (
                      <span class="badge">
                        bounty {formatSol(e.email.bountyLamports)} SOL
                        <Said text=", " />
                      </span>
                    )}
                    {!isZero(e.email.replyToHash) && (
                      <span class="badge">
                        reply
                        <Said text=", " />
                      </span>
                    )}
                    <time title={formatTime(e.email.epoch)} data-testid="inbox-time">
                      {when}
                    </time>
                  </span>
                </button>
              </li>
            );
          })}
          {more && !q && (
            <li ref={sentinel} class="rows-end" aria-hidden="true" data-testid="inbox-sentinel" />
          )}
        </ul>
      )}
      {more && !q && (
        <button type="button" onClick={() => load('older')} disabled={loading}>
          {loading ? 'Loading older messages…' : 'Older messages'}
        </button>
      )}
    </section>
  );
}

function isZero(a: Uint8Array): boolean {
  return a.every((b) => b === 0);
}
