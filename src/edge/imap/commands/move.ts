// MOVE and UID MOVE (RFC 6851): COPYUID first (untagged), then the
// EXPUNGE responses for the moved messages.
import { ImapError } from '../errors.ts';
import { formatSequenceSet } from '../protocol/sequence-set.ts';
import { existingMailbox, mail, mailboxArg, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

export const move: ImapCommand = {
  names: ['MOVE'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const setText = args.atom('sequence set');
    const name = mailboxArg(args);
    args.end();
    const sel = selected(conn);
    if (sel.readOnly) throw new ImapError('NO', 'Mailbox is read-only', 'READ-ONLY');
    const targets = sel.resolve(setText, uid);
    const box = await existingMailbox(conn, name);
    if (targets.length === 0) return undefined;
    const m = mail(conn);
    const moved = await m.folders.moveMessages(
      m.wallet,
      targets.map((t) => t.msg.id),
      box.id,
    );
    m.trainOnTransfer(
      sel.mailbox,
      box,
      targets.map((t) => t.msg),
    );
    const src = formatSequenceSet(targets.map((t) => t.msg.uid));
    const dst = formatSequenceSet(moved.map((x) => x.uid));
    await conn.send([`* OK [COPYUID ${box.uidValidity} ${src} ${dst}] Moved`]);
    await conn.sendAll(sel.drop(new Set(targets.map((t) => t.msg.uid))));
    if (box.id === sel.mailbox.id) await conn.sendAll(await sel.sync(true));
    return { text: 'MOVE completed' };
  },
};
