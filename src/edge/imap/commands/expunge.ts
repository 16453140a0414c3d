// EXPUNGE and UID EXPUNGE (UIDPLUS): removes the selected folder's messages
// flagged \Deleted (within the UID set, for UID EXPUNGE).
import type { ImapConnection } from '../connection.ts';
import { ImapError } from '../errors.ts';
import type { Piece } from '../protocol/format.ts';
import type { SelectedMailbox } from '../selected.ts';
import { mail, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

/** Expunges and returns the EXPUNGE responses; `uidSet` limits it (UID EXPUNGE). */
export async function expungeDeleted(
  conn: ImapConnection,
  sel: SelectedMailbox,
  uidSet: string | undefined,
): Promise<Piece[][]> {
  const m = mail(conn);
  const updates = await sel.sync(true);
  const inSet = uidSet === undefined ? undefined : new Set(sel.resolve(uidSet, true).map((t) => t.msg.uid));
  const doomed = sel.messages.filter((x) => x.flags.includes('\\Deleted') && (!inSet || inSet.has(x.uid)));
  const removed = await m.folders.expunge(
    m.wallet,
    sel.mailbox.id,
    doomed.map((x) => x.id),
  );
  await m.removed(removed);
  return [...updates, ...sel.drop(new Set(doomed.map((x) => x.uid)))];
}

export const expunge: ImapCommand = {
  names: ['EXPUNGE'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const set = uid ? args.atom('UID set') : undefined;
    args.end();
    const sel = selected(conn);
    if (sel.readOnly) throw new ImapError('NO', 'Mailbox is read-only', 'READ-ONLY');
    await conn.sendAll(await expungeDeleted(conn, sel, set));
    return undefined;
  },
};
