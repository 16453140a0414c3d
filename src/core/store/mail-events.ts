// What the mail store tells whoever shows mail live (IMAP IDLE,
// src/edge/imap/push.ts) after a committed change: "these mailboxes of this
// wallet changed". The repositories call `notifyMailChanged` once their
// transaction has committed, for every change that bumps a mailbox's
// HIGHESTMODSEQ or alters what a reader can open: a delivery, a Sent copy,
// APPEND, COPY, MOVE, flags, EXPUNGE (IMAP, POP3 and the webmail alike),
// a folder deleted or renamed, wraps added or dropped, a wallet swept.
//
// The sink is registered per store handle (`setMailChangeSink(db, sink)`,
// done by `sealpost serve` / `sealpost worker` once the store is open), so
// every repository built on that handle anywhere in the process notifies,
// whichever route or command built it; a handle with no sink (tools, tests
// that want none) notifies nobody. Notifying is best effort: it never throws
// into the write that caused it, and a reader that misses one still finds
// the change by its fallback poll.
import type { Kysely } from 'kysely';
import type { Database } from './types.ts';

export interface MailChangeSink {
  /**
   * `wallet`'s mailboxes `mailboxIds` changed (every mailbox of the wallet
   * when absent). Called after the commit; must not throw or block.
   */
  mailChanged(wallet: string, mailboxIds?: readonly string[]): void;
}

const sinks = new WeakMap<object, MailChangeSink>();

/** Registers (or, with undefined, removes) the sink told of every change made through `db`. */
export function setMailChangeSink(db: Kysely<Database>, sink: MailChangeSink | undefined): void {
  if (sink) sinks.set(db, sink);
  else sinks.delete(db);
}

/** The sink registered for `db`, if any. */
export function mailChangeSinkOf(db: Kysely<Database>): MailChangeSink | undefined {
  return sinks.get(db);
}

/** Tells `db`'s sink that `wallet`'s mailboxes changed; never throws. */
export function notifyMailChanged(
  db: Kysely<Database>,
  wallet: string,
  mailboxIds?: readonly string[],
): void {
  const sink = sinks.get(db);
  if (!sink) return;
  try {
    sink.mailChanged(wallet, mailboxIds);
  } catch {
    // Best effort: the change is committed; readers fall back to their poll.
  }
}
