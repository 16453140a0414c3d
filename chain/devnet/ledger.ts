// Devnet's durable state under <dataDir>/devnet:
//   ledger.snapshot  JSON lines: a header, then every account, then the
//                    retained transaction history; replaced atomically
//                    (write tmp, fsync, rename, fsync dir).
//   ledger.log       slot records appended after the snapshot, each framed as
//                    u32 length ‖ u32 crc32 ‖ JSON; a slot with transactions is
//                    fsynced before they are reported confirmed. A torn or
//                    corrupt tail (crash mid-write) is cut off at load.
//   ledger.lock      the pid of the process that has the ledger open.
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { AccountState, Address } from './account-store.ts';
import type { TxRecord } from './history.ts';
import {
  accountFromJson,
  accountToJson,
  type SlotRecord,
  type SnapshotHeader,
  type SnapshotLine,
  slotFromJson,
  slotToJson,
  txFromJson,
  txToJson,
} from './ledger-codec.ts';

export interface LoadedLedger {
  header: SnapshotHeader;
  accounts: Map<Address, AccountState>;
  history: TxRecord[];
  /** Log records newer than the snapshot, in order. */
  records: SlotRecord[];
  /** Bytes cut from the log's tail because they did not form a whole, valid record. */
  truncatedBytes: number;
}

const CHUNK = 1 << 20;

function acquireLock(path: string): void {
  if (existsSync(path)) {
    const pid = Number(readFileSync(path, 'utf8').trim());
    let alive = false;
    if (Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 0);
        alive = true;
      } catch (err) {
        alive = (err as NodeJS.ErrnoException).code === 'EPERM';
      }
    }
    if (alive) throw new Error(`devnet ledger ${path} is in use by process ${pid}`);
  }
  writeFileSync(path, `${process.pid}\n`);
}

function* lines(buf: Buffer): Generator<string> {
  let start = 0;
  while (start < buf.length) {
    let end = buf.indexOf(10, start);
    if (end === -1) end = buf.length;
    if (end > start) yield buf.toString('utf8', start, end);
    start = end + 1;
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class Ledger {
  private logFd: number;
  private logSize: number;
  private snapshotSize: number;

  private constructor(
    readonly dir: string,
    logFd: number,
    logSize: number,
    snapshotSize: number,
  ) {
    this.logFd = logFd;
    this.logSize = logSize;
    this.snapshotSize = snapshotSize;
  }

  get logBytes(): number {
    return this.logSize;
  }

  get snapshotBytes(): number {
    return this.snapshotSize;
  }

  private static paths(dir: string) {
    return {
      snapshot: join(dir, 'ledger.snapshot'),
      log: join(dir, 'ledger.log'),
      lock: join(dir, 'ledger.lock'),
    };
  }

  /** Opens (creating the directory) and loads; `loaded` is null for a fresh ledger. */
  static open(dir: string): { ledger: Ledger; loaded: LoadedLedger | null } {
    mkdirSync(dir, { recursive: true });
    const p = Ledger.paths(dir);
    acquireLock(p.lock);
    try {
      const loaded = existsSync(p.snapshot) ? Ledger.load(p.snapshot, p.log) : null;
      const fd = openSync(p.log, 'a');
      if (!loaded) ftruncateSync(fd, 0);
      const snapshotSize = loaded ? fstatSizeOf(p.snapshot) : 0;
      return { ledger: new Ledger(dir, fd, fstatSync(fd).size, snapshotSize), loaded };
    } catch (err) {
      rmSync(p.lock, { force: true });
      throw err;
    }
  }

  private static load(snapshotPath: string, logPath: string): LoadedLedger {
    let header: SnapshotHeader | undefined;
    const accounts = new Map<Address, AccountState>();
    const history: TxRecord[] = [];
    for (const line of lines(readFileSync(snapshotPath))) {
      if (!header) {
        header = JSON.parse(line) as SnapshotHeader;
        if (header.version !== 1 && header.version !== 2)
          throw new Error(`${snapshotPath}: unsupported snapshot version ${header.version}`);
        continue;
      }
      const entry = JSON.parse(line) as SnapshotLine;
      if (entry[0] === 'a') accounts.set(entry[1], accountFromJson(entry[2]));
      else history.push(txFromJson(entry[1]));
    }
    if (!header) throw new Error(`${snapshotPath}: empty snapshot`);

    const records: SlotRecord[] = [];
    let truncatedBytes = 0;
    if (existsSync(logPath)) {
      const buf = readFileSync(logPath);
      let offset = 0;
      while (offset + 8 <= buf.length) {
        const length = buf.readUInt32LE(offset);
        const crc = buf.readUInt32LE(offset + 4);
        const end = offset + 8 + length;
        if (end > buf.length) break;
        const payload = buf.subarray(offset + 8, end);
        if (crc32(payload) !== crc) break;
        let record: SlotRecord;
        try {
          record = slotFromJson(payload.toString('utf8'));
        } catch {
          break;
        }
        // Records the snapshot already covers remain when a crash hit between
        // the snapshot's rename and the log's truncation.
        if (record.slot > header.slot && record.slot > (records.at(-1)?.slot ?? -1)) records.push(record);
        offset = end;
      }
      if (offset < buf.length) {
        truncatedBytes = buf.length - offset;
        const fd = openSync(logPath, 'r+');
        try {
          ftruncateSync(fd, offset);
          fdatasyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    }
    return { header, accounts, history, records, truncatedBytes };
  }

  /** Appends one slot record; `sync` makes it durable before returning. */
  append(record: SlotRecord, sync: boolean): void {
    const payload = Buffer.from(slotToJson(record), 'utf8');
    const frame = Buffer.allocUnsafe(8 + payload.length);
    frame.writeUInt32LE(payload.length, 0);
    frame.writeUInt32LE(crc32(payload), 4);
    payload.copy(frame, 8);
    let written = 0;
    while (written < frame.length) written += writeSync(this.logFd, frame, written);
    this.logSize += frame.length;
    if (sync) fdatasyncSync(this.logFd);
  }

  /** Replaces the snapshot atomically, then empties the log it supersedes. */
  writeSnapshot(
    header: SnapshotHeader,
    accounts: Iterable<[Address, AccountState]>,
    history: Iterable<TxRecord>,
  ): void {
    const p = Ledger.paths(this.dir);
    const tmp = `${p.snapshot}.tmp`;
    const fd = openSync(tmp, 'w');
    let size = 0;
    try {
      let chunk: string[] = [];
      let chunkLength = 0;
      const flush = () => {
        const buf = Buffer.from(chunk.join(''), 'utf8');
        let written = 0;
        while (written < buf.length) written += writeSync(fd, buf, written);
        size += buf.length;
        chunk = [];
        chunkLength = 0;
      };
      const push = (line: string) => {
        chunk.push(line, '\n');
        chunkLength += line.length + 1;
        if (chunkLength >= CHUNK) flush();
      };
      push(JSON.stringify(header));
      for (const [address, state] of accounts) push(JSON.stringify(['a', address, accountToJson(state)]));
      for (const record of history) push(JSON.stringify(['t', txToJson(record)]));
      flush();
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, p.snapshot);
    fsyncDir(this.dir);
    ftruncateSync(this.logFd, 0);
    fdatasyncSync(this.logFd);
    this.logSize = 0;
    this.snapshotSize = size;
  }

  close(): void {
    if (this.logFd < 0) return;
    closeSync(this.logFd);
    this.logFd = -1;
    rmSync(Ledger.paths(this.dir).lock, { force: true });
  }
}

function fstatSizeOf(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}
