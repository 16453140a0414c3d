// Eighth schema: a per-mailbox counter of flag changes. Every write of a
// message's flags (IMAP STORE, the API's flag route) bumps its mailbox's
// counter in the same transaction, so an IMAP session waiting in IDLE sees
// another session's flag change from the same cheap fingerprint it polls
// for new and removed mail, without reloading the mailbox on every poll.
import { type Kysely, sql } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('mailboxes')
    .addColumn('flag_changes', 'bigint', (c) => c.notNull().defaultTo(sql`0`))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('mailboxes').dropColumn('flag_changes').execute();
}
