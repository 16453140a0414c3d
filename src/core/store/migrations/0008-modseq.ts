// Eighth schema: modification sequences (RFC 7162 CONDSTORE). Each mailbox
// keeps a counter, `highest_modseq`; every change in it (a message arriving,
// moved or copied in, flags written, messages expunged) takes the next value
// in the same transaction, and the messages it touched record it in
// `modseq`. IMAP serves them as MODSEQ / HIGHESTMODSEQ, and an IMAP session
// in IDLE polls the counter to notice any change without reloading.
import { type Kysely, sql } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('mailboxes')
    .addColumn('highest_modseq', 'bigint', (c) => c.notNull().defaultTo(sql`1`))
    .execute();
  await db.schema
    .alterTable('messages')
    .addColumn('modseq', 'bigint', (c) => c.notNull().defaultTo(sql`1`))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('modseq').execute();
  await db.schema.alterTable('mailboxes').dropColumn('highest_modseq').execute();
}
