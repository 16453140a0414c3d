// STATUS (RFC 3501 §6.3.10): counts over the messages this session can read;
// HIGHESTMODSEQ from RFC 7162.
import { list, str } from '../protocol/format.ts';
import { encodeMutf7 } from '../protocol/mutf7.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { existingMailbox, mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

const ITEMS = ['MESSAGES', 'RECENT', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN', 'HIGHESTMODSEQ'];

export const status: ImapCommand = {
  names: ['STATUS'],
  states: AUTHED,
  async handle({ conn }, args) {
    const name = mailboxArg(args);
    const items = args.list('status items').map((t) => {
      if (t.t !== 'atom' || !ITEMS.includes(t.v.toUpperCase()))
        throw new ImapSyntaxError('unknown STATUS item');
      return t.v.toUpperCase();
    });
    args.end();
    if (items.includes('HIGHESTMODSEQ')) conn.enableCondstore();
    const box = await existingMailbox(conn, name);
    const m = mail(conn);
    const messages = await m.folders.listReadable(m.wallet, box.id, m.readerId);
    const values: Record<string, number> = {
      MESSAGES: messages.length,
      RECENT: 0,
      UIDNEXT: box.uidNext,
      UIDVALIDITY: box.uidValidity,
      UNSEEN: messages.filter((x) => !x.flags.includes('\\Seen')).length,
      HIGHESTMODSEQ: box.highestModseq,
    };
    const pairs = items.map((i) => [`${i} ${values[i]}`]);
    await conn.send(['* STATUS ', ...str(encodeMutf7(box.name)), ' ', ...list(pairs)]);
    return undefined;
  },
};
