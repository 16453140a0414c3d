// Tenth schema: the persisted program index (src/core/store/program-index.ts,
// docs/operations.md "Chain reads without getProgramAccounts"). One cursor
// row per index (the newest program signature it has applied, and a version
// bumped by every commit so processes sharing the store notice each other's
// work) and the accounts it keeps: their kind tag and data (base64) as last
// read with getMultipleAccounts.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('program_index_state')
    .addColumn('index_id', 'text', (c) => c.primaryKey())
    .addColumn('cursor_signature', 'text')
    .addColumn('cursor_slot', 'bigint')
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('program_index_accounts')
    .addColumn('index_id', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('program_index_accounts_pk', ['index_id', 'address'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('program_index_accounts').execute();
  await db.schema.dropTable('program_index_state').execute();
}
