// Second schema: the operator's mail store. Each delivered copy is a message
// row pointing at its sealed bytes in the blob store (never the bytes), with
// the chain facts once published; per-reader wraps are the operator-kept
// readers of the sealed object (IMAP/POP reader keys), never put on IPFS.
import { type Kysely, sql } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('mailboxes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('wallet', 'text', (c) => c.notNull().references('accounts.wallet').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('uid_validity', 'bigint', (c) => c.notNull())
    .addColumn('uid_next', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('mailboxes_wallet_name', ['wallet', 'name'])
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('wallet', 'text', (c) => c.notNull().references('accounts.wallet').onDelete('cascade'))
    .addColumn('mailbox_id', 'text', (c) => c.notNull().references('mailboxes.id').onDelete('cascade'))
    .addColumn('uid', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('cid', 'text')
    .addColumn('pinned_by_operator', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('chain_index', 'text')
    .addColumn('email_address', 'text')
    .addColumn('tx_signature', 'text')
    .addColumn('published_by_us', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('flags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('deleted_at', 'bigint')
    .addUniqueConstraint('messages_mailbox_uid', ['mailbox_id', 'uid'])
    .addCheckConstraint('messages_size_nonneg', sql`size >= 0`)
    .execute();
  await db.schema
    .createIndex('messages_wallet_received')
    .on('messages')
    .columns(['wallet', 'received_at'])
    .execute();

  await db.schema
    .createTable('reader_wraps')
    .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('reader_id', 'text', (c) => c.notNull())
    .addColumn('wallet', 'text', (c) => c.notNull())
    .addColumn('wrap', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('reader_wraps_pk', ['message_id', 'reader_id'])
    .execute();
  await db.schema.createIndex('reader_wraps_wallet').on('reader_wraps').column('wallet').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('reader_wraps').execute();
  await db.schema.dropTable('messages').execute();
  await db.schema.dropTable('mailboxes').execute();
}
