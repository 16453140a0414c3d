// APPEND (RFC 3501 §6.3.11) with UIDPLUS's APPENDUID: the message (a
// client's Sent or Drafts copy) is sealed to the wallet's key and wrapped
// for this session's reader key before anything is stored. A message this
// server just filed in Sent itself (same Message-ID) is not stored twice.
import { ImapError } from '../errors.ts';
import { parseDateTime } from '../protocol/dates.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { existingMailbox, mail, mailboxArg, parseFlags } from './helpers.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const append: ImapCommand = {
  names: ['APPEND'],
  states: AUTHED,
  async handle({ conn }, args) {
    const name = mailboxArg(args);
    let flags: string[] = [];
    let date: number | undefined;
    let tok = args.next('message literal');
    if (tok.t === 'list') {
      flags = parseFlags(tok.v);
      tok = args.next('message literal');
    }
    if (tok.t === 'string' && !tok.literal) {
      date = parseDateTime(tok.v.toString('latin1'));
      tok = args.next('message literal');
    }
    if (tok.t !== 'string' || !tok.literal)
      throw new ImapSyntaxError('APPEND needs the message as a literal');
    args.end();
    if (tok.v.length === 0) throw new ImapError('NO', 'An empty message cannot be appended');
    const box = await existingMailbox(conn, name);
    const m = mail(conn);
    const now = (conn.opts.mail.now ?? Date.now)();
    // Sent through us moments ago: the server's own Sent copy is this message.
    const kept = await m.serverSentCopy(box, tok.v);
    if (kept)
      return { code: `APPENDUID ${box.uidValidity} ${kept.uid}`, text: 'APPEND completed (already in Sent)' };
    const stored = await m.append(box, tok.v, flags, date ?? now);
    if (conn.selected && conn.selected.mailbox.id === box.id)
      await conn.sendAll(await conn.selected.sync(false));
    return { code: `APPENDUID ${box.uidValidity} ${stored.uid}`, text: 'APPEND completed' };
  },
};
