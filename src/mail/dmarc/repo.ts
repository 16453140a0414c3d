// Store access for ingested DMARC reports and the retention of every row
// that carries a source_ip (docs/dmarc.md). Timestamps are Unix ms.
import type { Kysely } from 'kysely';
import type { Database, DmarcReportRecordsTable, DmarcReportsTable } from '../../core/store/types.ts';

export type DmarcReportRow = DmarcReportsTable;
export type DmarcRecordRow = DmarcReportRecordsTable;

export interface ListReportsFilter {
  domain?: string;
  /** Reports whose period ends at or after this (Unix ms). */
  from?: number;
  /** Reports whose period begins before this (Unix ms). */
  to?: number;
  /** Keyset cursor: the (date_begin, id) of the last row of the previous page. */
  after?: { dateBegin: number; id: string };
  limit: number;
}

export interface PruneCounts {
  reports: number;
  records: number;
  senderEvaluations: number;
  tlsrptPending: number;
  /** Blob keys of the deleted reports (the caller removes the blobs). */
  blobKeys: string[];
}

/** Rows per INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_CHUNK = 500;

export class DmarcRepo {
  constructor(readonly db: Kysely<Database>) {}

  findByReportId(orgName: string, reportId: string): Promise<DmarcReportRow | undefined> {
    return this.db
      .selectFrom('dmarc_reports')
      .selectAll()
      .where('org_name', '=', orgName)
      .where('report_id', '=', reportId)
      .executeTakeFirst();
  }

  get(id: string): Promise<DmarcReportRow | undefined> {
    return this.db.selectFrom('dmarc_reports').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Inserts a report and its records in one transaction (all or nothing). */
  async insert(report: DmarcReportRow, records: DmarcRecordRow[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('dmarc_reports').values(report).execute();
      for (let i = 0; i < records.length; i += INSERT_CHUNK) {
        await trx
          .insertInto('dmarc_report_records')
          .values(records.slice(i, i + INSERT_CHUNK))
          .execute();
      }
    });
  }

  /** Newest period first, ties by id; `limit + 1` rows are read so the caller knows whether more follow. */
  list(filter: ListReportsFilter): Promise<DmarcReportRow[]> {
    let q = this.db.selectFrom('dmarc_reports').selectAll();
    if (filter.domain !== undefined) q = q.where('domain', '=', filter.domain);
    if (filter.from !== undefined) q = q.where('date_end', '>=', filter.from);
    if (filter.to !== undefined) q = q.where('date_begin', '<', filter.to);
    const after = filter.after;
    if (after) {
      q = q.where((eb) =>
        eb.or([
          eb('date_begin', '<', after.dateBegin),
          eb.and([eb('date_begin', '=', after.dateBegin), eb('id', '<', after.id)]),
        ]),
      );
    }
    return q
      .orderBy('date_begin', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit + 1)
      .execute();
  }

  records(reportRowId: string): Promise<DmarcRecordRow[]> {
    return this.db
      .selectFrom('dmarc_report_records')
      .selectAll()
      .where('report_row_id', '=', reportRowId)
      .orderBy('seq')
      .execute();
  }

  /**
   * Deletes rows strictly older than each cutoff (null: keep forever):
   * `rowsBefore` for source_ip rows (report records, sender evaluations),
   * `reportsBefore` for reports (with their records) and TLS-RPT pending rows.
   */
  async prune(cutoffs: { rowsBefore: number | null; reportsBefore: number | null }): Promise<PruneCounts> {
    const counts: PruneCounts = {
      reports: 0,
      records: 0,
      senderEvaluations: 0,
      tlsrptPending: 0,
      blobKeys: [],
    };
    const { rowsBefore, reportsBefore } = cutoffs;
    if (reportsBefore !== null) {
      const old = await this.db
        .selectFrom('dmarc_reports')
        .select(['id', 'blob_key', 'record_count'])
        .where('received_at', '<', reportsBefore)
        .execute();
      await this.db.transaction().execute(async (trx) => {
        for (let i = 0; i < old.length; i += INSERT_CHUNK) {
          const ids = old.slice(i, i + INSERT_CHUNK).map((r) => r.id);
          const recs = await trx
            .deleteFrom('dmarc_report_records')
            .where('report_row_id', 'in', ids)
            .executeTakeFirst();
          counts.records += Number(recs.numDeletedRows);
          const reps = await trx.deleteFrom('dmarc_reports').where('id', 'in', ids).executeTakeFirst();
          counts.reports += Number(reps.numDeletedRows);
        }
      });
      counts.blobKeys = old.map((r) => r.blob_key);
      const tls = await this.db
        .deleteFrom('tlsrpt_pending')
        .where('recorded_at', '<', reportsBefore)
        .executeTakeFirst();
      counts.tlsrptPending = Number(tls.numDeletedRows);
    }
    if (rowsBefore !== null) {
      const recs = await this.db
        .deleteFrom('dmarc_report_records')
        .where('ingested_at', '<', rowsBefore)
        .executeTakeFirst();
      counts.records += Number(recs.numDeletedRows);
      const evals = await this.db
        .deleteFrom('sender_evaluations')
        .where('at', '<', rowsBefore)
        .executeTakeFirst();
      counts.senderEvaluations = Number(evals.numDeletedRows);
    }
    return counts;
  }
}
