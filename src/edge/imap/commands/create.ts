// CREATE (RFC 3501 §6.3.3): a trailing "/" only says the client means a parent.
import { FolderError } from '../../../core/store/index.ts';
import { ImapError } from '../errors.ts';
import { mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const create: ImapCommand = {
  names: ['CREATE'],
  states: AUTHED,
  async handle({ conn }, args) {
    const name = mailboxArg(args).replace(/\/$/, '');
    args.end();
    const m = mail(conn);
    try {
      await m.folders.createMailbox(m.wallet, name);
    } catch (err) {
      if (err instanceof FolderError) {
        throw new ImapError('NO', err.message, err.code === 'exists' ? 'ALREADYEXISTS' : 'CANNOT');
      }
      throw err;
    }
    return undefined;
  },
};
