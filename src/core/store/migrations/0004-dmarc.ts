// DMARC and TLS-RPT data with a retention limit (docs/dmarc.md):
//  - dmarc_reports: one row per ingested aggregate report, unique by
//    (org_name, report_id); the parsed report itself is a dmarc_rua/ blob;
//  - dmarc_report_records: one row per <record> of a report (source_ip, …);
//  - tlsrpt_pending: TLS-RPT results waiting for the daily report.
// Rows carrying a source_ip (these records, and the inbound check's
// sender_evaluations of 0005) are pruned by dmarc_retention_days; reports and
// TLS-RPT pending rows by report_retention_days.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('dmarc_reports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_name', 'text', (c) => c.notNull())
    .addColumn('report_id', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('date_begin', 'bigint', (c) => c.notNull())
    .addColumn('date_end', 'bigint', (c) => c.notNull())
    .addColumn('reporter_email', 'text')
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('record_count', 'bigint', (c) => c.notNull())
    .addColumn('message_count', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('source_message_id', 'text')
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('dmarc_reports_org_report', ['org_name', 'report_id'])
    .execute();
  await db.schema
    .createIndex('dmarc_reports_domain_begin')
    .on('dmarc_reports')
    .columns(['domain', 'date_begin', 'id'])
    .execute();
  await db.schema.createIndex('dmarc_reports_received').on('dmarc_reports').column('received_at').execute();

  await db.schema
    .createTable('dmarc_report_records')
    .addColumn('report_row_id', 'text', (c) => c.notNull().references('dmarc_reports.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('source_ip', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('disposition', 'text', (c) => c.notNull())
    .addColumn('dkim', 'text', (c) => c.notNull())
    .addColumn('spf', 'text', (c) => c.notNull())
    .addColumn('header_from', 'text', (c) => c.notNull())
    .addColumn('envelope_from', 'text')
    .addColumn('auth_results', 'text', (c) => c.notNull())
    .addColumn('date_begin', 'bigint', (c) => c.notNull())
    .addColumn('date_end', 'bigint', (c) => c.notNull())
    .addColumn('ingested_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('dmarc_report_records_pk', ['report_row_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('dmarc_report_records_ingested')
    .on('dmarc_report_records')
    .column('ingested_at')
    .execute();

  await db.schema
    .createTable('tlsrpt_pending')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('policy_domain', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addColumn('result_type', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('tlsrpt_pending_recorded').on('tlsrpt_pending').column('recorded_at').execute();
  await db.schema
    .createIndex('tlsrpt_pending_domain')
    .on('tlsrpt_pending')
    .columns(['policy_domain', 'recorded_at'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('tlsrpt_pending').execute();
  await db.schema.dropTable('dmarc_report_records').execute();
  await db.schema.dropTable('dmarc_reports').execute();
}
