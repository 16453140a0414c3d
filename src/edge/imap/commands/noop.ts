// NOOP and CHECK: the chance to report what changed in the selected mailbox.
import { ANY, type ImapCommand } from './types.ts';

export const noop: ImapCommand = {
  names: ['NOOP', 'CHECK'],
  states: ANY,
  async handle({ conn, name }, args) {
    args.end();
    if (name === 'CHECK' && !conn.selected) return undefined;
    if (conn.selected) await conn.sendAll(await conn.selected.sync(true));
    return undefined;
  },
};
