// The outbound ledger (migration 0014): what the outbound spooler still owes,
// outside Redis. A producer of QUEUE_OUTBOUND (submission, the pipeline's and
// the spooler's DSNs, TLS-RPT reports) records the intake job's data here
// before it queues the job, so the 250 a submitter gets, or the bounce a
// sender is owed, survives Redis losing its data: the reconcile step
// (delivery/reconcile-outbound.ts) queues the job again from this row when
// Redis has no trace of it. The spooler records each destination domain whose
// job ended, so a rebuilt job only goes to the domains still open, and
// deletes the message's rows when it is done with it (before it deletes the
// message's content, so a finished message is never rebuilt without it).
import type { Kysely } from 'kysely';
import type { OutboundJobData } from '../../contracts/inbound-jobs.ts';
import type { Database } from './types.ts';

export type DomainOutcome = 'delivered' | 'failed' | 'local' | 'deleted';

export interface LedgerEntry {
  msgid: string;
  data: OutboundJobData;
  createdAt: number;
}

/** Most rows in one statement (SQLite's bound-parameter limit is the tighter one). */
const CHUNK = 200;

export class OutboundLedger {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records messages about to be queued (one commit); a message recorded before keeps its first row. */
  async record(items: readonly OutboundJobData[]): Promise<void> {
    if (items.length === 0) return;
    const at = this.now();
    for (let i = 0; i < items.length; i += CHUNK) {
      await this.db
        .insertInto('outbound_ledger')
        .values(
          items.slice(i, i + CHUNK).map((d) => ({
            msgid: d.msgid,
            kind: d.kind,
            data: JSON.stringify(d),
            blob_key: d.blobKey,
            created_at: at,
          })),
        )
        .onConflict((oc) => oc.column('msgid').doNothing())
        .execute();
    }
  }

  /** Records that these domains' jobs of a message ended. */
  async domainsDone(msgid: string, domains: readonly string[], outcome: DomainOutcome): Promise<void> {
    if (domains.length === 0) return;
    const at = this.now();
    await this.db
      .insertInto('outbound_ledger_done')
      .values([...new Set(domains)].map((domain) => ({ msgid, domain, outcome, at })))
      .onConflict((oc) => oc.columns(['msgid', 'domain']).doNothing())
      .execute();
  }

  /** The spooler is done with these messages (or a producer's queueing failed): their rows go. */
  async finish(msgids: readonly string[]): Promise<void> {
    if (msgids.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < msgids.length; i += CHUNK) {
        const ids = msgids.slice(i, i + CHUNK);
        await tx.deleteFrom('outbound_ledger_done').where('msgid', 'in', ids).execute();
        await tx.deleteFrom('outbound_ledger').where('msgid', 'in', ids).execute();
      }
    });
  }

  /** Open messages recorded before `before`, oldest first, after the (created_at, msgid) cursor. */
  async listBefore(
    before: number,
    limit: number,
    after?: { createdAt: number; msgid: string },
  ): Promise<LedgerEntry[]> {
    let q = this.db
      .selectFrom('outbound_ledger')
      .select(['msgid', 'data', 'created_at'])
      .where('created_at', '<=', before);
    if (after)
      q = q.where((eb) =>
        eb.or([
          eb('created_at', '>', after.createdAt),
          eb.and([eb('created_at', '=', after.createdAt), eb('msgid', '>', after.msgid)]),
        ]),
      );
    const rows = await q.orderBy('created_at').orderBy('msgid').limit(limit).execute();
    return rows.map((r) => ({
      msgid: r.msgid,
      data: JSON.parse(r.data) as OutboundJobData,
      createdAt: Number(r.created_at),
    }));
  }

  /** Per message, the domains whose jobs ended. */
  async doneDomains(msgids: readonly string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    for (let i = 0; i < msgids.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom('outbound_ledger_done')
        .select(['msgid', 'domain'])
        .where('msgid', 'in', msgids.slice(i, i + CHUNK))
        .execute();
      for (const r of rows) {
        let set = out.get(r.msgid);
        if (!set) {
          set = new Set();
          out.set(r.msgid, set);
        }
        set.add(r.domain);
      }
    }
    return out;
  }

  /** Which of these blob keys an open message names (the blob sweep keeps them). */
  async openBlobKeys(keys: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom('outbound_ledger')
        .select('blob_key')
        .where('blob_key', 'in', keys.slice(i, i + CHUNK))
        .execute();
      for (const r of rows) out.add(r.blob_key);
    }
    return out;
  }

  /** Whether a message still has its row (tests, the CLI). */
  async isOpen(msgid: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('outbound_ledger')
      .select('msgid')
      .where('msgid', '=', msgid)
      .executeTakeFirst();
    return row !== undefined;
  }
}
