// Twelfth schema: SendMail intents (delivery/intents.ts, docs/inbound.md
// "Exactly once across lost job state"). Before a SendMail goes out, the
// delivery job records here, outside Redis, what a rebuilt or rolled-back
// job needs to recognize its own landed message: the copy (msgid and
// recipient index), the recipient's mailbox (wallet), the sealed body's CID
// and blob key (so the SAME sealed body is reused, never sealed again), the
// lowest Email index any signing was built at, and the signed transaction
// with its signature; `record` holds the stages (resolve, seal, pin, submit)
// as the job had them. `finished_at`/`outcome` mark a copy that is done
// (stored, or bounced for good): the reconcile step never re-queues it.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('delivery_intents')
    .addColumn('copy_id', 'text', (c) => c.primaryKey())
    .addColumn('msgid', 'text', (c) => c.notNull())
    .addColumn('rcpt_index', 'integer', (c) => c.notNull())
    .addColumn('wallet', 'text')
    .addColumn('cid', 'text')
    .addColumn('blob_key', 'text')
    .addColumn('since_index', 'text')
    .addColumn('email_index', 'text')
    .addColumn('email_address', 'text')
    .addColumn('signature', 'text')
    .addColumn('record', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('outcome', 'text')
    .execute();
  await db.schema.createIndex('delivery_intents_msgid').on('delivery_intents').column('msgid').execute();
  await db.schema
    .createIndex('delivery_intents_signature')
    .on('delivery_intents')
    .column('signature')
    .execute();
  await db.schema
    .createIndex('delivery_intents_blob_key')
    .on('delivery_intents')
    .column('blob_key')
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('delivery_intents').execute();
}
