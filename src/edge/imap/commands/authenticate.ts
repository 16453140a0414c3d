// AUTHENTICATE PLAIN (RFC 4616), with or without an initial response
// (SASL-IR, RFC 4959). The authorization identity must be empty or the
// login name itself.
import { ImapError } from '../errors.ts';
import { ImapSyntaxError } from '../protocol/tokens.ts';
import { completeLogin } from './helpers.ts';
import { type ImapCommand, NOT_AUTHED } from './types.ts';

const MAX_RESPONSE = 8192;

function decodeBase64(text: string): Buffer {
  if (text === '=') return Buffer.alloc(0);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
    throw new ImapSyntaxError('the SASL response is not valid base64');
  }
  return Buffer.from(text, 'base64');
}

export const authenticate: ImapCommand = {
  names: ['AUTHENTICATE'],
  states: NOT_AUTHED,
  async handle(ctx, args) {
    const mechanism = args.atom('mechanism').toUpperCase();
    const initial = args.done ? undefined : args.atom('initial response');
    args.end();
    if (mechanism !== 'PLAIN') throw new ImapError('NO', 'Unsupported authentication mechanism', 'CANNOT');
    if (!ctx.conn.isSecure)
      throw new ImapError('NO', 'Authenticate only under TLS (use STARTTLS)', 'PRIVACYREQUIRED');
    let response = initial;
    if (response === undefined) {
      await ctx.conn.send(['+ ']);
      response = (await ctx.conn.readLine(MAX_RESPONSE)).toString('latin1').trim();
      if (response === '*') throw new ImapError('BAD', 'Authentication cancelled');
    }
    const parts = decodeBase64(response).toString('utf8').split('\u0000');
    if (parts.length !== 3) throw new ImapError('BAD', 'PLAIN needs authzid NUL authcid NUL password');
    const [authz, user, password] = parts as [string, string, string];
    if (authz !== '' && authz !== user)
      throw new ImapError('NO', 'Acting as another user is not allowed', 'AUTHORIZATIONFAILED');
    return completeLogin(ctx, user, password);
  },
};
