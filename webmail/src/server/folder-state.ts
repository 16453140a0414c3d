// What the server reader needs to know of the row it was opened from (its
// folder and flags, which the message's own endpoint does not repeat), and
// the folder the mail view was showing, so going back returns to it. Kept
// for the tab's lifetime; nothing here is secret (ids, names, flags).
import type { ServerMessage } from './api.ts';

export interface OpenedRow {
  row: ServerMessage;
  mailbox: { id: string; name: string };
}

export const openedRows = new Map<string, OpenedRow>();

let folder: string | null = null;

export function lastFolder(): string | null {
  return folder;
}

export function rememberFolder(id: string | null): void {
  folder = id;
}
