// STORE and UID STORE (RFC 3501 §6.4.6): FLAGS, +FLAGS, -FLAGS, .SILENT.
import { ImapError } from '../errors.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { flagList } from '../selected.ts';
import { mail, parseFlags, selected } from './helpers.ts';
import { type ImapCommand, SELECTED } from './types.ts';

export const store: ImapCommand = {
  names: ['STORE'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const setText = args.atom('sequence set');
    const op = args.atom('FLAGS, +FLAGS or -FLAGS').toUpperCase();
    const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(op);
    if (!m) throw new ImapSyntaxError('expected FLAGS, +FLAGS or -FLAGS (optionally .SILENT)');
    const rest = args.rest();
    const tokens = rest.length === 1 && rest[0]?.t === 'list' ? rest[0].v : rest;
    const flags = parseFlags(tokens);
    const sel = selected(conn);
    if (sel.readOnly) throw new ImapError('NO', 'Mailbox is read-only', 'READ-ONLY');
    const silent = Boolean(m[2]);
    const updates: { id: string; flags: string[] }[] = [];
    const replies: { seq: number; uid: number; flags: string[] }[] = [];
    for (const { seq, msg } of sel.resolve(setText, uid)) {
      let next: string[];
      if (m[1] === '+') next = [...new Set([...msg.flags, ...flags])];
      else if (m[1] === '-') next = msg.flags.filter((f) => !flags.includes(f));
      else next = flags;
      if (next.length > 64) throw new ImapError('NO', 'Too many flags on one message', 'LIMIT');
      next.sort();
      if (next.join(' ') !== msg.flags.join(' ')) updates.push({ id: msg.id, flags: next });
      msg.flags = next;
      replies.push({ seq, uid: msg.uid, flags: next });
    }
    const access = mail(conn);
    await access.folders.writeFlags(access.wallet, updates);
    if (!silent) {
      for (const r of replies) {
        await conn.send([`* ${r.seq} FETCH (${uid ? `UID ${r.uid} ` : ''}FLAGS `, ...flagList(r.flags), ')']);
      }
    }
    return undefined;
  },
};
