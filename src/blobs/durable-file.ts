// Durable file writes on plain descriptors with the callback API, shared by
// the blob store and pind: a write is about ten file system calls, and the
// promise API's FileHandle objects (and their close tracking) cost more CPU
// per call than the calls themselves.
import {
  close as closeCallback,
  fsync as fsyncCallback,
  open as openCallback,
  rename as renameCallback,
  unlink as unlinkCallback,
  write as writeCallback,
} from 'node:fs';
import { promisify } from 'node:util';

const openAsync = promisify(openCallback);
const writeAsync = promisify(writeCallback);
const fsyncAsync = promisify(fsyncCallback);
const closeAsync = promisify(closeCallback);
const renameAsync = promisify(renameCallback);
const unlinkAsync = promisify(unlinkCallback);

/** Opens `tmp` for a new file (it must not exist) with `mode`. */
export function openNew(tmp: string, mode: number): Promise<number> {
  return openAsync(tmp, 'wx', mode);
}

/**
 * Writes `bytes` into the open temp file `fd`, fsyncs and closes it, and
 * renames it to `path`. On a failure the temp file is closed and removed
 * (a failed write leaves nothing). The caller fsyncs the directory.
 */
export async function finishDurable(fd: number, tmp: string, path: string, bytes: Uint8Array): Promise<void> {
  try {
    for (let done = 0; done < bytes.byteLength; ) {
      done += (await writeAsync(fd, bytes, done, bytes.byteLength - done)).bytesWritten;
    }
    await fsyncAsync(fd);
  } catch (err) {
    await closeAsync(fd).catch(() => {});
    await unlinkAsync(tmp).catch(() => {});
    throw err;
  }
  await closeAsync(fd);
  await renameAsync(tmp, path);
}

/** fsyncs a directory, making the names created or renamed in it durable. */
export async function syncDir(dir: string): Promise<void> {
  const fd = await openAsync(dir, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    await closeAsync(fd);
  }
}
