// STARTTLS (RFC 3501 §6.2.1): only on a plain listener configured for it.
import { ImapError } from '../errors.ts';
import { type ImapCommand, NOT_AUTHED } from './types.ts';

export const starttls: ImapCommand = {
  names: ['STARTTLS'],
  states: NOT_AUTHED,
  async handle({ conn, tag }, args) {
    args.end();
    if (!conn.canStartTls) throw new ImapError('BAD', 'STARTTLS is not available on this connection');
    await conn.send([`${tag} OK Begin TLS negotiation now`]);
    try {
      await conn.upgradeTls();
    } catch {
      conn.destroy();
    }
    return 'done';
  },
};
