// RENAME (RFC 3501 §6.3.5), children included; renaming INBOX moves its
// messages to the new folder.
import { FolderError } from '../../../core/store/index.ts';
import { ImapError } from '../errors.ts';
import { mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const rename: ImapCommand = {
  names: ['RENAME'],
  states: AUTHED,
  async handle({ conn }, args) {
    const from = mailboxArg(args, 'existing mailbox name');
    const to = mailboxArg(args, 'new mailbox name').replace(/\/$/, '');
    args.end();
    const m = mail(conn);
    try {
      await m.folders.renameMailbox(m.wallet, from, to);
    } catch (err) {
      if (err instanceof FolderError) {
        const code =
          err.code === 'exists' ? 'ALREADYEXISTS' : err.code === 'not_found' ? 'NONEXISTENT' : 'CANNOT';
        throw new ImapError('NO', err.message, code);
      }
      throw err;
    }
    if (conn.selected) {
      const fresh = await m.folders.getMailboxById(m.wallet, conn.selected.mailbox.id);
      if (fresh) conn.selected.mailbox = fresh;
      if (from === 'INBOX' && conn.selected.mailbox.name === 'INBOX')
        await conn.sendAll(await conn.selected.sync(true));
    }
    return undefined;
  },
};
