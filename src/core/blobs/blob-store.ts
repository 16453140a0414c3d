// Filesystem blob store under the data directory. Two areas:
//  - `spool/<id>`: raw inbound messages between the SMTP 250 and sealing;
//    named by message id, deleted when every recipient's job is done.
//  - `sha256/<aa>/<hex>`: content-addressed sealed bodies kept for IMAP/POP
//    and no_ipfs mail; the key is the blob's identity, so writes are idempotent.
//  - `dmarc_rua/<aa>/<hex>`: ingested DMARC aggregate reports as JSON, also
//    content-addressed (putContent(bytes, 'dmarc_rua')).
// Every write goes to a temp file, is fsynced, renamed into place and the
// directory fsynced, so a crash leaves either the whole blob or nothing.
// Spool writes leave the directory fsync to the caller, so that one fsync of
// `spool/` covers every name made before it (the MX's group commit,
// delivery/intake/group-commit.ts). A small message is not written on its own: the
// messages committed together are written into one segment file with one
// fdatasync, and each gets its own hard link to it as `spool/<id>`; its key
// then names its bytes in the file, `spool/<id>@<offset>+<length>`. Deleting
// a key removes that name; the segment's space is freed with its last name.
// Every spool file ends with an index (./spool-manifest.ts): per message its
// id, range and the manifest its delivery jobs are rebuilt from, written in
// the same writev and fdatasync as the bytes; a large message's own file
// carries an index of one, and its key names its range too. Files written
// before the index existed are read as before (whole-file keys).
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  linkSync,
  openSync,
  readFile as readFileCallback,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlink as unlinkCallback,
  unlinkSync,
} from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import {
  discardTemp,
  finishDurable,
  makeDirs,
  openNew,
  syncDir,
  writeChunks,
  writeDurableTemp,
} from './durable-file.ts';
import {
  decodeSpoolIndex,
  encodeSpoolIndex,
  SPOOL_TRAILER_BYTES,
  SpoolCorruptError,
  type SpoolIndexEntry,
  type SpoolManifest,
  trailerIndexLength,
} from './spool-manifest.ts';

const readFileAsync = promisify(readFileCallback);
const unlinkAsync = promisify(unlinkCallback);

const KEY_RE =
  /^((sha256|dmarc_rua)\/[0-9a-f]{2}\/[0-9a-f]{64}|spool\/[0-9A-Za-z._-]{1,80}(@[0-9]{1,15}\+[0-9]{1,15})?)$/;

/** Content-addressed areas: sealed bodies (`sha256`) and ingested DMARC reports (`dmarc_rua`). */
export type ContentArea = 'sha256' | 'dmarc_rua';

export class BlobTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`blob exceeds ${limit} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

export interface PutResult {
  key: string;
  size: number;
  sha256: string;
}

/**
 * A message received for the spool. Past SPOOL_SEGMENT_MESSAGE_BYTES it has
 * its own temp file (`file`, written but not yet fsynced: BlobStore.finishSpoolFile
 * appends its index, fdatasyncs and names it); below, its `chunks` wait in
 * memory for BlobStore.writeSegment. Either way the name is durable only
 * after BlobStore.syncSpool. `key` is set once the message has its name.
 */
export interface SpoolDraft {
  size: number;
  key?: string;
  chunks?: Uint8Array[];
  /** The temp file of a large message until finishSpoolFile names it. */
  file?: { fd: number; tmp: string };
  /** The message's bytes: from memory when it was small enough to keep, else read back from the file. */
  bytes(): Promise<Buffer>;
  /** Drops what was written (a temp file, or the name once made); idempotent. */
  discard(): Promise<void>;
}

/** A spool entry as its name reads (BlobStore.readSpoolEntry). */
export type SpoolEntry =
  | { kind: 'indexed'; id: string; key: string; manifest: SpoolManifest }
  /** Written before the index existed (or not ours): the whole file is the message. */
  | { kind: 'unindexed'; id: string; key: string };

/** Messages up to this size are written with others into one segment file. */
export const SPOOL_SEGMENT_MESSAGE_BYTES = 128 * 1024;
/** Chunks are gathered up to this many bytes and written with one writev. */
const SPOOL_WRITE_BYTES = 256 * 1024;
/** Messages up to this size are also kept in memory for `SpoolDraft.bytes` (DKIM reads them once). */
const SPOOL_KEEP_BYTES = 1024 * 1024;
const RANGE_RE = /@([0-9]+)\+([0-9]+)$/;
/** Blobs and segment ranges up to this size are read synchronously (see read). */
const SYNC_READ_BYTES = 256 * 1024;

/** Which backend holds the blobs: `[blobs] backend`. */
export type BlobBackend = 'fs' | 'postgres';

/**
 * What callers use of a blob store; the filesystem (FsBlobStore, the
 * embedded default) and PostgreSQL (./pg-blob-store.ts) implement it.
 * Keys are the same on both: `spool/<id>[@<offset>+<length>]`,
 * `sha256/<aa>/<hex>`, `dmarc_rua/<aa>/<hex>`.
 */
export interface BlobStore {
  readonly backend: BlobBackend;
  receiveSpool(id: string, source: AsyncIterable<Uint8Array>, maxBytes?: number): Promise<SpoolDraft>;
  finishSpoolFile(id: string, draft: SpoolDraft, manifest?: SpoolManifest): Promise<string>;
  writeSegment(
    messages: { id: string; chunks: Uint8Array[]; size: number; manifest?: SpoolManifest }[],
  ): Promise<string[]>;
  readSpoolEntry(id: string): Promise<SpoolEntry>;
  moveSpoolAside(id: string): Promise<string>;
  syncSpool(): Promise<void>;
  putContent(bytes: Uint8Array, area?: ContentArea): Promise<PutResult>;
  list(area: 'spool' | ContentArea): AsyncGenerator<{ key: string; size: number; mtimeMs: number }>;
  deleteTemp(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  mtime(key: string): Promise<number | null>;
  /** Sets a blob's modification time (blobs migrate keeps the ages the orphan sweep goes by). */
  touch(key: string, mtimeMs: number): Promise<void>;
  read(key: string): Promise<Buffer>;
  stream(key: string): Readable;
  delete(key: string): Promise<void>;
}

/** The filesystem blob store under `<data_dir>/blobs` (see the top of this file). */
export class FsBlobStore implements BlobStore {
  readonly backend = 'fs' as const;
  /** Set once `spool/` is known to exist, so a spool write does not ask again. */
  private spoolDirMade = false;
  /** Content shard directories known to exist with a durable entry: no mkdir for them again. */
  private readonly contentDirs = new Set<string>();

  constructor(readonly root: string) {}

  private path(key: string): string {
    if (!KEY_RE.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    const at = key.indexOf('@');
    return join(this.root, at < 0 ? key : key.slice(0, at));
  }

  /** The bytes a segment key names in its file (`…@<offset>+<length>`); undefined for a whole file. */
  private range(key: string): { start: number; length: number } | undefined {
    const m = RANGE_RE.exec(key);
    return m ? { start: Number(m[1]), length: Number(m[2]) } : undefined;
  }

  /**
   * Receives `source` for `spool/<id>`: a message up to
   * SPOOL_SEGMENT_MESSAGE_BYTES stays in memory (for writeSegment); a larger
   * one goes to a temp file in few large writes, fdatasynced and renamed into
   * place. Throws BlobTooLargeError (and leaves nothing) past `maxBytes`.
   */
  async receiveSpool(
    id: string,
    source: AsyncIterable<Uint8Array>,
    maxBytes = Number.POSITIVE_INFINITY,
  ): Promise<SpoolDraft> {
    const key = `spool/${id}`;
    const final = this.path(key);
    const dir = dirname(final);
    let file: { fd: number; tmp: string } | undefined;
    let kept: Uint8Array[] | null = [];
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    let size = 0;
    try {
      for await (const chunk of source) {
        size += chunk.length;
        if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (kept) {
          if (size <= SPOOL_KEEP_BYTES) kept.push(chunk);
          else kept = null;
        }
        if (!file && size > SPOOL_SEGMENT_MESSAGE_BYTES) {
          const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
          file = { fd: await this.openSpoolFd(dir, tmp), tmp };
        }
        if (file && pendingBytes >= SPOOL_WRITE_BYTES) {
          await writeChunks(file.fd, pending, pendingBytes);
          pending = [];
          pendingBytes = 0;
        }
      }
    } catch (err) {
      if (file) discardTemp(file.fd, file.tmp);
      throw err;
    }
    if (!file) {
      const chunks = pending;
      return { size, chunks, bytes: async () => Buffer.concat(chunks, size), discard: async () => {} };
    }
    // The rest into the temp file; its index, fdatasync and name come with its batch (finishSpoolFile).
    try {
      await writeChunks(file.fd, pending, pendingBytes);
    } catch (err) {
      discardTemp(file.fd, file.tmp);
      throw err;
    }
    const held = kept;
    const draft: SpoolDraft = {
      size,
      file,
      bytes: () =>
        held
          ? Promise.resolve(Buffer.concat(held, size))
          : this.readPathRange(draft.file ? draft.file.tmp : final, { start: 0, length: size }, key),
      discard: async () => {
        if (draft.file) {
          discardTemp(draft.file.fd, draft.file.tmp);
          draft.file = undefined;
        } else if (draft.key) await this.delete(draft.key);
      },
    };
    return draft;
  }

  /**
   * Names a large message's temp file (receiveSpool) as `spool/<id>`: its
   * index of one (when a manifest is given) appended, fdatasynced, closed and
   * renamed; returns its key (`spool/<id>@0+<size>`). Durable after
   * syncSpool. On failure the temp file is removed.
   */
  async finishSpoolFile(id: string, draft: SpoolDraft, manifest?: SpoolManifest): Promise<string> {
    const file = draft.file;
    if (!file) throw new Error(`spool draft ${id} has no file to finish`);
    const index = manifest ? [encodeSpoolIndex([{ id, offset: 0, length: draft.size, manifest }])] : [];
    // From here the temp file is this call's: a failure below removes it (and never closes its fd twice).
    draft.file = undefined;
    await writeDurableTemp(file.fd, file.tmp, index, index[0]?.length ?? 0);
    const key = manifest ? `spool/${id}@0+${draft.size}` : `spool/${id}`;
    try {
      renameSync(file.tmp, this.path(key));
    } catch (err) {
      rmSync(file.tmp, { force: true });
      throw err;
    }
    draft.key = key;
    return key;
  }

  /**
   * Writes the messages into one new segment file (one writev, one
   * fdatasync) and links it as `spool/<id>` for each; returns their keys, in
   * order. The links are durable after syncSpool. On failure nothing is left.
   */
  async writeSegment(
    messages: { id: string; chunks: Uint8Array[]; size: number; manifest?: SpoolManifest }[],
  ): Promise<string[]> {
    const dir = join(this.root, 'spool');
    const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
    const names = messages.map((m) => this.path(`spool/${m.id}`));
    let total = messages.reduce((sum, m) => sum + m.size, 0);
    const chunks = messages.flatMap((m) => m.chunks);
    // The index of the segment (every message has a manifest: the MX's), in the same write.
    if (messages.length > 0 && messages.every((m) => m.manifest)) {
      let at = 0;
      const entries: SpoolIndexEntry[] = messages.map((m) => {
        const e = { id: m.id, offset: at, length: m.size, manifest: m.manifest as SpoolManifest };
        at += m.size;
        return e;
      });
      const index = encodeSpoolIndex(entries);
      chunks.push(index);
      total += index.length;
    }
    await writeDurableTemp(await this.openSpoolFd(dir, tmp), tmp, chunks, total);
    // One name per message, made synchronously: a link is a few microseconds
    // of directory work, and through the thread pool it costs several times
    // that in CPU for every message of every batch.
    const made: string[] = [];
    try {
      for (const name of names) {
        linkSync(tmp, name);
        made.push(name);
      }
    } catch (err) {
      for (const name of made) rmSync(name, { force: true });
      throw err;
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        // Left behind, it is an orphan the spool sweep removes.
      }
    }
    let offset = 0;
    return messages.map((m) => {
      const key = `spool/${m.id}@${offset}+${m.size}`;
      offset += m.size;
      return key;
    });
  }

  /**
   * What the name `spool/<id>` holds: its message's key and manifest from
   * the file's index, or `unindexed` for a file without one (written before
   * the index existed). Throws SpoolCorruptError for a file that has an index
   * but cannot be read as one (truncated, damaged, not naming <id>), and the
   * filesystem's error (ENOENT) when the name is gone.
   */
  async readSpoolEntry(id: string): Promise<SpoolEntry> {
    const key = `spool/${id}`;
    const fh = await open(this.path(key), 'r');
    try {
      const { size } = await fh.stat();
      if (size < SPOOL_TRAILER_BYTES) return { kind: 'unindexed', id, key };
      const tail = Buffer.alloc(SPOOL_TRAILER_BYTES);
      await fh.read(tail, 0, SPOOL_TRAILER_BYTES, size - SPOOL_TRAILER_BYTES);
      const length = trailerIndexLength(tail, size);
      if (length === null) return { kind: 'unindexed', id, key };
      const json = Buffer.alloc(length);
      const { bytesRead } = await fh.read(json, 0, length, size - SPOOL_TRAILER_BYTES - length);
      if (bytesRead !== length) throw new SpoolCorruptError('the index is shorter than its length');
      const entry = decodeSpoolIndex(json, size).find((e) => e.id === id);
      if (!entry) throw new SpoolCorruptError(`the index does not list ${id}`);
      if (entry.manifest.msgid !== id)
        throw new SpoolCorruptError(`the manifest of ${id} names another message`);
      return { kind: 'indexed', id, key: `${key}@${entry.offset}+${entry.length}`, manifest: entry.manifest };
    } finally {
      await fh.close();
    }
  }

  /**
   * Moves the name `spool/<id>` aside to `spool-corrupt/<id>` (a numbered
   * name when that is taken), durably; nothing is deleted. Returns the new key.
   */
  async moveSpoolAside(id: string): Promise<string> {
    if (!/^[0-9A-Za-z._-]{1,80}$/.test(id)) throw new Error(`invalid spool id ${JSON.stringify(id)}`);
    const dir = join(this.root, 'spool-corrupt');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let name = id;
    for (let n = 1; statSync(join(dir, name), { throwIfNoEntry: false }); n++) name = `${id}.${n}`;
    await rename(join(this.root, 'spool', id), join(dir, name));
    await syncDir(dir);
    await syncDir(join(this.root, 'spool'));
    return `spool-corrupt/${name}`;
  }

  /** Makes every spool name made before it durable (one fsync of `spool/`). */
  async syncSpool(): Promise<void> {
    await syncDir(join(this.root, 'spool'));
  }

  /** A new spool temp file, making `spool/` first (once) and again if it was removed. */
  private async openSpoolFd(dir: string, tmp: string): Promise<number> {
    if (!this.spoolDirMade) {
      await makeDirs(dir);
      this.spoolDirMade = true;
    }
    try {
      return await openNew(tmp, 0o600);
    } catch (err) {
      // The directory was removed under us: make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await makeDirs(dir);
      return await openNew(tmp, 0o600);
    }
  }

  /** Stores bytes under their sha256; storing the same bytes again is a no-op. */
  async putContent(bytes: Uint8Array, area: ContentArea = 'sha256'): Promise<PutResult> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const key = `${area}/${sha256.slice(0, 2)}/${sha256}`;
    if (await this.exists(key)) {
      // A new reference to old bytes: it counts as new for the orphan sweep's age rule.
      const at = new Date();
      await utimes(this.path(key), at, at).catch(() => {});
      return { key, size: bytes.length, sha256 };
    }
    return this.writeContent(key, bytes, sha256);
  }

  /**
   * Every blob of an area (`spool`, `sha256`) with its size and modification
   * time, a directory at a time; temp files of unfinished writes are included
   * under their own names (`.tmp-…`), so a sweep can also remove stale ones.
   */
  async *list(area: 'spool' | ContentArea): AsyncGenerator<{ key: string; size: number; mtimeMs: number }> {
    const top = join(this.root, area);
    const dirs = area === 'spool' ? [''] : await readdir(top).catch(() => [] as string[]);
    for (const sub of dirs) {
      if (area !== 'spool' && !/^[0-9a-f]{2}$/.test(sub)) continue;
      const dir = sub ? join(top, sub) : top;
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        const st = await stat(join(dir, name)).catch(() => null);
        if (!st?.isFile()) continue;
        yield { key: sub ? `${area}/${sub}/${name}` : `${area}/${name}`, size: st.size, mtimeMs: st.mtimeMs };
      }
    }
  }

  /** Removes a leftover temp file that `list` reported (never a blob). */
  async deleteTemp(key: string): Promise<void> {
    const name = key.slice(key.lastIndexOf('/') + 1);
    if (!name.startsWith('.tmp-') || key.includes('..')) throw new Error(`not a temp file: ${key}`);
    await rm(join(this.root, key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    // A path lookup (no journal, no data): cheaper made at once than through the thread pool.
    return statSync(this.path(key), { throwIfNoEntry: false }) !== undefined;
  }

  /** Last modification time (Unix ms), or null when the blob is absent. */
  async mtime(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async touch(key: string, mtimeMs: number): Promise<void> {
    const at = new Date(mtimeMs);
    await utimes(this.path(key), at, at);
  }

  async read(key: string): Promise<Buffer> {
    const range = this.range(key);
    // A blob is mostly read moments after it was written, from the page
    // cache: a small one is read at once (four thread-pool hops cost more
    // CPU than the read), a large one through the thread pool (the callback
    // readFile: the promise one reads in several passes).
    if (!range) {
      const path = this.path(key);
      const size = statSync(path).size;
      return size <= SYNC_READ_BYTES ? readFileSync(path) : readFileAsync(path);
    }
    return this.readPathRange(this.path(key), range, key);
  }

  /** `range` of the file at `path` (synchronously when small, see read). */
  private async readPathRange(
    path: string,
    range: { start: number; length: number },
    key: string,
  ): Promise<Buffer> {
    if (range.length <= SYNC_READ_BYTES) return readRangeSync(path, range, key);
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.allocUnsafe(range.length);
      let got = 0;
      while (got < range.length) {
        const { bytesRead } = await fh.read(buf, got, range.length - got, range.start + got);
        if (bytesRead === 0) throw new Error(`blob ${key} is shorter than its range`);
        got += bytesRead;
      }
      return buf;
    } finally {
      await fh.close();
    }
  }

  stream(key: string): Readable {
    const range = this.range(key);
    if (range?.length === 0) return Readable.from([]);
    return createReadStream(
      this.path(key),
      range ? { start: range.start, end: range.start + range.length - 1 } : undefined,
    );
  }

  /** Removes a blob; an absent one is no error. */
  async delete(key: string): Promise<void> {
    // unlink, not rm: rm first lstats the path to decide how to remove it.
    await unlinkAsync(this.path(key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** Writes a content blob: temp file, fsync, rename, directory fsync (a crash leaves all or nothing). */
  private async writeContent(key: string, bytes: Uint8Array, sha256: string): Promise<PutResult> {
    const final = this.path(key);
    const dir = dirname(final);
    if (!this.contentDirs.has(dir)) await this.makeContentDir(dir);
    const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
    let fd: number;
    try {
      fd = await openNew(tmp, 0o600);
    } catch (err) {
      // The directory was removed under us: make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.contentDirs.delete(dir);
      await this.makeContentDir(dir);
      fd = await openNew(tmp, 0o600);
    }
    await finishDurable(fd, tmp, final, bytes);
    await syncDir(dir);
    return { key, size: bytes.byteLength, sha256 };
  }

  /** Makes a shard directory; the entries of the directories it made are fsynced in their parents. */
  private async makeContentDir(dir: string): Promise<void> {
    const first = await makeDirs(dir);
    if (first) {
      for (let at = dir; at !== dirname(first); ) {
        at = dirname(at);
        await syncDir(at);
      }
    }
    this.contentDirs.add(dir);
  }
}

/** The filesystem store under its old name: `new BlobStore(dir)` is the filesystem one. */
export const BlobStore = FsBlobStore;

function readRangeSync(path: string, range: { start: number; length: number }, key: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(range.length);
    for (let got = 0; got < range.length; ) {
      const n = readSync(fd, buf, got, range.length - got, range.start + got);
      if (n === 0) throw new Error(`blob ${key} is shorter than its range`);
      got += n;
    }
    return buf;
  } finally {
    closeSync(fd);
  }
}
