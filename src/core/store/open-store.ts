// Opens the accounts store: SQLite (embedded default, a file under the data
// directory) or PostgreSQL, selected by `[store] url`, and brings the schema
// to the latest migration.
import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  sql,
} from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrations/index.ts';
import type { Database } from './types.ts';

export type StoreDialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: StoreDialect;
  /** PostgreSQL schema in use (from `?schema=` or `searchPath`); undefined for SQLite. */
  schema?: string;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** `sqlite:PATH` (relative to dataDir), `postgres://…`; default `sqlite:sealpost.sqlite`. */
  url?: string;
  dataDir: string;
  /** PostgreSQL schema to work in; overrides `?schema=` in the URL. */
  searchPath?: string;
  /** Create the schema when missing (default true). */
  createSchema?: boolean;
  /** Run pending migrations before returning (default true). */
  migrate?: boolean;
  /** Pool size for PostgreSQL (default 10). */
  maxConnections?: number;
  /**
   * Errors of idle pooled PostgreSQL connections (e.g. a server restart).
   * Without a listener node would crash the process; the pool replaces the
   * connection and the next query reports any lasting problem.
   */
  onPoolError?: (err: Error) => void;
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const PG_INT8_OID = 20;

export function sqlitePathFromUrl(url: string, dataDir: string): string {
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (path === '') throw new Error(`store url ${url} names no file`);
  if (path === ':memory:') return path;
  return isAbsolute(path) ? path : resolve(dataDir, path);
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const url = opts.url ?? 'sqlite:sealpost.sqlite';
  const store = url.startsWith('sqlite:')
    ? openSqlite(sqlitePathFromUrl(url, opts.dataDir))
    : /^postgres(ql)?:\/\//.test(url)
      ? await openPostgres(url, opts)
      : null;
  if (!store)
    throw new Error(`store url must start with "sqlite:" or "postgres://", got ${JSON.stringify(url)}`);
  if (opts.migrate ?? true) {
    try {
      await migrateToLatest(store.db, store.schema);
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  return store;
}

// Every SQLite transaction takes the write lock when it begins (BEGIN
// IMMEDIATE). A deferred transaction that reads first and then writes cannot
// wait for the lock in WAL mode: when another process (a second `sealpost
// worker` on the same file) committed after its read, SQLite answers
// SQLITE_BUSY at once, busy_timeout or not, and the delivery was deferred
// with "database is locked". Taking the lock up front makes the second
// writer wait (up to busy_timeout) for its turn instead.
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

// Kysely's SQLite driver prepares every query it runs, and preparing (SQLite
// parsing and planning the text) was half of a delivery's store CPU. The
// database it is given keeps prepared statements by SQL text instead: the
// driver runs one query at a time, and a statement still being iterated (a
// streamed select) is never handed out again. Bounded: texts that vary (IN
// lists of any length) cannot grow it past STATEMENTS_KEPT.
const STATEMENTS_KEPT = 500;

function withStatementCache(database: SQLite.Database): SqliteDatabase {
  const kept = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      const hit = kept.get(text);
      if (hit && !hit.busy) return hit;
      const stmt = database.prepare(text);
      if (!hit) {
        if (kept.size >= STATEMENTS_KEPT) kept.clear();
        kept.set(text, stmt);
      }
      return stmt;
    },
  };
}

function openSqlite(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SQLite(path);
  // WAL lets readers run while one writer commits (serve and worker processes
  // share the file); the busy timeout makes a second writer wait instead of
  // failing with SQLITE_BUSY; SQLite leaves foreign keys off unless asked.
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }),
  });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

async function openPostgres(url: string, opts: OpenStoreOptions): Promise<Store> {
  const parsed = new URL(url);
  const schema = opts.searchPath ?? parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(`store schema ${JSON.stringify(schema)} must be a plain identifier (letters, digits, _)`);
  }
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: opts.maxConnections ?? 10,
    // Every connection starts in the chosen schema, so unqualified table
    // names (migrations and queries alike) land there.
    options: schema ? `-c search_path=${schema}` : undefined,
    // bigint columns hold Unix milliseconds: return them as numbers, not strings.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8_OID && format !== 'binary'
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  pool.on('error', opts.onPoolError ?? (() => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    if (schema && (opts.createSchema ?? true)) {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    }
    const current = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    const effective = current.rows[0]?.schema ?? schema;
    if (!effective)
      throw new Error(`PostgreSQL search_path names no existing schema${schema ? ` (${schema})` : ''}`);
    return { db, dialect: 'postgres', schema: effective, close: () => db.destroy() };
  } catch (err) {
    await db.destroy();
    throw err;
  }
}
