// IDLE (RFC 2177): new mail, expunges and flag changes from other sessions
// are pushed while the client waits; it ends with DONE.
import { ImapError } from '../errors.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const idle: ImapCommand = {
  names: ['IDLE'],
  states: AUTHED,
  async handle({ conn }, args) {
    args.end();
    await conn.send(['+ idling']);
    const line = await conn.readLineWhile(conn.opts.idlePollMs, async () => {
      if (conn.selected && !conn.isClosed) await conn.sendAll(await conn.selected.sync(false));
    });
    if (line.toString('latin1').trim().toUpperCase() !== 'DONE') throw new ImapError('BAD', 'Expected DONE');
    return { text: 'IDLE terminated' };
  },
};
