// Every IMAP command, by name.
import { append } from './append.ts';
import { authenticate } from './authenticate.ts';
import { capability } from './capability.ts';
import { close } from './close.ts';
import { copy } from './copy.ts';
import { create } from './create.ts';
import { deleteCommand } from './delete.ts';
import { enable } from './enable.ts';
import { expunge } from './expunge.ts';
import { fetch } from './fetch.ts';
import { id } from './id.ts';
import { idle } from './idle.ts';
import { listCommand } from './list.ts';
import { login } from './login.ts';
import { logout } from './logout.ts';
import { move } from './move.ts';
import { namespace } from './namespace.ts';
import { noop } from './noop.ts';
import { rename } from './rename.ts';
import { search } from './search.ts';
import { select } from './select.ts';
import { starttls } from './starttls.ts';
import { status } from './status.ts';
import { store } from './store.ts';
import { subscribe } from './subscribe.ts';
import type { ImapCommand } from './types.ts';

const ALL: ImapCommand[] = [
  capability,
  noop,
  logout,
  starttls,
  login,
  authenticate,
  id,
  enable,
  namespace,
  listCommand,
  status,
  select,
  create,
  deleteCommand,
  rename,
  subscribe,
  append,
  close,
  expunge,
  search,
  fetch,
  store,
  copy,
  move,
  idle,
];

export const COMMANDS = new Map<string, ImapCommand>(ALL.flatMap((c) => c.names.map((n) => [n, c] as const)));
