import { ANY, type ImapCommand } from './types.ts';

export const logout: ImapCommand = {
  names: ['LOGOUT'],
  states: ANY,
  async handle({ conn, tag }, args) {
    args.end();
    await conn.send(['* BYE Sealpost IMAP logging out']);
    await conn.send([`${tag} OK LOGOUT completed`]);
    conn.end();
    return 'done';
  },
};
