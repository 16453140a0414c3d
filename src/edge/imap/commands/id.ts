// ID (RFC 2971): the client's fields are ignored; the server names itself.
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { ANY, type ImapCommand } from './types.ts';

export const id: ImapCommand = {
  names: ['ID'],
  states: ANY,
  async handle({ conn }, args) {
    const tok = args.next('ID parameters');
    if (tok.t !== 'nil' && tok.t !== 'list') throw new ImapSyntaxError('ID needs a list or NIL');
    args.end();
    await conn.send(['* ID ("name" "Sealpost")']);
    return undefined;
  },
};
