// SUBSCRIBE / UNSUBSCRIBE: every folder is always subscribed (LSUB lists
// them all), so these only check the name.
import { ImapError } from '../errors.ts';
import { mail, mailboxArg } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const subscribe: ImapCommand = {
  names: ['SUBSCRIBE', 'UNSUBSCRIBE'],
  states: AUTHED,
  async handle({ conn, name }, args) {
    const folder = mailboxArg(args);
    args.end();
    const m = mail(conn);
    if (name === 'SUBSCRIBE' && !(await m.folders.getMailbox(m.wallet, folder))) {
      throw new ImapError('NO', 'No such mailbox', 'NONEXISTENT');
    }
    return undefined;
  },
};
