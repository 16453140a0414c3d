// Rows of inbound sender checks (see migration 0005).
import type { Kysely } from 'kysely';
import { newSortableId } from '../log.ts';
import type { Database } from './types.ts';

/** One sender-authentication verdict of the MX (src/edge/mx/sender-auth.ts), as stored. */
export interface SenderEvaluation {
  at: number;
  sourceIp: string;
  helo: string;
  mailFrom: string;
  spf: string;
  headerFrom?: string;
  dkim?: string;
  dmarc?: string;
  dmarcPolicy?: string;
  disposition: 'accept' | 'reject' | 'defer';
}

export class SenderEvaluationsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async add(e: SenderEvaluation): Promise<void> {
    await this.db
      .insertInto('sender_evaluations')
      .values({
        id: newSortableId(),
        at: e.at,
        source_ip: e.sourceIp,
        helo: e.helo.slice(0, 255),
        mail_from: e.mailFrom.slice(0, 512),
        header_from: e.headerFrom ?? null,
        spf: e.spf,
        dkim: e.dkim ?? null,
        dmarc: e.dmarc ?? null,
        dmarc_policy: e.dmarcPolicy ?? null,
        disposition: e.disposition,
      })
      .execute();
  }

  async list(opts: { since?: number; limit?: number } = {}): Promise<(SenderEvaluation & { id: string })[]> {
    let q = this.db
      .selectFrom('sender_evaluations')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(opts.limit ?? 100, 1), 1000));
    if (opts.since !== undefined) q = q.where('at', '>=', opts.since);
    const rows = await q.execute();
    return rows.map((r) => ({
      id: r.id,
      at: Number(r.at),
      sourceIp: r.source_ip,
      helo: r.helo,
      mailFrom: r.mail_from,
      headerFrom: r.header_from ?? undefined,
      spf: r.spf,
      dkim: r.dkim ?? undefined,
      dmarc: r.dmarc ?? undefined,
      dmarcPolicy: r.dmarc_policy ?? undefined,
      disposition: r.disposition as SenderEvaluation['disposition'],
    }));
  }

  /** Deletes rows older than `before` (ms); returns how many went. */
  async pruneBefore(before: number): Promise<number> {
    const r = await this.db.deleteFrom('sender_evaluations').where('at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
