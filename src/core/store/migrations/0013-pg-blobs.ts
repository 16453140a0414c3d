// Thirteenth schema: the PostgreSQL blob backend (`[blobs] backend =
// "postgres"`, src/core/blobs/pg-blob-store.ts). The spool and the content blobs
// live in the store's database instead of `<data_dir>/blobs`, so hosts
// without a shared filesystem share them and PostgreSQL's replication
// protects them.
//  - blob_spool: one row per spool entry: `key` is the key its jobs name
//    (`spool/<id>@<offset>+<length>`), `manifest` the JSON its jobs are
//    rebuilt from (null for an entry written before the spool index),
//    `corrupt_at`/`corrupt_reason` set when the reconcile step found it
//    unreadable (kept, never deleted, and no longer listed).
//  - blob_spool_chunks: its bytes in order, up to 256 KiB a row.
//  - blob_content / blob_content_chunks: content-addressed blobs by area
//    (`sha256`, `dmarc_rua`) and sha256, `mtime` refreshed when stored again.
// The tables exist on SQLite too (same schema everywhere); only PostgreSQL uses them.
import { type Kysely, PostgresAdapter } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema
    .createTable('blob_spool')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('manifest', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('corrupt_at', 'bigint')
    .addColumn('corrupt_reason', 'text')
    .execute();
  await db.schema
    .createTable('blob_spool_chunks')
    .addColumn('id', 'text', (c) => c.notNull().references('blob_spool.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', bytes, (c) => c.notNull())
    .addPrimaryKeyConstraint('blob_spool_chunks_pk', ['id', 'seq'])
    .execute();
  await db.schema
    .createTable('blob_content')
    .addColumn('area', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('mtime', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('blob_content_pk', ['area', 'sha256'])
    .execute();
  await db.schema
    .createTable('blob_content_chunks')
    .addColumn('area', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', bytes, (c) => c.notNull())
    .addPrimaryKeyConstraint('blob_content_chunks_pk', ['area', 'sha256', 'seq'])
    .addForeignKeyConstraint(
      'blob_content_chunks_fk',
      ['area', 'sha256'],
      'blob_content',
      ['area', 'sha256'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('blob_content_chunks').execute();
  await db.schema.dropTable('blob_content').execute();
  await db.schema.dropTable('blob_spool_chunks').execute();
  await db.schema.dropTable('blob_spool').execute();
}
