// The shape of a command module: which session states accept it, whether a
// UID form exists, and the handler. A handler returns nothing (tagged
// "OK <name> completed"), a code/text for the tagged OK, or 'done' when it
// wrote its own tagged answer (LOGOUT, STARTTLS).
import type { ImapConnection, SessionState } from '../connection.ts';
import type { Args } from '../protocol/args.ts';

export interface CommandContext {
  conn: ImapConnection;
  tag: string;
  /** Uppercased command name (without the UID prefix). */
  name: string;
  /** Given as `UID <name>`. */
  uid: boolean;
}

export type CommandResult = undefined | 'done' | { code?: string; text?: string };

export interface ImapCommand {
  names: string[];
  states: SessionState[];
  uid?: boolean;
  handle(ctx: CommandContext, args: Args): Promise<CommandResult>;
}

export const ANY: SessionState[] = ['not-authenticated', 'authenticated', 'selected'];
export const AUTHED: SessionState[] = ['authenticated', 'selected'];
export const SELECTED: SessionState[] = ['selected'];
export const NOT_AUTHED: SessionState[] = ['not-authenticated'];
