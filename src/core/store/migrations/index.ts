// The one migration set, listed in code (no directory scanning, so it works
// the same under tsx, bundlers and tests). Names sort in apply order; append
// new migrations, never edit an applied one.
import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import * as m0001 from './0001-accounts.ts';
import * as m0002 from './0002-mail.ts';
import * as m0003 from './0003-api.ts';
import * as m0004 from './0004-dmarc.ts';
import * as m0005 from './0005-sender-evaluations.ts';
import * as m0007 from './0007-reader-keys.ts';
import * as m0008 from './0008-modseq.ts';
import * as m0009 from './0009-pop3-dele.ts';
import * as m0010 from './0010-program-index.ts';
import * as m0011 from './0011-rent-recovery.ts';
import * as m0012 from './0012-delivery-intents.ts';
import * as m0013 from './0013-pg-blobs.ts';
import * as m0014 from './0014-outbound-ledger.ts';

export const MIGRATIONS: Record<string, Migration> = {
  '0001-accounts': m0001,
  '0002-mail': m0002,
  '0003-api': m0003,
  '0004-dmarc': m0004,
  '0005-sender-evaluations': m0005,
  '0007-reader-keys': m0007,
  '0008-modseq': m0008,
  '0009-pop3-dele': m0009,
  '0010-program-index': m0010,
  '0011-rent-recovery': m0011,
  '0012-delivery-intents': m0012,
  '0013-pg-blobs': m0013,
  '0014-outbound-ledger': m0014,
};

export class MigrationError extends Error {
  override readonly cause: unknown;
  constructor(message: string, cause: unknown) {
    super(message);
    this.name = 'MigrationError';
    this.cause = cause;
  }
}

/**
 * Applies every pending migration. `schema` names the PostgreSQL schema that
 * holds Kysely's bookkeeping tables (its existence check would otherwise see
 * same-named tables in other schemas); leave it undefined for SQLite.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, schema?: string): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableSchema: schema,
  });
  let result = await migrator.migrateToLatest();
  // Kysely's bookkeeping check lists the tables of every schema in the
  // database; another schema (or its table) dropped during that listing fails
  // it with invalid_schema_name (3F000) or undefined_table (42P01) before any
  // migration ran. That is not about our schema, so the check is simply made
  // again (a few times at most; a real problem still fails after them).
  for (let retry = 0; retry < 3 && isForeignTableRace(result); retry++) {
    await new Promise((resolve) => setTimeout(resolve, 50 * (retry + 1)));
    result = await migrator.migrateToLatest();
  }
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    const why = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationError(
      `store migration ${failed ?? ''} failed: ${why}`.replace('  ', ' '),
      result.error,
    );
  }
  return result;
}

/** The bookkeeping check failed on a schema or table that vanished meanwhile, before any migration ran. */
function isForeignTableRace(result: MigrationResultSet): boolean {
  if (!result.error || result.results?.some((r) => r.status === 'Error')) return false;
  const code = (result.error as { code?: unknown }).code;
  return code === '42P01' || code === '3F000';
}
