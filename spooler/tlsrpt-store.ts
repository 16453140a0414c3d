// TLS-RPT results waiting for the daily report, one `tlsrpt_pending` row
// per TLS session attempt (migration 0004, docs/dmarc.md). `result_type`
// is `success` or an RFC 8460 failure type; `detail` holds the policy the
// session ran under and the failure-detail fields, as JSON.
import type { Kysely } from 'kysely';
import { type Logger, newSortableId } from '../src/core/log.ts';
import type { Database } from '../src/core/store/types.ts';
import type { ReportPolicy } from './tls-policy.ts';

/** RFC 8460 §4.3 result types. */
export const TLSRPT_RESULT_TYPES = [
  'starttls-not-supported',
  'certificate-host-mismatch',
  'certificate-expired',
  'certificate-not-trusted',
  'validation-failure',
  'tlsa-invalid',
  'dnssec-invalid',
  'dane-required',
  'sts-policy-fetch-error',
  'sts-policy-invalid',
  'sts-webpki-invalid',
] as const;

export type TlsrptResultType = (typeof TLSRPT_RESULT_TYPES)[number];

export interface TlsSessionRecord extends ReportPolicy {
  policyDomain: string;
  result: 'success' | TlsrptResultType;
  receivingMxHostname?: string;
  receivingIp?: string;
  sendingMtaIp?: string;
  failureReasonCode?: string;
  additionalInformation?: string;
}

export interface PendingRow extends TlsSessionRecord {
  id: string;
  recordedAt: number;
}

interface Detail extends ReportPolicy {
  receivingMxHostname?: string;
  receivingIp?: string;
  sendingMtaIp?: string;
  failureReasonCode?: string;
  additionalInformation?: string;
}

export interface TlsrptRecorder {
  /** Queues one result; never throws (a lost report row must not affect delivery). */
  record(r: TlsSessionRecord): void;
  /** Waits for queued writes. */
  flush(): Promise<void>;
}

export function isResultType(v: string): v is TlsrptResultType {
  return (TLSRPT_RESULT_TYPES as readonly string[]).includes(v);
}

export function createTlsrptRecorder(
  db: Kysely<Database>,
  now: () => number,
  logger?: Logger,
): TlsrptRecorder {
  const inflight = new Set<Promise<unknown>>();
  return {
    record(r) {
      const { policyDomain, result, ...rest } = r;
      const at = now();
      const detail: Detail = rest;
      const p = db
        .insertInto('tlsrpt_pending')
        .values({
          id: newSortableId(at),
          policy_domain: policyDomain,
          recorded_at: at,
          result_type: result,
          detail: JSON.stringify(detail),
        })
        .execute()
        .catch((err: Error) =>
          logger?.warn({ err: err.message, policyDomain }, 'could not record a TLS-RPT result'),
        )
        .finally(() => inflight.delete(p));
      inflight.add(p);
    },
    async flush() {
      await Promise.allSettled([...inflight]);
    },
  };
}

/** Rows of one domain recorded in [from, to). */
export async function pendingRows(
  db: Kysely<Database>,
  domain: string,
  from: number,
  to: number,
): Promise<PendingRow[]> {
  const rows = await db
    .selectFrom('tlsrpt_pending')
    .selectAll()
    .where('policy_domain', '=', domain)
    .where('recorded_at', '>=', from)
    .where('recorded_at', '<', to)
    .orderBy('recorded_at')
    .execute();
  return rows.map((row) => {
    const detail = (row.detail ? JSON.parse(row.detail) : {}) as Partial<Detail>;
    return {
      id: row.id,
      recordedAt: Number(row.recorded_at),
      policyDomain: row.policy_domain,
      result: row.result_type as PendingRow['result'],
      policyType: detail.policyType ?? 'no-policy-found',
      policyString: detail.policyString ?? [],
      mxHost: detail.mxHost ?? [],
      receivingMxHostname: detail.receivingMxHostname,
      receivingIp: detail.receivingIp,
      sendingMtaIp: detail.sendingMtaIp,
      failureReasonCode: detail.failureReasonCode,
      additionalInformation: detail.additionalInformation,
    };
  });
}

/** Domains with rows recorded before `before`, with the earliest such time. */
export async function pendingDomains(
  db: Kysely<Database>,
  before: number,
): Promise<{ domain: string; first: number }[]> {
  const rows = await db
    .selectFrom('tlsrpt_pending')
    .select((eb) => ['policy_domain', eb.fn.min('recorded_at').as('first')])
    .where('recorded_at', '<', before)
    .groupBy('policy_domain')
    .execute();
  return rows.map((r) => ({ domain: r.policy_domain, first: Number(r.first) }));
}

export async function deleteRows(
  db: Kysely<Database>,
  domain: string,
  from: number,
  to: number,
): Promise<number> {
  const r = await db
    .deleteFrom('tlsrpt_pending')
    .where('policy_domain', '=', domain)
    .where('recorded_at', '>=', from)
    .where('recorded_at', '<', to)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** report_retention_days: rows strictly older than the cutoff go; 0 keeps forever. */
export async function prunePending(
  db: Kysely<Database>,
  now: number,
  retentionDays: number,
): Promise<number> {
  if (retentionDays === 0) return 0;
  const r = await db
    .deleteFrom('tlsrpt_pending')
    .where('recorded_at', '<', now - retentionDays * 86_400_000)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
