// ENABLE (RFC 5161): the client turns on extensions that change how the
// server answers. CONDSTORE (RFC 7162) is the one this server knows; other
// names are ignored, as the RFC asks, and left out of the ENABLED answer.
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { AUTHED, type ImapCommand } from './types.ts';

export const enable: ImapCommand = {
  names: ['ENABLE'],
  states: AUTHED,
  async handle({ conn }, args) {
    const names = args.rest().map((t) => {
      if (t.t !== 'atom') throw new ImapSyntaxError('ENABLE takes capability names');
      return t.v.toUpperCase();
    });
    if (names.length === 0) throw new ImapSyntaxError('ENABLE needs at least one capability name');
    const enabled: string[] = [];
    if (names.includes('CONDSTORE')) {
      conn.enableCondstore();
      enabled.push('CONDSTORE');
    }
    await conn.send([`* ENABLED${enabled.map((e) => ` ${e}`).join('')}`]);
    return undefined;
  },
};
