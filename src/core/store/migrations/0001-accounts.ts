// First schema: accounts and their satellites. Column types are the portable
// subset both SQLite and PostgreSQL accept (text, bigint, boolean), so one
// migration serves both dialects.
import { type Kysely, sql } from 'kysely';

// Migrations must not depend on the evolving Database type.
type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('wallet', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('self', 'admin', 'delivery')`))
    .addColumn('mail_password_sealed', 'text')
    .addColumn('timezone', 'text')
    .addColumn('expose_dnd_schedule', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('disabled_at', 'bigint')
    .execute();
  await db.schema.createIndex('accounts_created_at').on('accounts').column('created_at').execute();

  await db.schema
    .createTable('pin_providers')
    .addColumn('wallet', 'text', (c) => c.primaryKey().references('accounts.wallet').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('sealed_credentials', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('success', 'failure')`))
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
  await db.schema.createIndex('audit_events_target').on('audit_events').columns(['target', 'at']).execute();

  await db.schema
    .createTable('kv_meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('kv_meta').execute();
  await db.schema.dropTable('audit_events').execute();
  await db.schema.dropTable('pin_providers').execute();
  await db.schema.dropTable('accounts').execute();
}
