// COPY and UID COPY with UIDPLUS's COPYUID.
import { formatSequenceSet } from '../protocol/sequence-set.ts';
import { existingMailbox, mail, mailboxArg, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

export const copy: ImapCommand = {
  names: ['COPY'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const setText = args.atom('sequence set');
    const name = mailboxArg(args);
    args.end();
    const sel = selected(conn);
    const targets = sel.resolve(setText, uid);
    const box = await existingMailbox(conn, name);
    if (targets.length === 0) return undefined;
    const m = mail(conn);
    const copied = await m.folders.copyMessages(
      m.wallet,
      targets.map((t) => t.msg.id),
      box.id,
    );
    m.trainOnTransfer(
      sel.mailbox,
      box,
      targets.map((t) => t.msg),
    );
    if (box.id === sel.mailbox.id) await conn.sendAll(await sel.sync(false));
    const src = formatSequenceSet(targets.map((t) => t.msg.uid));
    const dst = formatSequenceSet(copied.map((c) => c.uid));
    return { code: `COPYUID ${box.uidValidity} ${src} ${dst}`, text: 'COPY completed' };
  },
};
