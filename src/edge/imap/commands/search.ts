// SEARCH and UID SEARCH (RFC 3501 §6.4.4) over the session's decrypted view,
// with RFC 7162's MODSEQ criterion (the answer then ends with the highest
// MODSEQ among the hits).
import { ImapError } from '../errors.ts';
import { buildSearchDoc, matches } from '../search/search-eval.ts';
import { BadCharsetError, parseSearch, SEARCH_CHARSETS, usesModseq } from '../search/search-parse.ts';
import { mail, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

export const search: ImapCommand = {
  names: ['SEARCH'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    let key: ReturnType<typeof parseSearch>;
    try {
      key = parseSearch(args.rest());
    } catch (err) {
      if (err instanceof BadCharsetError) {
        throw new ImapError(
          'NO',
          `Unsupported charset ${err.charset}`,
          `BADCHARSET (${SEARCH_CHARSETS.join(' ')})`,
        );
      }
      throw err;
    }
    const sel = selected(conn);
    const m = mail(conn);
    const withModseq = usesModseq(key);
    if (withModseq) conn.enableCondstore();
    let highest = 0;
    const limits = { maxSeq: sel.exists, maxUid: sel.maxUid };
    const hits: number[] = [];
    for (const [i, msg] of [...sel.messages].entries()) {
      const target = {
        seq: i + 1,
        uid: msg.uid,
        flags: msg.flags,
        modseq: msg.modseq,
        internalDate: msg.receivedAt,
        size: () => m.rawSize(msg),
        doc: async () => {
          const opened = await m.open(msg);
          opened.search ??= await buildSearchDoc(opened.raw);
          return opened.search;
        },
      };
      if (await matches(key, target, limits)) {
        hits.push(uid ? msg.uid : i + 1);
        highest = Math.max(highest, msg.modseq);
      }
    }
    const tail = withModseq && hits.length > 0 ? ` (MODSEQ ${highest})` : '';
    await conn.send([`* SEARCH${hits.map((h) => ` ${h}`).join('')}${tail}`]);
    return undefined;
  },
};
