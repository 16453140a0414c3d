// Durable file writes on plain descriptors, shared by the blob store and
// pind. Two calls go through the thread pool: the fsyncs (milliseconds of
// waiting on the disk) and the creation of a file (a new inode and name,
// the one call that showed long waits for the file system's journal while
// other processes fsync). The others (a write into the page cache, close,
// rename, link, unlink, opening a directory) take microseconds and are made
// directly: through the thread pool each cost several times its own work in
// CPU, and a durable write is about ten calls. A write larger than
// SYNC_WRITE_BYTES still goes through the pool, so a large pin does not
// hold the event loop while it is copied.
import {
  closeSync,
  fdatasync as fdatasyncCallback,
  fsync as fsyncCallback,
  open as openCallback,
  openSync,
  renameSync,
  unlinkSync,
  write as writeCallback,
  writeSync,
  writev as writevCallback,
  writevSync,
} from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const openAsync = promisify(openCallback);
const writeAsync = promisify(writeCallback);
const fsyncAsync = promisify(fsyncCallback);
const fdatasyncAsync = promisify(fdatasyncCallback);
const writevAsync = promisify(writevCallback);

/** Writes up to this many bytes synchronously; larger ones go through the thread pool. */
const SYNC_WRITE_BYTES = 512 * 1024;

/**
 * Opens `tmp` for a new file (it must not exist) with `mode`. Through the
 * thread pool: creating a file in a directory that other processes fsync can
 * wait for the file system's journal, which must not hold the event loop.
 */
export function openNew(tmp: string, mode: number): Promise<number> {
  return openAsync(tmp, 'wx', mode);
}

/** Closes and removes a temp file whose write failed (errors ignored: the orphan sweeps remove leftovers). */
export function discardTemp(fd: number, tmp: string): void {
  try {
    closeSync(fd);
  } catch {}
  try {
    unlinkSync(tmp);
  } catch {}
}

/**
 * Writes `bytes` into the open temp file `fd`, fsyncs and closes it, and
 * renames it to `path`. On a failure the temp file is closed and removed
 * (a failed write leaves nothing). The caller fsyncs the directory.
 */
export async function finishDurable(fd: number, tmp: string, path: string, bytes: Uint8Array): Promise<void> {
  try {
    const n = bytes.byteLength;
    if (n <= SYNC_WRITE_BYTES) {
      for (let done = 0; done < n; ) done += writeSync(fd, bytes, done, n - done);
    } else {
      for (let done = 0; done < n; ) done += (await writeAsync(fd, bytes, done, n - done)).bytesWritten;
    }
    await fsyncAsync(fd);
  } catch (err) {
    discardTemp(fd, tmp);
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

/** Writes `chunks` (`total` bytes) at the file position of `fd` with one writev. */
export async function writeChunks(fd: number, chunks: Uint8Array[], total: number): Promise<void> {
  if (chunks.length === 0) return;
  // libuv splits past IOV_MAX and retries short writes itself.
  const written =
    total <= SYNC_WRITE_BYTES ? writevSync(fd, chunks) : (await writevAsync(fd, chunks)).bytesWritten;
  if (written !== total) throw new Error(`short write: ${written} of ${total} bytes`);
}

/**
 * Writes `chunks` (`total` bytes) into the open temp file `fd` with one
 * writev, fdatasyncs and closes it; on a failure the file is closed and
 * removed. The caller names it (links or renames) and fsyncs the directory.
 */
export async function writeDurableTemp(
  fd: number,
  tmp: string,
  chunks: Uint8Array[],
  total: number,
): Promise<void> {
  try {
    await writeChunks(fd, chunks, total);
    await fdatasyncAsync(fd);
  } catch (err) {
    discardTemp(fd, tmp);
    throw err;
  }
  closeSync(fd);
}

/** fsyncs a directory, making the names created or renamed in it durable. */
export async function syncDir(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * `mkdir -p`, resolving like `mkdir(dir, { recursive: true })` to the first
 * directory it made (undefined when all existed), but failing with the real
 * error: Node's recursive mkdir reports ENOENT for a directory it could not
 * make for another reason (ENOSPC on a full disk, EDQUOT, EROFS), so on
 * ENOENT each missing level is made one by one, and the first refusal is
 * what the caller sees.
 */
export async function makeDirs(dir: string): Promise<string | undefined> {
  try {
    return await mkdir(dir, { recursive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const missing: string[] = [];
    for (let at = dir; ; at = dirname(at)) {
      try {
        await stat(at);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        missing.unshift(at);
      }
      if (dirname(at) === at) break;
    }
    for (const at of missing) {
      try {
        await mkdir(at);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    return missing[0];
  }
}
