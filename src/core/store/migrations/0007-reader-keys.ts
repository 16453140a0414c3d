// Seventh schema: what IMAP/POP3 keep beside the mail store.
//  - reader_keys: an account's IMAP/POP reader key (X25519). The public key is
//    in the clear (delivery wraps each message's content key to it); the
//    secret is locked under a key derived from the mail password and then
//    sealed under the credential key, so neither a database dump nor the
//    server alone can open it. reader_id changes when the key is replaced
//    (the reset path), so wraps made for an older key never match.
//  - mail_counters: the last UIDVALIDITY handed out per account, so a folder
//    deleted and created again under the same name never reuses one.
// Both go with the account row (ON DELETE CASCADE), i.e. with the admin sweep.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('reader_keys')
    .addColumn('wallet', 'text', (c) => c.primaryKey().references('accounts.wallet').onDelete('cascade'))
    .addColumn('reader_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('locked_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('mail_counters')
    .addColumn('wallet', 'text', (c) => c.primaryKey().references('accounts.wallet').onDelete('cascade'))
    .addColumn('last_uid_validity', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createIndex('reader_wraps_reader')
    .on('reader_wraps')
    .columns(['reader_id', 'message_id'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('reader_wraps_reader').execute();
  await db.schema.dropTable('mail_counters').execute();
  await db.schema.dropTable('reader_keys').execute();
}
