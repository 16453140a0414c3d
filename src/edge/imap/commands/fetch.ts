// FETCH and UID FETCH. Messages are opened one at a time with the session's
// reader key (cached for repeated fetches); fetching a body without PEEK
// sets \Seen (stored before the answer), and the new flags come back in the
// same response. RFC 7162: the MODSEQ item and the (CHANGEDSINCE n)
// modifier, which keeps only messages changed after n and adds MODSEQ.
import { type FetchItem, needsContent, parseFetchItems, renderFetch, setsSeen } from '../fetch-items.ts';
import type { OpenedMessage } from '../mail/mail-access.ts';
import { modseqModifier } from '../protocol/modseq.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { mail, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

const LOOKAHEAD = 8;

export const fetch: ImapCommand = {
  names: ['FETCH'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const setText = args.atom('sequence set');
    const rest = args.rest();
    if (rest.length > 2) throw new ImapSyntaxError('FETCH takes items and at most one modifier list');
    let items = parseFetchItems(rest.slice(0, 1), uid);
    const since = rest[1] === undefined ? undefined : modseqModifier(rest[1], 'CHANGEDSINCE', 'FETCH');
    if (since !== undefined || items.some((i) => i.kind === 'modseq')) conn.enableCondstore();
    if (since !== undefined && !items.some((i) => i.kind === 'modseq'))
      items = [...items, { kind: 'modseq' }];
    const sel = selected(conn);
    const m = mail(conn);
    let targets = sel.resolve(setText, uid);
    if (since !== undefined) targets = targets.filter((t) => t.msg.modseq > since);
    const loadContent = needsContent(items);
    const markSeen = setsSeen(items) && !sel.readOnly;
    // \Seen is stored first, so the FLAGS (and MODSEQ) shown are what is kept.
    const seen = new Set<string>();
    if (markSeen) {
      const updates = targets
        .filter((t) => !t.msg.flags.includes('\\Seen'))
        .map((t) => ({ id: t.msg.id, flags: [...t.msg.flags, '\\Seen'].sort() }));
      const written = await m.folders.writeFlags(m.wallet, updates);
      for (const u of updates) seen.add(u.id);
      for (const t of targets) {
        const modseq = written.get(t.msg.id);
        if (modseq === undefined) continue;
        t.msg.flags = [...t.msg.flags, '\\Seen'].sort();
        t.msg.modseq = modseq;
      }
    }
    const extra: FetchItem[] = [];
    if (!items.some((i) => i.kind === 'flags')) extra.push({ kind: 'flags' });
    if (conn.condstore && !items.some((i) => i.kind === 'modseq')) extra.push({ kind: 'modseq' });
    const withFlags: FetchItem[] = [...items, ...extra];
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
      const shown = seen.has(msg.id) ? withFlags : items;
      const opened = loadContent ? await opening.get(i) : undefined;
      opening.delete(i);
      await conn.send([`* ${seq} FETCH `, ...renderFetch(shown, { ...msg, opened })]);
    }
    return undefined;
  },
};
