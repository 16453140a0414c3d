// The PostgreSQL blob store (`[blobs] backend = "postgres"`): the spool and
// the content-addressed blobs in the store's database (tables of migration
// 0013), so MX front ends and workers on hosts without a shared filesystem
// share them and PostgreSQL's replication protects them.
//  - A spool entry is a row of blob_spool (the key its jobs name, its size,
//    its manifest as JSON) and its bytes in blob_spool_chunks, 256 KiB a row.
//    The messages of one group-commit batch are written in ONE transaction
//    (writeSegment): once it has committed (PostgreSQL flushed its WAL) every
//    one of them is durable, so syncSpool has nothing left to do. Messages
//    are received in memory (no temp file: the transaction is the write).
//  - A content blob (`sha256/…`, `dmarc_rua/…`) is a row of blob_content by
//    area and sha256 with its bytes in blob_content_chunks; storing the same
//    bytes again only refreshes its mtime (the orphan sweep's age rule).
//  - A spool entry the reconcile step cannot read (its manifest does not
//    parse) is kept and marked (corrupt_at): it is no longer listed nor
//    exists, and `spool-corrupt/<id>` names it in reports.
// Keys are the filesystem store's: `spool/<id>@<offset>+<length>`, where a
// row keeps the key its jobs were given (an entry migrated from a segment
// file keeps its offset), so jobs queued before a `sealpost blobs migrate`
// read the same bytes after it.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { Database } from '../store/types.ts';
import {
  type BlobStore,
  BlobTooLargeError,
  type ContentArea,
  type PutResult,
  type SpoolDraft,
  type SpoolEntry,
} from './blob-store.ts';
import { parseSpoolManifest, type SpoolManifest } from './spool-manifest.ts';

/** Bytes per chunk row. */
export const PG_CHUNK_BYTES = 256 * 1024;
/** One INSERT of chunk rows carries at most this many bytes (and PG_INSERT_ROWS rows). */
const PG_INSERT_BYTES = 16 * 1024 * 1024;
const PG_INSERT_ROWS = 500;
const LIST_PAGE = 1000;

const SPOOL_KEY = /^spool\/([0-9A-Za-z._-]{1,80})(?:@([0-9]{1,15})\+([0-9]{1,15}))?$/;
const CONTENT_KEY = /^(sha256|dmarc_rua)\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

type ParsedKey =
  | { kind: 'spool'; id: string; range?: { start: number; length: number } }
  | { kind: 'content'; area: ContentArea; sha256: string };

function parseKey(key: string): ParsedKey {
  const s = SPOOL_KEY.exec(key);
  if (s) {
    const id = s[1] as string;
    return s[2] !== undefined
      ? { kind: 'spool', id, range: { start: Number(s[2]), length: Number(s[3]) } }
      : { kind: 'spool', id };
  }
  const c = CONTENT_KEY.exec(key);
  if (c && c[2] === (c[3] as string).slice(0, 2))
    return { kind: 'content', area: c[1] as ContentArea, sha256: c[3] as string };
  throw new Error(`invalid blob key ${JSON.stringify(key)}`);
}

function notFound(key: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`blob ${key} not found`), { code: 'ENOENT' });
}

/** The bytes split into chunk rows (views, no copies). */
function split(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += PG_CHUNK_BYTES)
    out.push(bytes.subarray(at, Math.min(bytes.length, at + PG_CHUNK_BYTES)));
  return out;
}

/** An entry to import as it is (`sealpost blobs migrate`). */
export interface ImportedSpoolEntry {
  id: string;
  /** The key its jobs name. */
  key: string;
  bytes: Buffer;
  manifest: SpoolManifest | null;
  createdAt: number;
}

export class PgBlobStore implements BlobStore {
  readonly backend = 'postgres' as const;

  constructor(private readonly db: Kysely<Database>) {}

  async receiveSpool(
    id: string,
    source: AsyncIterable<Uint8Array>,
    maxBytes = Number.POSITIVE_INFINITY,
  ): Promise<SpoolDraft> {
    parseKey(`spool/${id}`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of source) {
      size += chunk.length;
      if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
      chunks.push(chunk);
    }
    const draft: SpoolDraft = {
      size,
      chunks,
      bytes: async () => Buffer.concat(chunks, size),
      discard: async () => {
        if (draft.key) await this.delete(draft.key);
      },
    };
    return draft;
  }

  async finishSpoolFile(id: string): Promise<string> {
    throw new Error(`spool draft ${id}: the PostgreSQL blob store has no spool files`);
  }

  /** The messages of one batch in one transaction; every one is durable once it returns. */
  async writeSegment(
    messages: { id: string; chunks: Uint8Array[]; size: number; manifest?: SpoolManifest }[],
  ): Promise<string[]> {
    if (messages.length === 0) return [];
    const now = Date.now();
    const entries: ImportedSpoolEntry[] = messages.map((m) => ({
      id: m.id,
      key: `spool/${m.id}@0+${m.size}`,
      bytes: Buffer.concat(m.chunks, m.size),
      manifest: m.manifest ?? null,
      createdAt: now,
    }));
    await this.db.transaction().execute((trx) => this.insertSpool(trx, entries, false));
    return entries.map((e) => e.key);
  }

  /** Imports entries as they are; an id already present is left alone. Returns how many were new. */
  async importSpool(entries: ImportedSpoolEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    return this.db.transaction().execute((trx) => this.insertSpool(trx, entries, true));
  }

  private async insertSpool(
    trx: Transaction<Database>,
    entries: ImportedSpoolEntry[],
    skipExisting: boolean,
  ): Promise<number> {
    for (const e of entries) parseKey(e.key);
    const rows = entries.map(
      (e) =>
        sql`(${e.id}, ${e.key}, ${e.bytes.length}, ${e.manifest ? JSON.stringify(e.manifest) : null}, ${e.createdAt})`,
    );
    const inserted = await sql<{ id: string }>`insert into blob_spool (id, key, size, manifest, created_at)
      values ${sql.join(rows)} ${skipExisting ? sql`on conflict (id) do nothing` : sql``} returning id`.execute(
      trx,
    );
    const fresh = new Set(inserted.rows.map((r) => r.id));
    const chunkRows: { values: RawBuilder<unknown>; bytes: number }[] = [];
    for (const e of entries) {
      if (!fresh.has(e.id)) continue;
      split(e.bytes).forEach((data, seq) => {
        chunkRows.push({ values: sql`(${e.id}, ${seq}, ${data})`, bytes: data.length });
      });
    }
    await insertChunks(trx, sql`blob_spool_chunks (id, seq, data)`, chunkRows);
    return fresh.size;
  }

  async readSpoolEntry(id: string): Promise<SpoolEntry> {
    const key = `spool/${id}`;
    parseKey(key);
    const r = await sql<{ key: string; manifest: string | null }>`select key, manifest from blob_spool
      where id = ${id} and corrupt_at is null`.execute(this.db);
    const row = r.rows[0];
    if (!row) throw notFound(key);
    if (row.manifest === null) return { kind: 'unindexed', id, key: row.key };
    return { kind: 'indexed', id, key: row.key, manifest: parseSpoolManifest(row.manifest, id) };
  }

  /** Marks the entry corrupt: kept (never deleted), no longer listed. Returns `spool-corrupt/<id>`. */
  async moveSpoolAside(id: string): Promise<string> {
    const r = await sql`update blob_spool set corrupt_at = ${Date.now()}
      where id = ${id} and corrupt_at is null`.execute(this.db);
    if (Number(r.numAffectedRows ?? 0) === 0) throw notFound(`spool/${id}`);
    return `spool-corrupt/${id}`;
  }

  /** Nothing to do: the batch's transaction made it durable. */
  async syncSpool(): Promise<void> {}

  async putContent(bytes: Uint8Array, area: ContentArea = 'sha256'): Promise<PutResult> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = `${area}/${sha256.slice(0, 2)}/${sha256}`;
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    await this.db.transaction().execute(async (trx) => {
      const now = Date.now();
      const inserted = await sql`insert into blob_content (area, sha256, size, mtime)
        values (${area}, ${sha256}, ${buf.length}, ${now}) on conflict (area, sha256) do nothing
        returning sha256`.execute(trx);
      if (inserted.rows.length === 0) {
        // A new reference to old bytes: it counts as new for the orphan sweep's age rule.
        await sql`update blob_content set mtime = ${now} where area = ${area} and sha256 = ${sha256}`.execute(
          trx,
        );
        return;
      }
      await insertChunks(
        trx,
        sql`blob_content_chunks (area, sha256, seq, data)`,
        split(buf).map((data, seq) => ({
          values: sql`(${area}, ${sha256}, ${seq}, ${data})`,
          bytes: data.length,
        })),
      );
    });
    return { key, size: buf.length, sha256 };
  }

  async *list(area: 'spool' | ContentArea): AsyncGenerator<{ key: string; size: number; mtimeMs: number }> {
    let after = '';
    for (;;) {
      const page =
        area === 'spool'
          ? await sql<{
              name: string;
              size: number;
              mtime: number;
            }>`select id as name, size, created_at as mtime
              from blob_spool where corrupt_at is null and id > ${after} order by id limit ${LIST_PAGE}`.execute(
              this.db,
            )
          : await sql<{ name: string; size: number; mtime: number }>`select sha256 as name, size, mtime
              from blob_content where area = ${area} and sha256 > ${after} order by sha256 limit ${LIST_PAGE}`.execute(
              this.db,
            );
      for (const r of page.rows) {
        const key = area === 'spool' ? `spool/${r.name}` : `${area}/${r.name.slice(0, 2)}/${r.name}`;
        yield { key, size: Number(r.size), mtimeMs: Number(r.mtime) };
      }
      if (page.rows.length < LIST_PAGE) return;
      after = (page.rows[page.rows.length - 1] as { name: string }).name;
    }
  }

  /** The PostgreSQL store has no temp files (list never reports one). */
  async deleteTemp(key: string): Promise<void> {
    throw new Error(`not a temp file: ${key}`);
  }

  async exists(key: string): Promise<boolean> {
    return (await this.mtime(key)) !== null;
  }

  async mtime(key: string): Promise<number | null> {
    const k = parseKey(key);
    const r =
      k.kind === 'spool'
        ? await sql<{ mtime: number }>`select created_at as mtime from blob_spool
            where id = ${k.id} and corrupt_at is null`.execute(this.db)
        : await sql<{ mtime: number }>`select mtime from blob_content
            where area = ${k.area} and sha256 = ${k.sha256}`.execute(this.db);
    const row = r.rows[0];
    return row ? Number(row.mtime) : null;
  }

  async touch(key: string, mtimeMs: number): Promise<void> {
    const k = parseKey(key);
    const r =
      k.kind === 'spool'
        ? await sql`update blob_spool set created_at = ${mtimeMs} where id = ${k.id}`.execute(this.db)
        : await sql`update blob_content set mtime = ${mtimeMs}
            where area = ${k.area} and sha256 = ${k.sha256}`.execute(this.db);
    if (Number(r.numAffectedRows ?? 0) === 0) throw notFound(key);
  }

  async read(key: string): Promise<Buffer> {
    const k = parseKey(key);
    if (k.kind === 'content') {
      const r = await sql<{ size: number }>`select size from blob_content
        where area = ${k.area} and sha256 = ${k.sha256}`.execute(this.db);
      const row = r.rows[0];
      if (!row) throw notFound(key);
      const chunks = await sql<{ data: Buffer }>`select data from blob_content_chunks
        where area = ${k.area} and sha256 = ${k.sha256} order by seq`.execute(this.db);
      return joinChunks(
        chunks.rows.map((c) => c.data),
        Number(row.size),
        key,
      );
    }
    const r = await sql<{
      key: string;
      size: number;
    }>`select key, size from blob_spool where id = ${k.id}`.execute(this.db);
    const row = r.rows[0];
    if (!row) throw notFound(key);
    const chunks = await sql<{ data: Buffer }>`select data from blob_spool_chunks
      where id = ${k.id} order by seq`.execute(this.db);
    const bytes = joinChunks(
      chunks.rows.map((c) => c.data),
      Number(row.size),
      key,
    );
    if (!k.range) return bytes;
    // The row holds the bytes of its own key's range: a key names a range within it.
    const base = parseKey(row.key);
    const start = k.range.start - (base.kind === 'spool' && base.range ? base.range.start : 0);
    if (start < 0 || start + k.range.length > bytes.length)
      throw new Error(`blob ${key} lies outside its entry ${row.key}`);
    return bytes.subarray(start, start + k.range.length);
  }

  stream(key: string): Readable {
    const read = () => this.read(key);
    return Readable.from(
      (async function* () {
        const bytes = await read();
        if (bytes.length > 0) yield bytes;
      })(),
    );
  }

  /** Removes a blob (its chunks with it); an absent one is no error. */
  async delete(key: string): Promise<void> {
    const k = parseKey(key);
    if (k.kind === 'spool') await sql`delete from blob_spool where id = ${k.id}`.execute(this.db);
    else await sql`delete from blob_content where area = ${k.area} and sha256 = ${k.sha256}`.execute(this.db);
  }
}

async function insertChunks(
  trx: Transaction<Database>,
  table: RawBuilder<unknown>,
  rows: { values: RawBuilder<unknown>; bytes: number }[],
): Promise<void> {
  let batch: RawBuilder<unknown>[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await sql`insert into ${table} values ${sql.join(batch)}`.execute(trx);
    batch = [];
    bytes = 0;
  };
  for (const r of rows) {
    if (batch.length >= PG_INSERT_ROWS || (batch.length > 0 && bytes + r.bytes > PG_INSERT_BYTES))
      await flush();
    batch.push(r.values);
    bytes += r.bytes;
  }
  await flush();
}

function joinChunks(chunks: Buffer[], size: number, key: string): Buffer {
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  if (bytes.length !== size) throw new Error(`blob ${key} has ${bytes.length} of its ${size} bytes`);
  return bytes;
}
