// Table types of the accounts store, shared by both dialects. Conventions
// (see docs/store.md): timestamps are bigint Unix milliseconds, booleans are
// written as 0/1 and read back through toBool(), JSON is stored as text.
import type { ColumnType } from 'kysely';

/** SQLite returns 0/1 for boolean columns, PostgreSQL true/false. */
export type SqlBool = boolean | 0 | 1;

export type AccountSource = 'self' | 'admin' | 'delivery';

export interface AccountsTable {
  /** base58 ed25519 public key. */
  wallet: string;
  created_at: number;
  updated_at: number;
  source: AccountSource;
  mail_password_sealed: string | null;
  timezone: string | null;
  expose_dnd_schedule: ColumnType<SqlBool, 0 | 1 | undefined, 0 | 1>;
  disabled_at: number | null;
}

export interface PinProvidersTable {
  wallet: string;
  /** `hosted_jwt`, `s3_bucket` or `remote`: the only part stored in the clear. */
  kind: string;
  /** credential-seal `v1:` text of the provider's JSON object. */
  sealed_credentials: string;
  updated_at: number;
}

export interface AuditEventsTable {
  /** ULID: sortable by time. */
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  outcome: 'success' | 'failure';
  /** JSON text, or null. */
  detail: string | null;
}

export interface KvMetaTable {
  key: string;
  value: string;
  updated_at: number;
}

export interface Database {
  accounts: AccountsTable;
  pin_providers: PinProvidersTable;
  audit_events: AuditEventsTable;
  kv_meta: KvMetaTable;
}

export function toBool(value: SqlBool): boolean {
  return value === true || value === 1;
}
