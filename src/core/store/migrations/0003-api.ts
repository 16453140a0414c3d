// Third schema: what the account API keeps beside the account row. The
// session epoch lets "revoke all sessions" invalidate every outstanding JWT
// (tokens carry the epoch they were issued under); the do-not-disturb
// schedule is its own row so the admin sweep can delete it on its own, just
// before the account row (docs/api.md).
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('account_sessions')
    .addColumn('wallet', 'text', (c) => c.primaryKey().references('accounts.wallet').onDelete('cascade'))
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dnd_schedules')
    .addColumn('wallet', 'text', (c) => c.primaryKey().references('accounts.wallet').onDelete('cascade'))
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('dnd_schedules').execute();
  await db.schema.dropTable('account_sessions').execute();
}
