// Fourteenth schema: the outbound ledger (src/core/store/outbound-ledger.ts,
// docs/spooler.md "Durable outbound queue"). Every message handed to the
// outbound spooler (submitted mail for remote recipients, DSNs, TLS-RPT
// reports) gets a row here, outside Redis, before its job is queued and
// before the submitter is told it was accepted: the job's data as queued,
// and the message's blob key (the daily blob sweep keeps what a row names).
// `outbound_ledger_done` has one row per destination domain whose domain job
// ended (delivered, bounced, expired or deleted by the operator), so a job
// rebuilt after Redis lost its state goes only to the domains still open.
// A message's rows are deleted when the spooler is done with it.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('outbound_ledger')
    .addColumn('msgid', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('outbound_ledger_created_at')
    .on('outbound_ledger')
    .columns(['created_at', 'msgid'])
    .execute();
  await db.schema.createIndex('outbound_ledger_blob_key').on('outbound_ledger').column('blob_key').execute();
  await db.schema
    .createTable('outbound_ledger_done')
    .addColumn('msgid', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('outbound_ledger_done_pk', ['msgid', 'domain'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('outbound_ledger_done').execute();
  await db.schema.dropTable('outbound_ledger').execute();
}
