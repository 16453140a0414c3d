import { ANY, type ImapCommand } from './types.ts';

export const capability: ImapCommand = {
  names: ['CAPABILITY'],
  states: ANY,
  async handle({ conn }, args) {
    args.end();
    await conn.send([`* CAPABILITY ${conn.capabilities().join(' ')}`]);
    return undefined;
  },
};
