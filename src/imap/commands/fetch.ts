// FETCH and UID FETCH. Messages are opened one at a time with the session's
// reader key (cached for repeated fetches); fetching a body without PEEK
// sets \Seen, and the new flags come back in the same response.
import { type FetchItem, needsContent, parseFetchItems, renderFetch, setsSeen } from '../fetch-items.ts';
import type { OpenedMessage } from '../mail/mail-access.ts';
import { mail, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

const LOOKAHEAD = 8;

export const fetch: ImapCommand = {
  names: ['FETCH'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const setText = args.atom('sequence set');
    const items = parseFetchItems(args.rest(), uid);
    const sel = selected(conn);
    const m = mail(conn);
    const targets = sel.resolve(setText, uid);
    const loadContent = needsContent(items);
    const markSeen = setsSeen(items) && !sel.readOnly;
    const withFlags: FetchItem[] =
      markSeen && !items.some((i) => i.kind === 'flags') ? [...items, { kind: 'flags' }] : items;
    const seenUpdates: { id: string; flags: string[] }[] = [];
    // Open a few messages ahead while the current one is written, so blob
    // reads and decryption overlap with the socket instead of taking turns.
    const opening = new Map<number, Promise<OpenedMessage>>();
    const prefetch = (i: number) => {
      const t = targets[i];
      if (!loadContent || !t || opening.has(i)) return;
      const p = m.open(t.msg);
      p.catch(() => {});
      opening.set(i, p);
    };
    for (const [i, { seq, msg }] of targets.entries()) {
      for (let j = i; j < i + LOOKAHEAD; j++) prefetch(j);
      let shown = items;
      if (markSeen && !msg.flags.includes('\\Seen')) {
        msg.flags = [...msg.flags, '\\Seen'].sort();
        seenUpdates.push({ id: msg.id, flags: msg.flags });
        shown = withFlags;
      }
      const opened = loadContent ? await opening.get(i) : undefined;
      opening.delete(i);
      await conn.send([`* ${seq} FETCH `, ...renderFetch(shown, { ...msg, opened })]);
    }
    await m.folders.writeFlags(m.wallet, seenUpdates);
    return undefined;
  },
};
