// An incremental index of some of the mail program's accounts that needs no
// getProgramAccounts (docs/operations.md "Chain reads without
// getProgramAccounts"). Providers restrict or refuse that call for a program
// with millions of accounts (every message is an Email account), so the index
// follows the program's transaction history instead:
//
// 1. getSignaturesForAddress(program) from the newest signature applied (the
//    cursor) back to it (`until`), 1000 a page, at `confirmed`;
// 2. getTransaction for each successful one; its mail-program instructions
//    (outer and inner) are decoded with decodeInstruction, and their writable
//    accounts are the accounts that may have changed: all of them for an
//    instruction that may create a kept kind (`creates`), only those already
//    kept for the rest (a SendMail never creates a listing, but an
//    instruction may still write a kept account);
// 3. getMultipleAccounts (100 keys a call) of those accounts: an account the
//    program owns that `keep` accepts is stored with its data, any other is
//    dropped.
//
// Only the program writes its accounts' data, and only in a transaction that
// names the program and has the account writable, so after a sync the kept
// accounts are the chain's as of the reads. The cursor and the accounts are
// committed together (IndexState): the store's tables (StoreIndexState,
// migration 0010-program-index) or a JSON file (pind). Each commit bumps a
// version, and commits only over the version its sync started from, so
// processes sharing a store apply the history one after another and reload
// what another committed. A backlog is applied oldest first in chunks, each
// committed, so an interrupted first sync resumes where it stopped.
import type { Connection, PublicKey, VersionedTransactionResponse } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Kysely } from 'kysely';
import { type Key, toPublicKey } from '../../../chain/client/bytes.ts';
import { decodeInstruction, type MailInstruction } from '../../../chain/client/instruction-data.ts';
import type { Database } from './types.ts';

/** getMultipleAccounts takes at most this many keys (Agave's limit). */
export const MULTIPLE_ACCOUNTS_MAX = 100;
/** getSignaturesForAddress returns at most this many a call. */
export const SIGNATURES_PAGE = 1000;
/** Transactions applied (and committed) together during a backlog. */
const CHUNK = 500;

export interface IndexedAccount {
  tag: number;
  data: Uint8Array;
}

export interface IndexCursor {
  signature: string;
  slot: number;
}

export interface IndexSnapshot {
  cursor: IndexCursor | null;
  version: number;
  accounts: Map<string, IndexedAccount>;
}

export interface IndexCommit {
  cursor: IndexCursor | null;
  upserts: Map<string, IndexedAccount>;
  deletes: string[];
}

/** Where an index keeps its cursor and accounts. */
export interface IndexState {
  /** The stored version (0 before the first commit). */
  version(): Promise<number>;
  load(): Promise<IndexSnapshot>;
  /** Applies `c` when the stored version is still `base`: the new version, or null when another writer came first. */
  commit(base: number, c: IndexCommit): Promise<number | null>;
}

/** An index kept in memory only (tests; an API without a store). */
export class MemoryIndexState implements IndexState {
  private snap: IndexSnapshot = { cursor: null, version: 0, accounts: new Map() };
  async version(): Promise<number> {
    return this.snap.version;
  }
  async load(): Promise<IndexSnapshot> {
    return { ...this.snap, accounts: new Map(this.snap.accounts) };
  }
  async commit(base: number, c: IndexCommit): Promise<number | null> {
    if (base !== this.snap.version) return null;
    for (const [k, v] of c.upserts) this.snap.accounts.set(k, v);
    for (const k of c.deletes) this.snap.accounts.delete(k);
    this.snap = { ...this.snap, cursor: c.cursor ?? this.snap.cursor, version: base + 1 };
    return base + 1;
  }
}

/** An index in the store: tables program_index_state and program_index_accounts (both dialects). */
export class StoreIndexState implements IndexState {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly indexId: string,
    private readonly now: () => number = Date.now,
  ) {}

  async version(): Promise<number> {
    const row = await this.db
      .selectFrom('program_index_state')
      .select('version')
      .where('index_id', '=', this.indexId)
      .executeTakeFirst();
    return row ? Number(row.version) : 0;
  }

  async load(): Promise<IndexSnapshot> {
    return this.db.transaction().execute(async (trx) => {
      const state = await trx
        .selectFrom('program_index_state')
        .selectAll()
        .where('index_id', '=', this.indexId)
        .executeTakeFirst();
      const rows = await trx
        .selectFrom('program_index_accounts')
        .select(['address', 'tag', 'data'])
        .where('index_id', '=', this.indexId)
        .execute();
      return {
        cursor:
          state?.cursor_signature != null
            ? { signature: state.cursor_signature, slot: Number(state.cursor_slot ?? 0) }
            : null,
        version: state ? Number(state.version) : 0,
        accounts: new Map(
          rows.map((r) => [
            r.address,
            { tag: Number(r.tag), data: new Uint8Array(Buffer.from(r.data, 'base64')) },
          ]),
        ),
      };
    });
  }

  async commit(base: number, c: IndexCommit): Promise<number | null> {
    const at = this.now();
    return this.db.transaction().execute(async (trx) => {
      const next = base + 1;
      const cursor = {
        ...(c.cursor && { cursor_signature: c.cursor.signature, cursor_slot: c.cursor.slot }),
      };
      if (base === 0) {
        const inserted = await trx
          .insertInto('program_index_state')
          .values({ index_id: this.indexId, version: next, updated_at: at, ...cursor })
          .onConflict((oc) => oc.column('index_id').doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return null;
      } else {
        const updated = await trx
          .updateTable('program_index_state')
          .set({ version: next, updated_at: at, ...cursor })
          .where('index_id', '=', this.indexId)
          .where('version', '=', base)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return null;
      }
      for (const [address, a] of c.upserts) {
        const data = Buffer.from(a.data).toString('base64');
        await trx
          .insertInto('program_index_accounts')
          .values({ index_id: this.indexId, address, tag: a.tag, data, updated_at: at })
          .onConflict((oc) =>
            oc.columns(['index_id', 'address']).doUpdateSet({ tag: a.tag, data, updated_at: at }),
          )
          .execute();
      }
      for (let i = 0; i < c.deletes.length; i += 200) {
        await trx
          .deleteFrom('program_index_accounts')
          .where('index_id', '=', this.indexId)
          .where('address', 'in', c.deletes.slice(i, i + 200))
          .execute();
      }
      return next;
    });
  }
}

export interface ProgramIndexOptions {
  connection: Connection;
  programId: Key;
  state?: IndexState;
  /** Whether an account the program owns belongs in the index (its data as read now). */
  keep: (address: string, data: Uint8Array) => boolean;
  /** Whether an instruction may create an account `keep` accepts (null: it does not decode). */
  creates: (ix: MailInstruction | null) => boolean;
  /** getTransaction calls in flight at once; default 4. */
  concurrency?: number;
  now?: () => number;
}

/** What one sync cost (RPC calls by method) and found. */
export interface SyncStats {
  signatures: number;
  calls: { getSignaturesForAddress: number; getTransaction: number; getMultipleAccounts: number };
}

interface Ix {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
}

export class ProgramIndex {
  private readonly program: PublicKey;
  private readonly state: IndexState;
  private accountsMap = new Map<string, IndexedAccount>();
  private cursor: IndexCursor | null = null;
  private version = -1;
  /** Accounts dropped on load because `keep` no longer accepts them; deleted at the next commit. */
  private dropped = new Set<string>();
  private running: { startedAt: number; promise: Promise<SyncStats> } | null = null;
  private readonly now: () => number;
  /** Ms time the last completed sync began (its chain reads began after it). */
  syncedFrom = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: ProgramIndexOptions) {
    this.program = toPublicKey(opts.programId);
    this.state = opts.state ?? new MemoryIndexState();
    this.now = opts.now ?? Date.now;
  }

  /** The kept accounts as of the last sync (address → kind tag and data). */
  get accounts(): ReadonlyMap<string, IndexedAccount> {
    return this.accountsMap;
  }

  /** Kept accounts of one kind tag. */
  *ofTag(tag: number): Iterable<[string, Uint8Array]> {
    for (const [address, a] of this.accountsMap) if (a.tag === tag) yield [address, a.data];
  }

  /**
   * Brings the index up to the chain. Resolves once a sync that began at or
   * after `after` (ms; default now) has completed; concurrent callers share it.
   */
  async sync(after: number = this.now()): Promise<SyncStats> {
    for (;;) {
      if (this.running && this.running.startedAt >= after) return this.running.promise;
      if (this.running) {
        await this.running.promise.catch(() => {});
        continue;
      }
      const startedAt = this.now();
      const promise = this.run().finally(() => {
        this.running = null;
      });
      this.running = { startedAt, promise };
      const stats = await promise;
      this.syncedFrom = Math.max(this.syncedFrom, startedAt);
      return stats;
    }
  }

  private async reload(): Promise<void> {
    const snap = await this.state.load();
    this.accountsMap = new Map();
    this.dropped = new Set();
    for (const [address, a] of snap.accounts) {
      if (this.opts.keep(address, a.data)) this.accountsMap.set(address, a);
      else this.dropped.add(address);
    }
    this.cursor = snap.cursor;
    this.version = snap.version;
  }

  private async run(): Promise<SyncStats> {
    const stats: SyncStats = {
      signatures: 0,
      calls: { getSignaturesForAddress: 0, getTransaction: 0, getMultipleAccounts: 0 },
    };
    for (let attempt = 0; ; attempt++) {
      if (attempt >= 5) throw new Error('the program index kept losing its commits to another process');
      if ((await this.state.version()) !== this.version) await this.reload();
      // Newest first, back to the cursor; applied oldest first.
      const found = await this.newSignatures(stats);
      const sigs = found.reverse();
      stats.signatures = sigs.length;
      if (sigs.length === 0 && this.dropped.size === 0) return stats;
      let lost = false;
      for (let i = 0; i < sigs.length || (i === 0 && this.dropped.size > 0); i += CHUNK) {
        const chunk = sigs.slice(i, i + CHUNK);
        if (!(await this.apply(chunk, stats))) {
          lost = true;
          break;
        }
      }
      if (!lost) return stats;
    }
  }

  /** Signatures after the cursor, newest first. */
  private async newSignatures(stats: SyncStats) {
    const cursor = this.cursor;
    const out: { signature: string; slot: number; err: unknown }[] = [];
    let before: string | undefined;
    for (;;) {
      stats.calls.getSignaturesForAddress++;
      const page = await this.opts.connection.getSignaturesForAddress(
        this.program,
        { before, until: cursor?.signature, limit: SIGNATURES_PAGE },
        'confirmed',
      );
      let past = false;
      for (const s of page) {
        // A cursor a fork dropped is never met by `until`: stop at its slot instead.
        if (cursor && s.slot < cursor.slot) {
          past = true;
          break;
        }
        out.push(s);
      }
      const last = page.at(-1);
      if (past || !last || page.length < SIGNATURES_PAGE) return out;
      before = last.signature;
    }
  }

  /** Applies one chunk (oldest first) and commits it; false when another writer committed first. */
  private async apply(
    chunk: { signature: string; slot: number; err: unknown }[],
    stats: SyncStats,
  ): Promise<boolean> {
    const conn = this.opts.connection;
    const touched = new Set<string>();
    const todo = chunk.filter((s) => s.err === null || s.err === undefined);
    const worker = async () => {
      for (let s = todo.shift(); s !== undefined; s = todo.shift()) {
        stats.calls.getTransaction++;
        const tx = await conn.getTransaction(s.signature, {
          commitment: 'confirmed',
          maxSupportedTransactionVersion: 0,
        });
        if (!tx) throw new Error(`transaction ${s.signature} is listed but not readable yet`);
        this.collect(tx, touched);
      }
    };
    const lanes = Math.max(1, Math.min(this.opts.concurrency ?? 4, todo.length));
    await Promise.all(Array.from({ length: lanes }, worker));
    const upserts = new Map<string, IndexedAccount>();
    const deletes = new Set<string>(this.dropped);
    const keys = [...touched];
    for (let i = 0; i < keys.length; i += MULTIPLE_ACCOUNTS_MAX) {
      const part = keys.slice(i, i + MULTIPLE_ACCOUNTS_MAX);
      stats.calls.getMultipleAccounts++;
      const infos = await conn.getMultipleAccountsInfo(part.map(toPublicKey), 'confirmed');
      part.forEach((address, j) => {
        const info = infos[j];
        const data = info ? new Uint8Array(info.data) : null;
        if (info?.owner.equals(this.program) && data && data.length > 0 && this.opts.keep(address, data)) {
          upserts.set(address, { tag: data[0] as number, data });
          deletes.delete(address);
        } else if (this.accountsMap.has(address)) deletes.add(address);
      });
    }
    const newest = chunk.at(-1);
    const cursor = newest ? { signature: newest.signature, slot: newest.slot } : this.cursor;
    const version = await this.state.commit(this.version, { cursor, upserts, deletes: [...deletes] });
    if (version === null) return false;
    for (const [k, v] of upserts) this.accountsMap.set(k, v);
    for (const k of deletes) this.accountsMap.delete(k);
    this.dropped.clear();
    this.cursor = cursor;
    this.version = version;
    return true;
  }

  /** The writable accounts of the transaction's mail-program instructions that may have changed. */
  private collect(tx: VersionedTransactionResponse, touched: Set<string>): void {
    const msg = tx.transaction.message;
    const keys = msg.getAccountKeys({ accountKeysFromLookups: tx.meta?.loadedAddresses ?? undefined });
    const ixs: Ix[] = msg.compiledInstructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: ix.accountKeyIndexes,
      data: ix.data,
    }));
    for (const inner of tx.meta?.innerInstructions ?? [])
      for (const ix of inner.instructions)
        ixs.push({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: bs58.decode(ix.data) });
    for (const ix of ixs) {
      if (!keys.get(ix.programIdIndex)?.equals(this.program)) continue;
      let decoded: MailInstruction | null = null;
      try {
        decoded = decodeInstruction(ix.data);
      } catch {
        // Not an instruction this build knows: `creates(null)` decides.
      }
      const creates = this.opts.creates(decoded);
      for (const i of ix.accounts) {
        if (!msg.isAccountWritable(i)) continue;
        const key = keys.get(i)?.toBase58();
        if (key && (creates || this.accountsMap.has(key))) touched.add(key);
      }
    }
  }
}
