// GET /v1/admin/dmarc-reports (list, filter by domain and period, keyset
// pagination) and GET /v1/admin/dmarc-reports/{id} (one report with its
// records), as a Fastify plugin the account API registers. The route config
// marks them admin-only for the API's guard; `isAdmin` is checked here too,
// so the plugin is safe in any app. Shapes: docs/dmarc.md.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import type { Database } from '../../core/store/types.ts';
import { type DmarcRecordRow, DmarcRepo, type DmarcReportRow } from './repo.ts';

export interface DmarcAdminDeps {
  db: Kysely<Database>;
  /** Reads the full report JSON for GET …/{id}; without it that route omits `report`. */
  blobs?: BlobStore;
  /** Admin check; when absent the host app's own guard must protect the routes. */
  isAdmin?: (request: FastifyRequest) => boolean | Promise<boolean>;
}

export const DMARC_REPORTS_PATH = '/v1/admin/dmarc-reports';
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

class QueryError extends Error {}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** `2024-05-01`, `2024-05-01T12:00:00Z` or Unix seconds. */
function parseTime(name: string, value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new QueryError(`${name} must be given once`);
  if (/^\d{1,12}$/.test(value)) return Number(value) * 1000;
  if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)) {
    const ms = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
    if (!Number.isNaN(ms)) return ms;
  }
  throw new QueryError(
    `${name} must be a date (2024-05-01), a date-time with zone (2024-05-01T12:00:00Z) or Unix seconds`,
  );
}

function encodeCursor(row: DmarcReportRow): string {
  return Buffer.from(`${row.date_begin}:${row.id}`, 'utf8').toString('base64url');
}

function decodeCursor(value: unknown): { dateBegin: number; id: string } | undefined {
  if (value === undefined || value === '') return undefined;
  const text = typeof value === 'string' ? Buffer.from(value, 'base64url').toString('utf8') : '';
  const m = /^(\d{1,15}):([0-9A-Za-z]{1,40})$/.exec(text);
  if (!m) throw new QueryError('cursor is not a value this route handed out (use next_cursor as is)');
  return { dateBegin: Number(m[1]), id: m[2] as string };
}

function summary(row: DmarcReportRow) {
  return {
    id: row.id,
    org_name: row.org_name,
    report_id: row.report_id,
    domain: row.domain,
    date_begin: iso(row.date_begin),
    date_end: iso(row.date_end),
    reporter_email: row.reporter_email,
    policy: JSON.parse(row.policy) as Record<string, unknown>,
    record_count: row.record_count,
    message_count: row.message_count,
    received_at: iso(row.received_at),
    blob_key: row.blob_key,
  };
}

function recordJson(r: DmarcRecordRow) {
  return {
    source_ip: r.source_ip,
    count: r.count,
    disposition: r.disposition,
    dkim: r.dkim,
    spf: r.spf,
    header_from: r.header_from,
    envelope_from: r.envelope_from,
    auth_results: JSON.parse(r.auth_results) as Record<string, unknown>,
  };
}

const DOC_ERRORS = [400, 401, 404];

export function dmarcAdminRoutes(deps: DmarcAdminDeps): FastifyPluginAsync {
  const repo = new DmarcRepo(deps.db);
  const guard = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    if (!deps.isAdmin || (await deps.isAdmin(request))) return true;
    await reply
      .code(401)
      .send({ error: 'admin_auth_required', message: 'send Authorization: Bearer <admin token>' });
    return false;
  };
  const listConfig = {
    auth: 'admin' as const,
    doc: {
      summary: 'List ingested DMARC aggregate reports',
      description:
        'Filters: domain, from/to (period overlap), limit (1-200, default 50), cursor (next_cursor of the previous page). Newest period first.',
      tags: ['admin'],
      errors: DOC_ERRORS,
    },
  };
  const oneConfig = {
    auth: 'admin' as const,
    doc: { summary: 'One ingested DMARC report with its records', tags: ['admin'], errors: DOC_ERRORS },
  };

  return async (app) => {
    app.get(DMARC_REPORTS_PATH, { config: listConfig }, async (request, reply) => {
      if (!(await guard(request, reply))) return reply;
      const q = (request.query ?? {}) as Record<string, unknown>;
      let filter: Parameters<DmarcRepo['list']>[0];
      try {
        const limitText = q.limit === undefined ? undefined : String(q.limit);
        const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
          throw new QueryError(`limit must be an integer 1-${MAX_LIMIT}`);
        }
        let domain: string | undefined;
        if (q.domain !== undefined) {
          if (typeof q.domain !== 'string' || q.domain.trim() === '')
            throw new QueryError('domain must be one domain name');
          domain = q.domain.trim().toLowerCase().replace(/\.$/, '');
        }
        const from = parseTime('from', q.from);
        const to = parseTime('to', q.to);
        if (from !== undefined && to !== undefined && to <= from)
          throw new QueryError('to must be later than from');
        filter = { domain, from, to, after: decodeCursor(q.cursor), limit };
      } catch (err) {
        if (!(err instanceof QueryError)) throw err;
        return reply.code(400).send({ error: 'invalid_query', message: err.message });
      }
      const rows = await repo.list(filter);
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        reports: page.map(summary),
        next_cursor: rows.length > filter.limit && last ? encodeCursor(last) : null,
      };
    });

    app.get(`${DMARC_REPORTS_PATH}/:id`, { config: oneConfig }, async (request, reply) => {
      if (!(await guard(request, reply))) return reply;
      const { id } = request.params as { id: string };
      const row = /^[0-9A-Za-z]{1,40}$/.test(id) ? await repo.get(id) : undefined;
      if (!row)
        return reply.code(404).send({ error: 'report_not_found', message: `no DMARC report with id ${id}` });
      let report: unknown = null;
      if (deps.blobs) {
        try {
          report = JSON.parse((await deps.blobs.read(row.blob_key)).toString('utf8'));
        } catch {
          report = null; // pruned or lost: the rows still answer
        }
      }
      return { ...summary(row), records: (await repo.records(row.id)).map(recordJson), report };
    });
  };
}
