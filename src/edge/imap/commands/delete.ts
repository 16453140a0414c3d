// DELETE (RFC 3501 §6.3.4): the folder and its messages; INBOX and folders
// with children are refused. Deleting the selected folder deselects it.
import { FolderError } from '../../../core/store/index.ts';
import { ImapError } from '../errors.ts';
import { mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const deleteCommand: ImapCommand = {
  names: ['DELETE'],
  states: AUTHED,
  async handle({ conn }, args) {
    const name = mailboxArg(args);
    args.end();
    const m = mail(conn);
    let removed: Awaited<ReturnType<typeof m.folders.deleteMailbox>>;
    try {
      removed = await m.folders.deleteMailbox(m.wallet, name);
    } catch (err) {
      if (err instanceof FolderError) {
        throw new ImapError('NO', err.message, err.code === 'not_found' ? 'NONEXISTENT' : 'CANNOT');
      }
      throw err;
    }
    if (conn.selected?.mailbox.name === name) {
      conn.selected = undefined;
      conn.state = 'authenticated';
    }
    await m.removed(removed);
    return undefined;
  },
};
