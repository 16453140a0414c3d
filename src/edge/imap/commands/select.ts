// SELECT and EXAMINE (RFC 3501 §6.3.1-2), with RFC 7162's (CONDSTORE)
// parameter and HIGHESTMODSEQ answer. A failed SELECT leaves no mailbox
// selected.
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { SelectedMailbox } from '../selected.ts';
import { existingMailbox, mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

const FLAGS = '\\Answered \\Flagged \\Deleted \\Seen \\Draft';

export const select: ImapCommand = {
  names: ['SELECT', 'EXAMINE'],
  states: AUTHED,
  async handle({ conn, name }, args) {
    const mailboxName = mailboxArg(args);
    const params = args.peek() ? args.list('SELECT parameters') : [];
    args.end();
    for (const p of params) {
      if (p.t !== 'atom' || p.v.toUpperCase() !== 'CONDSTORE')
        throw new ImapSyntaxError('the only SELECT parameter is CONDSTORE');
    }
    if (params.length > 0) conn.enableCondstore();
    conn.selected = undefined;
    conn.state = 'authenticated';
    const box = await existingMailbox(conn, mailboxName);
    const readOnly = name === 'EXAMINE';
    const sel = new SelectedMailbox(mail(conn), box, readOnly, () => conn.condstore);
    await sel.load();
    const keywords = new Set<string>();
    for (const m of sel.messages) for (const f of m.flags) if (!f.startsWith('\\')) keywords.add(f);
    const flags = [FLAGS, ...keywords].join(' ');
    await conn.send([`* FLAGS (${flags})`]);
    await conn.send([
      `* OK [PERMANENTFLAGS (${readOnly ? '' : `${flags} \\*`})] ${readOnly ? 'Read-only mailbox' : 'Flags permitted'}`,
    ]);
    await conn.send([`* ${sel.exists} EXISTS`]);
    await conn.send(['* 0 RECENT']);
    const firstUnseen = sel.messages.findIndex((m) => !m.flags.includes('\\Seen'));
    if (firstUnseen >= 0) await conn.send([`* OK [UNSEEN ${firstUnseen + 1}] First unseen`]);
    await conn.send([`* OK [UIDVALIDITY ${box.uidValidity}] UIDs valid`]);
    await conn.send([`* OK [UIDNEXT ${box.uidNext}] Predicted next UID`]);
    const highest = Math.max(box.highestModseq, ...sel.messages.map((m) => m.modseq));
    await conn.send([`* OK [HIGHESTMODSEQ ${highest}] Highest`]);
    conn.selected = sel;
    conn.state = 'selected';
    return { code: readOnly ? 'READ-ONLY' : 'READ-WRITE', text: `${name} completed` };
  },
};
