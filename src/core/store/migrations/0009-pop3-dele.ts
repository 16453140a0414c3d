// Ninth schema: the holder's choice of what a POP3 DELE does
// (docs/imap-pop3.md "POP3"). `pop3_dele_closes_on_chain` false (default):
// DELE + QUIT removes only the copy in the operator's store; true: it also
// releases the operator pin and closes the Email account on chain, as an
// IMAP EXPUNGE does.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('pop3_dele_closes_on_chain', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('pop3_dele_closes_on_chain').execute();
}
