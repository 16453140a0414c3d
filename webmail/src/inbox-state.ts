// What the chain inbox remembers between visits. Read marks live in this
// browser's localStorage per wallet (which message accounts were opened:
// the accounts themselves are public, the mark reveals nothing else). The
// listed entries and the newest index seen stay in memory for the page's
// lifetime, so going back to the inbox asks the chain only for indexes past
// it; opened bodies are cached in messages.ts. Nothing decrypted is stored.
import type { InboxEntry } from '../../chain/client/client.ts';

/** Marks kept per wallet; the oldest go first past this many. */
const MAX_READ_MARKS = 5000;

function readKey(wallet: string): string {
  return `sealpost.read.v1.${wallet}`;
}

export class ReadMarks {
  private readonly marks: Set<string>;

  constructor(
    private readonly storage: Storage,
    private readonly wallet: string,
  ) {
    let list: unknown = [];
    try {
      list = JSON.parse(storage.getItem(readKey(wallet)) ?? '[]');
    } catch {
      list = [];
    }
    this.marks = new Set(Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : []);
  }

  has(address: string): boolean {
    return this.marks.has(address);
  }

  mark(addresses: string[]): void {
    let changed = false;
    for (const a of addresses) {
      if (this.marks.has(a)) continue;
      this.marks.add(a);
      changed = true;
    }
    if (!changed) return;
    const list = [...this.marks].slice(-MAX_READ_MARKS);
    try {
      this.storage.setItem(readKey(this.wallet), JSON.stringify(list));
    } catch {
      // A full storage quota keeps the marks for this page only.
    }
  }

  /** Mark unread: forgets that these accounts were opened. */
  unmark(addresses: string[]): void {
    let changed = false;
    for (const a of addresses) changed = this.marks.delete(a) || changed;
    if (!changed) return;
    try {
      this.storage.setItem(readKey(this.wallet), JSON.stringify([...this.marks].slice(-MAX_READ_MARKS)));
    } catch {
      // As in mark.
    }
  }
}

export interface InboxSnapshot {
  wallet: string;
  /** Newest first. */
  entries: InboxEntry[];
  /** The mailbox's mail_count when last read; indexes below it are known. */
  mailCount: bigint;
  /** Whether older entries remain to be paged in. */
  more: boolean;
}

let snapshot: InboxSnapshot | null = null;

export function inboxSnapshot(wallet: string): InboxSnapshot | null {
  return snapshot?.wallet === wallet ? snapshot : null;
}

export function saveInboxSnapshot(s: InboxSnapshot): void {
  snapshot = s;
}

export function forgetInboxSnapshot(): void {
  snapshot = null;
}

/** New entries (newest first) merged over known ones, without duplicates. */
export function mergeEntries(fresh: InboxEntry[], known: InboxEntry[]): InboxEntry[] {
  const seen = new Set(fresh.map((e) => e.address.toBase58()));
  return [...fresh, ...known.filter((e) => !seen.has(e.address.toBase58()))];
}

/** The start of a message's text for the inbox row: quoted lines and signatures skipped, whitespace folded. */
export function snippetOf(text: string | null | undefined, max = 110): string {
  if (!text) return '';
  const lines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '-- ') break;
    const t = line.trim();
    if (t === '' || t.startsWith('>')) continue;
    if (/wrote:$/.test(t)) continue;
    lines.push(t);
    if (lines.join(' ').length > max) break;
  }
  const joined = lines.join(' ').replace(/\s+/g, ' ');
  return joined.length > max ? `${joined.slice(0, max - 1).trimEnd()}…` : joined;
}

const MIN = 60;
const HOUR = 3600;
const DAY = 86_400;

/** "just now", "5 min ago", "3 h ago", "yesterday", a weekday, then a date. */
export function relativeTime(unixSeconds: number | bigint, nowMs: number = Date.now()): string {
  const t = Number(unixSeconds);
  if (!Number.isFinite(t) || t <= 0) return '';
  const ago = Math.floor(nowMs / 1000) - t;
  if (ago < 45) return 'just now';
  if (ago < HOUR) return `${Math.max(1, Math.round(ago / MIN))} min ago`;
  const then = new Date(t * 1000);
  const now = new Date(nowMs);
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime() / 1000;
  if (t >= startOfToday) return `${Math.floor(ago / HOUR)} h ago`;
  if (t >= startOfToday - DAY) return 'yesterday';
  if (t >= startOfToday - 6 * DAY) return then.toLocaleDateString(undefined, { weekday: 'long' });
  const sameYear = then.getFullYear() === now.getFullYear();
  return then.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
  });
}
