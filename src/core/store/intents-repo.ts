// SendMail intents (migration 0012): what a delivery job records outside
// Redis before its SendMail goes out, so a job rebuilt from the spool or
// rolled back with Redis recognizes its own landed message instead of
// publishing it again (delivery/pipeline.ts, docs/inbound.md "Exactly once
// across lost job state"). One row per copy (`<msgid>.<i>`), upserted at
// every signing with the job's stages; marked finished when the copy is
// stored (in the store's own transaction, MessagesRepo) or bounced.
//
// Writes arriving while one commits are upserted together in one statement
// (one commit, one WAL fsync), so the jobs of a SendMail batch, signed
// together, share one store write.
import type { Kysely, Transaction } from 'kysely';
import type { Database, DeliveryIntentsTable } from './types.ts';

/** The stages a job had when it signed (src/contracts/inbound-jobs.ts StageResults, kept opaque here). */
export interface IntentRecord {
  resolve?: unknown;
  seal?: { blobKey: string; size: number; wraps: { readerId: string; wrap: string }[] };
  pin?: { cid: string; pinned: boolean };
  submit?: {
    signature: string;
    index: string;
    since?: string;
    emailAddress: string;
    round?: number;
    [k: string]: unknown;
  };
}

export interface DeliveryIntent {
  copyId: string;
  msgid: string;
  rcptIndex: number;
  wallet: string | null;
  cid: string | null;
  blobKey: string | null;
  sinceIndex: string | null;
  signature: string | null;
  record: IntentRecord | null;
  updatedAt: number;
  finishedAt: number | null;
  outcome: 'stored' | 'bounced' | 'deleted' | null;
}

/** `<msgid>.<i>` → its parts (the index is after the last dot). */
export function splitCopyId(copyId: string): { msgid: string; rcptIndex: number } {
  const dot = copyId.lastIndexOf('.');
  const n = Number(copyId.slice(dot + 1));
  if (dot <= 0 || !Number.isInteger(n) || n < 0) return { msgid: copyId, rcptIndex: 0 };
  return { msgid: copyId.slice(0, dot), rcptIndex: n };
}

interface Pending {
  row: DeliveryIntentsTable;
  resolve(): void;
  reject(err: unknown): void;
}

/** Most rows in one upsert. */
const GROUP_MAX = 200;

export class IntentsRepo {
  private pending: Pending[] = [];
  private draining = false;
  /** Upserts committed and the rows in them, for tests and the bench. */
  readonly stats = { writes: 0, rows: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records (or replaces) the copy's intent; resolves once it is committed. */
  record(copyId: string, wallet: string, record: IntentRecord): Promise<void> {
    const { msgid, rcptIndex } = splitCopyId(copyId);
    const at = this.now();
    const row: DeliveryIntentsTable = {
      copy_id: copyId,
      msgid,
      rcpt_index: rcptIndex,
      wallet,
      cid: record.pin?.cid ?? null,
      blob_key: record.seal?.blobKey ?? null,
      since_index: record.submit?.since ?? record.submit?.index ?? null,
      email_index: record.submit?.index ?? null,
      email_address: record.submit?.emailAddress ?? null,
      signature: record.submit?.signature ?? null,
      record: JSON.stringify(record),
      created_at: at,
      updated_at: at,
      finished_at: null,
      outcome: null,
    };
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ row, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // After this turn's I/O, so the jobs of one batch (checkpointed together) share one write.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending.splice(0, GROUP_MAX);
      // One row per copy in a statement (PostgreSQL refuses to update a row twice in one upsert): the last wins.
      const rows = new Map<string, DeliveryIntentsTable>();
      for (const p of group) rows.set(p.row.copy_id, p.row);
      try {
        await this.db
          .insertInto('delivery_intents')
          .values([...rows.values()])
          .onConflict((oc) =>
            oc.column('copy_id').doUpdateSet((eb) => ({
              wallet: eb.ref('excluded.wallet'),
              cid: eb.ref('excluded.cid'),
              blob_key: eb.ref('excluded.blob_key'),
              since_index: eb.ref('excluded.since_index'),
              email_index: eb.ref('excluded.email_index'),
              email_address: eb.ref('excluded.email_address'),
              signature: eb.ref('excluded.signature'),
              record: eb.ref('excluded.record'),
              updated_at: eb.ref('excluded.updated_at'),
              finished_at: null,
              outcome: null,
            })),
          )
          .execute();
        this.stats.writes++;
        this.stats.rows += rows.size;
        for (const p of group) p.resolve();
      } catch (err) {
        for (const p of group) p.reject(err);
      }
    }
    this.draining = false;
  }

  async get(copyId: string): Promise<DeliveryIntent | undefined> {
    const row = await this.db
      .selectFrom('delivery_intents')
      .selectAll()
      .where('copy_id', '=', copyId)
      .executeTakeFirst();
    return row ? toIntent(row) : undefined;
  }

  /** How many copies' intents name this signature (a batch's jobs: all recorded it before it was sent). */
  async countWithSignature(signature: string): Promise<number> {
    const row = await this.db
      .selectFrom('delivery_intents')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('signature', '=', signature)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * Marks a copy finished (bounced for good, stored outside MessagesRepo, or
   * deleted from the queue by the operator); made when absent.
   */
  async markFinished(copyId: string, outcome: 'stored' | 'bounced' | 'deleted'): Promise<void> {
    const { msgid, rcptIndex } = splitCopyId(copyId);
    const at = this.now();
    await this.db
      .insertInto('delivery_intents')
      .values({
        copy_id: copyId,
        msgid,
        rcpt_index: rcptIndex,
        wallet: null,
        cid: null,
        blob_key: null,
        since_index: null,
        email_index: null,
        email_address: null,
        signature: null,
        record: null,
        created_at: at,
        updated_at: at,
        finished_at: at,
        outcome,
      })
      .onConflict((oc) => oc.column('copy_id').doUpdateSet({ finished_at: at, updated_at: at, outcome }))
      .execute();
  }

  /** Of these copies, the finished ones: a message row stored for it, or an intent marked finished. */
  async finished(copyIds: string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < copyIds.length; i += 500) {
      const ids = copyIds.slice(i, i + 500);
      const [stored, marked] = await Promise.all([
        this.db.selectFrom('messages').select('id').where('id', 'in', ids).execute(),
        this.db
          .selectFrom('delivery_intents')
          .select('copy_id')
          .where('copy_id', 'in', ids)
          .where('finished_at', 'is not', null)
          .execute(),
      ]);
      for (const r of stored) out.add(r.id);
      for (const r of marked) out.add(r.copy_id);
    }
    return out;
  }

  /** Finished intents last changed before `before` (Unix ms), oldest first: candidates for pruning. */
  async listFinishedBefore(before: number, limit = 1000): Promise<{ copyId: string; msgid: string }[]> {
    const rows = await this.db
      .selectFrom('delivery_intents')
      .select(['copy_id', 'msgid'])
      .where('finished_at', 'is not', null)
      .where('finished_at', '<', before)
      .orderBy('finished_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ copyId: r.copy_id, msgid: r.msgid }));
  }

  async delete(copyIds: string[]): Promise<number> {
    if (copyIds.length === 0) return 0;
    const r = await this.db.deleteFrom('delivery_intents').where('copy_id', 'in', copyIds).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Of these sealed-body keys, those an unfinished intent still names (the blob sweep keeps them). */
  async openBlobKeys(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('delivery_intents')
      .select('blob_key')
      .where('blob_key', 'in', keys)
      .where('finished_at', 'is', null)
      .execute();
    return new Set(rows.map((r) => r.blob_key as string));
  }
}

/** Inside the store transaction of a copy (MessagesRepo): its intent is marked stored. */
export async function markIntentStoredIn(
  trx: Transaction<Database>,
  copyId: string,
  at: number,
): Promise<void> {
  await trx
    .updateTable('delivery_intents')
    .set({ finished_at: at, updated_at: at, outcome: 'stored' })
    .where('copy_id', '=', copyId)
    .execute();
}

function toIntent(row: DeliveryIntentsTable): DeliveryIntent {
  let record: IntentRecord | null = null;
  if (row.record) {
    try {
      record = JSON.parse(row.record) as IntentRecord;
    } catch {
      record = null;
    }
  }
  return {
    copyId: row.copy_id,
    msgid: row.msgid,
    rcptIndex: Number(row.rcpt_index),
    wallet: row.wallet,
    cid: row.cid,
    blobKey: row.blob_key,
    sinceIndex: row.since_index,
    signature: row.signature,
    record,
    updatedAt: Number(row.updated_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    outcome: row.outcome,
  };
}
