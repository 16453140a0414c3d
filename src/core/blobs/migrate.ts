// `sealpost blobs migrate --to postgres|fs`: moves every spool entry,
// sealed body (`sha256/`) and DMARC report (`dmarc_rua/`) from one blob
// backend to the other. Each blob is copied when the target lacks it, read
// back and compared, and only then removed from the source, so a run that
// stops half way is simply run again (idempotent, resumable). Keys do not
// change: a spool entry keeps the key its queued jobs name (a segment file's
// `@<offset>+<length>` included), content blobs keep their sha256 and their
// age (the orphan sweep's rule). Spool entries that cannot be read (corrupt)
// stay where they are and are counted; `spool-corrupt/` is not moved.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore, ContentArea, FsBlobStore } from './blob-store.ts';
import { syncDir } from './durable-file.ts';
import type { ImportedSpoolEntry, PgBlobStore } from './pg-blob-store.ts';
import { encodeSpoolIndex } from './spool-manifest.ts';

export interface AreaCounts {
  /** Copied to the target (and removed from the source). */
  moved: number;
  /** Already in the target (an earlier run): only removed from the source. */
  already: number;
  /** Left in the source: unreadable (spool entries that are corrupt) or failed. */
  left: number;
  bytes: number;
}

export interface MigrateSummary {
  from: 'fs' | 'postgres';
  to: 'fs' | 'postgres';
  spool: AreaCounts;
  sha256: AreaCounts;
  dmarc_rua: AreaCounts;
}

export interface MigrateOptions {
  /** Keep the source's copies (default: removed once the target holds them). */
  keepSource?: boolean;
  /** Called per blob that is left, with the reason. */
  onLeft?: (key: string, reason: string) => void;
}

const isTemp = (key: string) => key.slice(key.lastIndexOf('/') + 1).startsWith('.tmp-');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const counts = (): AreaCounts => ({ moved: 0, already: 0, left: 0, bytes: 0 });

export async function migrateBlobs(
  from: BlobStore,
  to: BlobStore,
  opts: MigrateOptions = {},
): Promise<MigrateSummary> {
  if (from.backend === to.backend) throw new Error(`the blobs are already on ${to.backend}`);
  const summary: MigrateSummary = {
    from: from.backend,
    to: to.backend,
    spool: counts(),
    sha256: counts(),
    dmarc_rua: counts(),
  };
  const left = (c: AreaCounts, key: string, reason: string) => {
    c.left++;
    opts.onLeft?.(key, reason);
  };

  // Spool entries first: they are the durable truth of acknowledged mail.
  const names: { key: string; mtimeMs: number }[] = [];
  for await (const b of from.list('spool')) if (!isTemp(b.key)) names.push(b);
  for (const b of names) {
    const c = summary.spool;
    const id = b.key.slice('spool/'.length);
    try {
      const entry = await from.readSpoolEntry(id);
      const bytes = await from.read(entry.key);
      if (await to.exists(b.key)) c.already++;
      else {
        const imported: ImportedSpoolEntry = {
          id,
          key: entry.key,
          bytes,
          manifest: entry.kind === 'indexed' ? entry.manifest : null,
          createdAt: Math.floor(b.mtimeMs),
        };
        if (to.backend === 'postgres') await (to as PgBlobStore).importSpool([imported]);
        else await writeFsSpoolEntry(to as FsBlobStore, imported);
        c.moved++;
        c.bytes += bytes.length;
      }
      const copy = await to.read(entry.key);
      if (sha(copy) !== sha(bytes)) throw new Error('the copy differs from the source');
      if (!opts.keepSource) await from.delete(b.key);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      left(c, b.key, (err as Error).message);
    }
  }

  for (const area of ['sha256', 'dmarc_rua'] as ContentArea[]) {
    const c = summary[area];
    for await (const b of from.list(area)) {
      if (isTemp(b.key)) continue;
      try {
        const bytes = await from.read(b.key);
        if (`${area}/${sha(bytes).slice(0, 2)}/${sha(bytes)}` !== b.key)
          throw new Error('its bytes do not match its sha256');
        if (await to.exists(b.key)) c.already++;
        else {
          await to.putContent(bytes, area);
          c.moved++;
          c.bytes += bytes.length;
        }
        // The age the orphan sweep goes by.
        await to.touch(b.key, Math.floor(b.mtimeMs));
        if (!opts.keepSource) await from.delete(b.key);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        left(c, b.key, (err as Error).message);
      }
    }
  }
  return summary;
}

/**
 * Writes an entry as a spool file of its own under the key it has: its bytes
 * at the key's offset (a hole before them when it came from a segment), its
 * index of one after them, fsynced and renamed, the directory fsynced.
 */
export async function writeFsSpoolEntry(fs: FsBlobStore, e: ImportedSpoolEntry): Promise<void> {
  const dir = join(fs.root, 'spool');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const m = /@([0-9]+)\+([0-9]+)$/.exec(e.key);
  const offset = m ? Number(m[1]) : 0;
  if (m && Number(m[2]) !== e.bytes.length) throw new Error(`${e.key} does not name ${e.bytes.length} bytes`);
  if (e.manifest && !m) throw new Error(`${e.key} has a manifest but names no range`);
  const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.write(e.bytes, 0, e.bytes.length, offset);
    if (e.manifest) {
      const index = encodeSpoolIndex([{ id: e.id, offset, length: e.bytes.length, manifest: e.manifest }]);
      await fh.write(index, 0, index.length, offset + e.bytes.length);
    }
    await fh.datasync();
    await fh.close();
    const at = new Date(e.createdAt);
    await utimes(tmp, at, at);
    await rename(tmp, join(dir, e.id));
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}
