// SELECT and EXAMINE (RFC 3501 §6.3.1-2). A failed SELECT leaves no
// mailbox selected.
import { SelectedMailbox } from '../selected.ts';
import { existingMailbox, mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

const FLAGS = '\\Answered \\Flagged \\Deleted \\Seen \\Draft';

export const select: ImapCommand = {
  names: ['SELECT', 'EXAMINE'],
  states: AUTHED,
  async handle({ conn, name }, args) {
    const mailboxName = mailboxArg(args);
    args.end();
    conn.selected = undefined;
    conn.state = 'authenticated';
    const box = await existingMailbox(conn, mailboxName);
    const readOnly = name === 'EXAMINE';
    const sel = new SelectedMailbox(mail(conn), box, readOnly);
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
    conn.selected = sel;
    conn.state = 'selected';
    return { code: readOnly ? 'READ-ONLY' : 'READ-WRITE', text: `${name} completed` };
  },
};
