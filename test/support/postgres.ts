// PostgreSQL for component tests: each test run works in its own schema
// (random name) and drops it afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_PG_URL = process.env.SEALPOST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function uniqueSchemaName(prefix = 'sealpost_test'): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchema(schema: string, url: string = TEST_PG_URL): Promise<void> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

export async function schemaExists(schema: string, url: string = TEST_PG_URL): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query('select 1 from pg_namespace where nspname = $1', [schema]);
    return (r.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}
