// pind's storage: a blockstore-fs directory of blocks plus a pin index, one
// small JSON record per pinned root.
//
//   <dataDir>/blocks/<XY>/<BASE32 MULTIHASH>.data   blockstore-fs layout (NextToLast sharding)
//   <dataDir>/pins/<xy>/<cid>.json                  pin record: root, size, leaves in order, all blocks
//
// A pin becomes visible only when its record exists, and the record is
// written last: every block is fsynced and renamed into place first, then the
// record (temp file, fsync, rename, directory fsync). A crash or an aborted
// upload leaves at most unreferenced blocks, which `gc` removes.
//
// Blocks are written here rather than through FsBlockstore.put: its writer
// uses one shared temp name per block, so two concurrent writes of the same
// block can expose a truncated file, and it does not fsync. The layout is
// blockstore-fs's own (same sharding instance); gc lists and deletes through
// FsBlockstore, reads take the block path directly (one readFile per block).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { NextToLast } from 'blockstore-fs/sharding';
import type { WritableStorage } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import { finishDurable, makeDirs, openNew, syncDir } from '../../src/core/blobs/durable-file.ts';
import { importUnixfs } from '../../src/mail/cid.ts';

export interface PinRecord {
  /** Root CID, CIDv1 base32. */
  cid: string;
  /** File size in bytes. */
  size: number;
  /** Leaf block CIDs in file order (the root itself for a single-block file). */
  leaves: string[];
  /** Every block of the DAG (root, inner nodes, leaves), each once. */
  blocks: string[];
  pinned_at: string;
}

export interface PinOutcome {
  record: PinRecord;
  /** False when the same content was already pinned. */
  created: boolean;
}

const BLOCK_EXT = '.data';

/** Writes `bytes` to `path` atomically and durably (unique temp file, fsync, rename); the caller syncs the directory. */
async function writeDurable(path: string, bytes: Uint8Array | string): Promise<void> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  await finishDurable(await openNew(tmp, 0o644), tmp, path, data);
}

export class PindStore {
  readonly blocks: FsBlockstore;
  readonly blocksDir: string;
  readonly pinsDir: string;
  private readonly sharding = new NextToLast({ extension: BLOCK_EXT });
  // Same-process writers of one block share a single write.
  private readonly inflight = new Map<string, Promise<boolean>>();
  // Same-process pins of one root share a single record write.
  private readonly recording = new Map<string, Promise<PinOutcome>>();
  private readonly now: () => Date;
  // Shard directories whose entry in their parent is known to be durable:
  // no mkdir for them again (one per pin saved each for blocks and records).
  private readonly durableDirs = new Set<string>();

  private constructor(dataDir: string, now: () => Date) {
    this.blocksDir = join(dataDir, 'blocks');
    this.pinsDir = join(dataDir, 'pins');
    this.blocks = new FsBlockstore(this.blocksDir, { shardingStrategy: this.sharding });
    this.now = now;
  }

  static async open(dataDir: string, opts: { now?: () => Date } = {}): Promise<PindStore> {
    const store = new PindStore(dataDir, opts.now ?? (() => new Date()));
    await makeDirs(store.pinsDir);
    await store.blocks.open();
    return store;
  }

  /** Path of a block file (blockstore-fs layout: keyed by multihash). */
  blockPath(cid: CID): { dir: string; file: string } {
    const { dir, file } = this.sharding.encode(cid);
    return { dir: join(this.blocksDir, dir), file: join(this.blocksDir, dir, file) };
  }

  private recordPath(cid: string): { dir: string; file: string } {
    const dir = join(this.pinsDir, cid.slice(-2));
    return { dir, file: join(dir, `${cid}.json`) };
  }

  /**
   * Stores one block durably; resolves true when this call created the file.
   * The block's directory always goes into `touched`: a block another pin
   * just renamed into place is not durable until its directory is synced.
   */
  private putBlock(cid: CID, bytes: Uint8Array, touched: Set<string>): Promise<boolean> {
    const { dir, file } = this.blockPath(cid);
    touched.add(dir);
    // A directory not yet known durable may have just been made (by this pin
    // or another on its way): its entry in the parent is synced too.
    const dirDurable = this.durableDirs.has(dir);
    if (!dirDurable) touched.add(this.blocksDir);
    const pending = this.inflight.get(file);
    if (pending) return pending.then(() => false);
    const write = (async () => {
      // Asked directly, not through the thread pool: a cached directory lookup
      // takes microseconds, a pool round trip several times that in CPU.
      if (existsSync(file)) return false;
      if (!dirDurable) await makeDirs(dir);
      try {
        await writeDurable(file, bytes);
      } catch (err) {
        if (!dirDurable || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        // The directory went away under the daemon: made again, and its parent synced.
        this.durableDirs.delete(dir);
        touched.add(this.blocksDir);
        await makeDirs(dir);
        await writeDurable(file, bytes);
      }
      return true;
    })().finally(() => this.inflight.delete(file));
    this.inflight.set(file, write);
    return write;
  }

  /**
   * Imports the bytes (given as chunks in order) and pins the root. Safe to
   * call concurrently with the same bytes: blocks are written once, the
   * record is renamed into place atomically, the first pin time is kept.
   */
  async pin(chunks: Uint8Array[], opts: { signal?: AbortSignal } = {}): Promise<PinOutcome> {
    const blocks = new Set<string>();
    const touched = new Set<string>();
    const storage: WritableStorage = {
      put: async (cid, value) => {
        if (!(value instanceof Uint8Array)) throw new Error('block must be a Uint8Array');
        await this.putBlock(cid, value, touched);
        blocks.add(cid.toString());
        return cid;
      },
    };
    const imported = await importUnixfs(chunks, storage, opts);
    // New block files are durable; make their directory entries durable too
    // before a record points at them.
    await Promise.all([...touched].map(syncDir));
    if (touched.has(this.blocksDir)) for (const dir of touched) this.durableDirs.add(dir);
    const cid = imported.cid.toString();
    const pending = this.recording.get(cid);
    if (pending) return { record: (await pending).record, created: false };
    const write = this.writeRecord({
      cid,
      size: imported.size,
      leaves: imported.leaves.map((c) => c.toString()),
      blocks: [...blocks],
      pinned_at: this.now().toISOString(),
    }).finally(() => this.recording.delete(cid));
    this.recording.set(cid, write);
    return write;
  }

  private async writeRecord(record: PinRecord): Promise<PinOutcome> {
    const { dir, file } = this.recordPath(record.cid);
    const existing = existsSync(file) ? await this.getPin(record.cid) : null;
    if (existing) return { record: existing, created: false };
    const made = async () => {
      await makeDirs(dir);
      await syncDir(this.pinsDir);
      this.durableDirs.add(dir);
    };
    const text = `${JSON.stringify(record)}\n`;
    if (!this.durableDirs.has(dir)) await made();
    try {
      await writeDurable(file, text);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // The directory went away under the daemon: made again.
      this.durableDirs.delete(dir);
      await made();
      await writeDurable(file, text);
    }
    await syncDir(dir);
    return { record, created: true };
  }

  /** The pin record of a root CID (CIDv1 base32 text), or null. */
  async getPin(cid: string): Promise<PinRecord | null> {
    let text: string;
    try {
      text = await readFile(this.recordPath(cid).file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return JSON.parse(text) as PinRecord;
  }

  /** One block's bytes, or null when the store does not hold it. */
  async getBlock(cid: CID): Promise<Uint8Array | null> {
    try {
      return await readFile(this.blockPath(cid).file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  /** The file's bytes, one leaf block at a time (memory stays at one block). */
  async *readFile(record: PinRecord): AsyncGenerator<Uint8Array> {
    for (const leaf of record.leaves) {
      const bytes = await this.getBlock(CID.parse(leaf));
      if (!bytes) throw new Error(`block ${leaf} of pinned ${record.cid} is missing from the store`);
      yield bytes;
    }
  }

  /** Every pin record. */
  async *listPins(): AsyncGenerator<PinRecord> {
    for (const shard of await readdirOrEmpty(this.pinsDir)) {
      for (const name of await readdirOrEmpty(join(this.pinsDir, shard))) {
        if (!name.endsWith('.json')) continue;
        const record = await this.getPin(name.slice(0, -'.json'.length));
        if (record) yield record;
      }
    }
  }

  /** Deletes a pin record; true when one existed. Blocks stay until gc. */
  async removePin(cid: string): Promise<boolean> {
    const { dir, file } = this.recordPath(cid);
    try {
      await unlink(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    await syncDir(dir);
    return true;
  }

  /**
   * Removes blocks no pin record references and temp files left by a crash.
   * Only safe while no daemon writes to the store (the caller checks the lock).
   */
  async gc(): Promise<{ removedBlocks: number; keptBlocks: number; removedTemp: number }> {
    const live = new Set<string>();
    for await (const record of this.listPins()) {
      for (const block of record.blocks) live.add(this.blockPath(CID.parse(block)).file);
    }
    const dead: CID[] = [];
    let keptBlocks = 0;
    for await (const { cid } of this.blocks.getAll()) {
      if (live.has(this.blockPath(cid).file)) keptBlocks++;
      else dead.push(cid);
    }
    for await (const _ of this.blocks.deleteMany(dead)) {
      // drained for its side effect
    }
    let removedTemp = 0;
    for (const root of [this.blocksDir, this.pinsDir]) {
      for (const shard of await readdirOrEmpty(root)) {
        for (const name of await readdirOrEmpty(join(root, shard))) {
          if (!name.endsWith('.tmp')) continue;
          await unlink(join(root, shard, name)).catch(() => {});
          removedTemp++;
        }
      }
    }
    return { removedBlocks: dead.length, keptBlocks, removedTemp };
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return [];
    throw err;
  }
}
