// The PostgreSQL blob backend on a real PostgreSQL (a schema of its own,
// dropped after): spool entries written in one transaction per batch,
// multi-chunk messages byte-exact, the manifest read back for reconcile, a
// row that does not parse kept and marked, content blobs by area+sha256, and
// `blobs migrate` both ways keeping every key, byte, manifest and age.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/core/blobs/blob-store.ts';
import { migrateBlobs } from '../../src/core/blobs/migrate.ts';
import { openBlobStore } from '../../src/core/blobs/open-blob-store.ts';
import { PG_CHUNK_BYTES, PgBlobStore } from '../../src/core/blobs/pg-blob-store.ts';
import { SpoolCorruptError, type SpoolManifest } from '../../src/core/blobs/spool-manifest.ts';
import { openStore, type Store } from '../../src/core/store/index.ts';
import { dropSchema, TEST_PG_URL, uniqueSchemaName } from '../support/postgres.ts';
import { tempDir } from '../support/temp-dir.ts';

const manifest = (msgid: string, size: number): SpoolManifest => ({
  v: 1,
  msgid,
  from: 'ann@remote.example',
  recipients: [{ address: `w@mail.test`, wallet: 'W1', form: 'wallet' }],
  receivedAt: 1_700_000_000_000,
  size,
  remoteIp: '192.0.2.1',
});

async function* source(bytes: Buffer, piece = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
}

async function spool(blobs: FsBlobStore | PgBlobStore, id: string, bytes: Buffer): Promise<string> {
  const draft = await blobs.receiveSpool(id, source(bytes));
  const key = draft.file
    ? await blobs.finishSpoolFile(id, draft, manifest(id, bytes.length))
    : (
        await blobs.writeSegment([
          { id, chunks: draft.chunks ?? [], size: draft.size, manifest: manifest(id, bytes.length) },
        ])
      )[0];
  await blobs.syncSpool();
  return key as string;
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('PostgreSQL blob store', () => {
  const schema = uniqueSchemaName('sealpost_blobs');
  let store: Store;
  let pgBlobs: PgBlobStore;
  beforeAll(async () => {
    store = await openStore({ url: `${TEST_PG_URL}?schema=${schema}`, dataDir: tempDir() });
    pgBlobs = new PgBlobStore(store.db);
  });
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  it('a batch is one transaction; small and multi-chunk messages round-trip byte-exact', async () => {
    const small = Buffer.from('Subject: hi\r\n\r\nsmall\r\n');
    const large = randomBytes(3 * PG_CHUNK_BYTES + 12_345);
    const keys = await pgBlobs.writeSegment([
      { id: 'm-small', chunks: [small], size: small.length, manifest: manifest('m-small', small.length) },
      {
        id: 'm-large',
        chunks: [large.subarray(0, 1000), large.subarray(1000)],
        size: large.length,
        manifest: manifest('m-large', large.length),
      },
    ]);
    expect(keys).toEqual([`spool/m-small@0+${small.length}`, `spool/m-large@0+${large.length}`]);
    const chunks = await sql<{
      n: number;
    }>`select count(*)::int as n from blob_spool_chunks where id = 'm-large'`.execute(store.db);
    expect(chunks.rows[0]?.n).toBe(4);
    expect((await pgBlobs.read(keys[0] as string)).equals(small)).toBe(true);
    expect((await pgBlobs.read(keys[1] as string)).equals(large)).toBe(true);
    const streamed: Buffer[] = [];
    for await (const c of pgBlobs.stream(keys[1] as string)) streamed.push(c as Buffer);
    expect(Buffer.concat(streamed).equals(large)).toBe(true);
    const entry = await pgBlobs.readSpoolEntry('m-large');
    expect(entry).toEqual({
      kind: 'indexed',
      id: 'm-large',
      key: keys[1],
      manifest: manifest('m-large', large.length),
    });
    const listed: string[] = [];
    for await (const b of pgBlobs.list('spool')) listed.push(b.key);
    expect(listed).toEqual(expect.arrayContaining(['spool/m-large', 'spool/m-small']));
    // A failed batch leaves nothing: the duplicate id aborts the whole transaction.
    await expect(
      pgBlobs.writeSegment([
        { id: 'm-new', chunks: [small], size: small.length, manifest: manifest('m-new', small.length) },
        { id: 'm-small', chunks: [small], size: small.length, manifest: manifest('m-small', small.length) },
      ]),
    ).rejects.toThrow();
    expect(await pgBlobs.exists('spool/m-new')).toBe(false);
    await pgBlobs.delete('spool/m-large');
    expect(await pgBlobs.exists('spool/m-large')).toBe(false);
    const left = await sql<{
      n: number;
    }>`select count(*)::int as n from blob_spool_chunks where id = 'm-large'`.execute(store.db);
    expect(left.rows[0]?.n).toBe(0);
    await expect(pgBlobs.read('spool/m-large')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a row whose manifest does not parse is corrupt: kept, marked, no longer listed', async () => {
    await pgBlobs.writeSegment([
      { id: 'm-bad', chunks: [Buffer.from('x')], size: 1, manifest: manifest('m-bad', 1) },
    ]);
    await sql`update blob_spool set manifest = '{"v":1,' where id = 'm-bad'`.execute(store.db);
    await expect(pgBlobs.readSpoolEntry('m-bad')).rejects.toBeInstanceOf(SpoolCorruptError);
    expect(await pgBlobs.moveSpoolAside('m-bad')).toBe('spool-corrupt/m-bad');
    expect(await pgBlobs.exists('spool/m-bad')).toBe(false);
    const listed: string[] = [];
    for await (const b of pgBlobs.list('spool')) listed.push(b.key);
    expect(listed).not.toContain('spool/m-bad');
    const row = await sql<{
      corrupt_at: number | null;
    }>`select corrupt_at from blob_spool where id = 'm-bad'`.execute(store.db);
    expect(row.rows[0]?.corrupt_at).toBeGreaterThan(0);
    await expect(pgBlobs.readSpoolEntry('m-bad')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('content blobs by area and sha256: idempotent, chunked, age refreshed when stored again', async () => {
    const body = randomBytes(PG_CHUNK_BYTES * 2 + 1);
    const put = await pgBlobs.putContent(body);
    expect(put).toEqual({
      key: `sha256/${sha(body).slice(0, 2)}/${sha(body)}`,
      size: body.length,
      sha256: sha(body),
    });
    await pgBlobs.touch(put.key, 1000);
    expect(await pgBlobs.mtime(put.key)).toBe(1000);
    expect(await pgBlobs.putContent(body)).toEqual(put);
    expect(await pgBlobs.mtime(put.key)).toBeGreaterThan(1000);
    expect((await pgBlobs.read(put.key)).equals(body)).toBe(true);
    const report = Buffer.from('{"report":1}');
    const rua = await pgBlobs.putContent(report, 'dmarc_rua');
    expect(rua.key.startsWith('dmarc_rua/')).toBe(true);
    const listed: string[] = [];
    for await (const b of pgBlobs.list('dmarc_rua')) listed.push(b.key);
    expect(listed).toEqual([rua.key]);
    await pgBlobs.delete(rua.key);
    expect(await pgBlobs.exists(rua.key)).toBe(false);
  });

  it('openBlobStore refuses postgres on a SQLite store; the config check names the keys', async () => {
    const sqlite = await openStore({ url: 'sqlite:s.sqlite', dataDir: tempDir() });
    try {
      expect(() =>
        openBlobStore({ blobs: { backend: 'postgres' }, store: { data_dir: '/x' } }, sqlite),
      ).toThrow(/\[store\] url/);
      expect(openBlobStore({ store: { data_dir: '/x' } }, sqlite).backend).toBe('fs');
    } finally {
      await sqlite.close();
    }
    const { parseConfig } = await import('../../src/core/config/index.ts');
    expect(() => parseConfig('[blobs]\nbackend = "postgres"\n', { source: 't.toml' })).toThrow(
      /blobs\.backend: .*store\.url/,
    );
    expect(
      parseConfig(`[blobs]\nbackend = "postgres"\n[store]\nurl = "${TEST_PG_URL}"\n`, { source: 't.toml' })
        .blobs,
    ).toEqual({ backend: 'postgres' });
  });

  it('blobs migrate fs -> postgres -> fs keeps every key, byte, manifest and age; idempotent', async () => {
    const s2 = uniqueSchemaName('sealpost_blobs');
    const st = await openStore({ url: `${TEST_PG_URL}?schema=${s2}`, dataDir: tempDir() });
    try {
      const pg = new PgBlobStore(st.db);
      const fs = new FsBlobStore(join(tempDir(), 'blobs'));
      const small = [0, 1, 2].map((i) => Buffer.from(`Subject: ${i}\r\n\r\nbody ${i}\r\n`));
      // Three small ones in one segment (offsets > 0), one large one in its own file.
      const segKeys = await fs.writeSegment(
        small.map((b, i) => ({
          id: `s${i}`,
          chunks: [b],
          size: b.length,
          manifest: manifest(`s${i}`, b.length),
        })),
      );
      await fs.syncSpool();
      const large = randomBytes(700 * 1024);
      const largeKey = await spool(fs, 'L', large);
      const body = await fs.putContent(randomBytes(5000));
      await fs.touch(body.key, 1_600_000_000_000);
      const rua = await fs.putContent(Buffer.from('{"r":2}'), 'dmarc_rua');
      const keys = [...segKeys, largeKey];
      const bytes = [...small, large];

      const there = await migrateBlobs(fs, pg);
      expect(there.spool).toMatchObject({ moved: 4, already: 0, left: 0 });
      expect(there.sha256).toMatchObject({ moved: 1, left: 0 });
      expect(there.dmarc_rua).toMatchObject({ moved: 1, left: 0 });
      expect(readdirSync(join(fs.root, 'spool'))).toEqual([]);
      for (const [i, key] of keys.entries())
        expect((await pg.read(key)).equals(bytes[i] as Buffer)).toBe(true);
      expect((await pg.readSpoolEntry('s2')).key).toBe(segKeys[2]);
      expect(await pg.mtime(body.key)).toBe(1_600_000_000_000);
      expect(await pg.exists(rua.key)).toBe(true);
      // Run again: nothing left to move.
      const again = await migrateBlobs(fs, pg);
      expect(again.spool.moved + again.sha256.moved + again.dmarc_rua.moved).toBe(0);

      const back = await migrateBlobs(pg, fs);
      expect(back.spool).toMatchObject({ moved: 4, left: 0 });
      expect(back.sha256).toMatchObject({ moved: 1, left: 0 });
      expect(back.dmarc_rua).toMatchObject({ moved: 1, left: 0 });
      for (const [i, key] of keys.entries())
        expect((await fs.read(key)).equals(bytes[i] as Buffer)).toBe(true);
      for (const id of ['s0', 's1', 's2', 'L']) {
        const e = await fs.readSpoolEntry(id);
        expect(e.kind).toBe('indexed');
        expect(e.kind === 'indexed' && e.manifest.msgid).toBe(id);
      }
      expect((await fs.readSpoolEntry('s2')).key).toBe(segKeys[2]);
      expect(await fs.mtime(body.key)).toBe(1_600_000_000_000);
      const rows = await sql<{ n: number }>`select (select count(*) from blob_spool)::int
        + (select count(*) from blob_content)::int as n`.execute(st.db);
      expect(rows.rows[0]?.n).toBe(0);
    } finally {
      await st.close();
      await dropSchema(s2);
    }
  });
});
