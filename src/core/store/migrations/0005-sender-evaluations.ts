// Inbound sender evaluations (SPF, and DKIM/DMARC under dmarc-lite): one row
// per check with the client's IP, pruned after [spooler.dmarc_rua_ingest]
// dmarc_retention_days (0 keeps them forever).
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('sender_evaluations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('source_ip', 'text', (c) => c.notNull())
    .addColumn('helo', 'text', (c) => c.notNull())
    .addColumn('mail_from', 'text', (c) => c.notNull())
    .addColumn('header_from', 'text')
    .addColumn('spf', 'text', (c) => c.notNull())
    .addColumn('dkim', 'text')
    .addColumn('dmarc', 'text')
    .addColumn('dmarc_policy', 'text')
    .addColumn('disposition', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sender_evaluations_at').on('sender_evaluations').column('at').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('sender_evaluations').execute();
}
