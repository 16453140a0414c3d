// IDLE (RFC 2177): new mail, expunges and flag changes from other sessions
// are pushed while the client waits; it ends with DONE. The session looks
// at the store when the push says its mailbox changed (src/edge/imap/push.ts)
// and, as a fallback, on a poll timer; either way the same sync runs, so
// the untagged responses are the same.
import { ImapError } from '../errors.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const idle: ImapCommand = {
  names: ['IDLE'],
  states: AUTHED,
  async handle({ conn }, args) {
    args.end();
    await conn.send(['+ idling']);
    const { push, metrics } = conn.opts;
    const wallet = conn.mail?.wallet;
    const mailboxId = conn.selected?.mailbox.id;
    const line = await conn.readLineWhile(
      () => push?.pollMs() ?? conn.opts.idlePollMs,
      async (cause, shared) => {
        if (!conn.selected || conn.isClosed) return;
        const updates = await conn.selected.sync(false, shared);
        metrics?.idleWakeup(cause, updates.length > 0 ? 'changed' : 'unchanged');
        await conn.sendAll(updates);
      },
      push && wallet && mailboxId
        ? (wake, rearm) => push.watch(wallet, { mailboxId, wake, rearm })
        : undefined,
    );
    if (line.toString('latin1').trim().toUpperCase() !== 'DONE') throw new ImapError('BAD', 'Expected DONE');
    return { text: 'IDLE terminated' };
  },
};
