// Filesystem blob store under the data directory. Two areas:
//  - `spool/<id>`: raw inbound messages between the SMTP 250 and sealing;
//    named by message id, deleted when every recipient's job is done.
//  - `sha256/<aa>/<hex>`: content-addressed sealed bodies kept for IMAP/POP
//    and no_ipfs mail; the key is the blob's identity, so writes are idempotent.
//  - `dmarc_rua/<aa>/<hex>`: ingested DMARC aggregate reports as JSON, also
//    content-addressed (putContent(bytes, 'dmarc_rua')).
// Every write goes to a temp file, is fsynced, renamed into place and the
// directory fsynced, so a crash leaves either the whole blob or nothing.
// Spool writes (writeSpool) leave the directory fsync to the caller, so that
// one fsync of `spool/` covers every message renamed before it (the MX's
// group commit, src/smtp/group-commit.ts).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  utimes,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';

const KEY_RE = /^((sha256|dmarc_rua)\/[0-9a-f]{2}\/[0-9a-f]{64}|spool\/[0-9A-Za-z._-]{1,80})$/;

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

/** A spool file written and fsynced, its name not yet (BlobStore.syncSpool makes it durable). */
export interface SpoolWrite {
  key: string;
  size: number;
  /** The message's bytes: from memory when it was small enough to keep, else read back from the file. */
  bytes(): Promise<Buffer>;
}

/** Chunks are gathered up to this many bytes and written with one writev. */
const SPOOL_WRITE_BYTES = 256 * 1024;
/** Messages up to this size are also kept in memory for `SpoolWrite.bytes` (DKIM reads them once). */
const SPOOL_KEEP_BYTES = 1024 * 1024;

export class BlobStore {
  /** Set once `spool/` is known to exist, so a spool write does not ask again. */
  private spoolDirMade = false;

  constructor(readonly root: string) {}

  private path(key: string): string {
    if (!KEY_RE.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return join(this.root, key);
  }

  /** Streams `source` into `spool/<id>`; throws BlobTooLargeError (and leaves nothing) past `maxBytes`. */
  async putSpool(
    id: string,
    source: AsyncIterable<Uint8Array>,
    maxBytes = Number.POSITIVE_INFINITY,
  ): Promise<PutResult> {
    return this.writeAtomic(`spool/${id}`, source, maxBytes);
  }

  /**
   * Streams `source` into `spool/<id>`: a temp file, written in few large
   * writes, fdatasynced and renamed into place. The rename is durable only
   * after `syncSpool()`, which the caller runs once for many writes. Throws
   * BlobTooLargeError (and leaves nothing) past `maxBytes`.
   */
  async writeSpool(
    id: string,
    source: AsyncIterable<Uint8Array>,
    maxBytes = Number.POSITIVE_INFINITY,
  ): Promise<SpoolWrite> {
    const key = `spool/${id}`;
    const final = this.path(key);
    const dir = dirname(final);
    const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
    const fh = await this.openSpoolTemp(dir, tmp);
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
        if (pendingBytes >= SPOOL_WRITE_BYTES) {
          await fh.writev(pending);
          pending = [];
          pendingBytes = 0;
        }
      }
      if (pending.length) await fh.writev(pending);
      await fh.datasync();
    } catch (err) {
      await fh.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw err;
    }
    await fh.close();
    await rename(tmp, final);
    const held = kept;
    return {
      key,
      size,
      bytes: () => (held ? Promise.resolve(Buffer.concat(held, size)) : readFile(final)),
    };
  }

  /** Makes every spool rename done before it durable (one fsync of `spool/`). */
  async syncSpool(): Promise<void> {
    await fsyncDir(join(this.root, 'spool'));
  }

  private async openSpoolTemp(dir: string, tmp: string): Promise<FileHandle> {
    if (!this.spoolDirMade) {
      await mkdir(dir, { recursive: true });
      this.spoolDirMade = true;
    }
    try {
      return await open(tmp, 'wx', 0o600);
    } catch (err) {
      // The directory was removed under us: make it again, once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(dir, { recursive: true });
      return open(tmp, 'wx', 0o600);
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
    return this.writeAtomic(key, [bytes], Number.POSITIVE_INFINITY);
  }

  /**
   * Every blob of an area (`spool`, `sha256`) with its size and modification
   * time, a directory at a time; temp files of unfinished writes are included
   * under their own names (`.tmp-…`), so a sweep can also remove stale ones.
   */
  async *list(area: 'spool' | 'sha256'): AsyncGenerator<{ key: string; size: number; mtimeMs: number }> {
    const top = join(this.root, area);
    const dirs = area === 'spool' ? [''] : await readdir(top).catch(() => [] as string[]);
    for (const sub of dirs) {
      if (area === 'sha256' && !/^[0-9a-f]{2}$/.test(sub)) continue;
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
    try {
      await stat(this.path(key));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
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

  read(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  stream(key: string): Readable {
    return createReadStream(this.path(key));
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  private async writeAtomic(
    key: string,
    source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
    maxBytes: number,
  ): Promise<PutResult> {
    const final = this.path(key);
    const dir = dirname(final);
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
    const hash = createHash('sha256');
    const fh = await open(tmp, 'wx', 0o600);
    let size = 0;
    try {
      for await (const chunk of source) {
        size += chunk.length;
        if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
        hash.update(chunk);
        await fh.write(chunk);
      }
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw err;
    }
    await fh.close();
    await rename(tmp, final);
    await fsyncDir(dir);
    return { key, size, sha256: hash.digest('hex') };
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
