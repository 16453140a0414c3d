// NAMESPACE (RFC 2342): one personal namespace, "/" as the delimiter.
import { AUTHED, type ImapCommand } from './types.ts';

export const namespace: ImapCommand = {
  names: ['NAMESPACE'],
  states: AUTHED,
  async handle({ conn }, args) {
    args.end();
    await conn.send(['* NAMESPACE (("" "/")) NIL NIL']);
    return undefined;
  },
};
