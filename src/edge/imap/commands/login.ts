// LOGIN name password: the mail password; only under TLS (LOGINDISABLED otherwise).
import { completeLogin } from './helpers.ts';
import { type ImapCommand, NOT_AUTHED } from './types.ts';

export const login: ImapCommand = {
  names: ['LOGIN'],
  states: NOT_AUTHED,
  async handle(ctx, args) {
    const user = args.astringText('user name');
    const password = args.astringText('password');
    args.end();
    return completeLogin(ctx, user, password);
  },
};
