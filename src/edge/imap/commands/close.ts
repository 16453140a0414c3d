// CLOSE (expunges \Deleted messages silently unless read-only) and
// UNSELECT (RFC 3691: leaves them).

import { expungeDeleted } from './expunge.ts';
import { selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

export const close: ImapCommand = {
  names: ['CLOSE', 'UNSELECT'],
  states: SELECTED,
  async handle({ conn, name }, args) {
    args.end();
    const sel = selected(conn);
    if (name === 'CLOSE' && !sel.readOnly) await expungeDeleted(conn, sel, undefined);
    conn.selected = undefined;
    conn.state = 'authenticated';
    return undefined;
  },
};
