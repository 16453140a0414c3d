// STORE and UID STORE (RFC 3501 §6.4.6): FLAGS, +FLAGS, -FLAGS, .SILENT,
// and RFC 7162's (UNCHANGEDSINCE n) modifier: a message changed after n is
// left alone and named in the tagged OK's [MODIFIED set].
import { ImapError } from '../errors.ts';
import { modseqModifier } from '../protocol/modseq.ts';
import { formatSequenceSet } from '../protocol/sequence-set.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { mail, parseFlags, selected } from './helpers.ts';
import { type CommandResult, type ImapCommand, SELECTED } from './types.ts';

export const store: ImapCommand = {
  names: ['STORE'],
  states: SELECTED,
  uid: true,
  async handle({ conn, uid }, args) {
    const setText = args.atom('sequence set');
    const since =
      args.peek()?.t === 'list'
        ? modseqModifier(args.next('modifier'), 'UNCHANGEDSINCE', 'STORE')
        : undefined;
    const op = args.atom('FLAGS, +FLAGS or -FLAGS').toUpperCase();
    const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(op);
    if (!m) throw new ImapSyntaxError('expected FLAGS, +FLAGS or -FLAGS (optionally .SILENT)');
    const rest = args.rest();
    const tokens = rest.length === 1 && rest[0]?.t === 'list' ? rest[0].v : rest;
    const flags = parseFlags(tokens);
    const sel = selected(conn);
    if (sel.readOnly) throw new ImapError('NO', 'Mailbox is read-only', 'READ-ONLY');
    if (since !== undefined) conn.enableCondstore();
    const silent = Boolean(m[2]);
    const updates: { id: string; flags: string[] }[] = [];
    const touched: { seq: number; msg: (typeof sel.messages)[number] }[] = [];
    const modified: number[] = [];
    for (const { seq, msg } of sel.resolve(setText, uid)) {
      if (since !== undefined && msg.modseq > since) {
        modified.push(uid ? msg.uid : seq);
        continue;
      }
      let next: string[];
      if (m[1] === '+') next = [...new Set([...msg.flags, ...flags])];
      else if (m[1] === '-') next = msg.flags.filter((f) => !flags.includes(f));
      else next = flags;
      if (next.length > 64) throw new ImapError('NO', 'Too many flags on one message', 'LIMIT');
      next.sort();
      if (next.join(' ') !== msg.flags.join(' ')) updates.push({ id: msg.id, flags: next });
      touched.push({ seq, msg });
    }
    const access = mail(conn);
    const written = await access.folders.writeFlags(access.wallet, updates);
    const nextFlags = new Map(updates.map((u) => [u.id, u.flags]));
    for (const { seq, msg } of touched) {
      const modseq = written.get(msg.id);
      if (modseq !== undefined) {
        msg.flags = nextFlags.get(msg.id) as string[];
        msg.modseq = modseq;
      }
      // .SILENT drops the FLAGS; under CONDSTORE a changed message still reports its new MODSEQ.
      if (!silent) await conn.send(sel.flagUpdate(seq, msg, uid));
      else if (sel.withModseq && modseq !== undefined) await conn.send(sel.flagUpdate(seq, msg, uid, false));
    }
    const result: CommandResult =
      modified.length > 0
        ? { code: `MODIFIED ${formatSequenceSet(modified)}`, text: 'Conditional STORE failed' }
        : undefined;
    return result;
  },
};
