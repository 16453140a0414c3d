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
  /** A POP3 DELE also releases the operator pin and closes the Email account on chain (migration 0009). */
  pop3_dele_closes_on_chain: ColumnType<SqlBool, 0 | 1 | undefined, 0 | 1>;
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

export interface MailboxesTable {
  /** ULID. */
  id: string;
  wallet: string;
  /** `INBOX` for delivered mail. */
  name: string;
  uid_validity: number;
  uid_next: number;
  created_at: number;
  /** RFC 7162 HIGHESTMODSEQ: taken by every change in the mailbox; 1 on insert. */
  highest_modseq: ColumnType<number, number | undefined, number>;
}

export interface MessagesTable {
  /** The delivery job's id (`<msgid>.<n>`): one row per delivered copy. */
  id: string;
  wallet: string;
  mailbox_id: string;
  uid: number;
  /** Blob store key of the sealed bytes. */
  blob_key: string;
  size: number;
  received_at: number;
  /** CIDv1, or the `b3:` marker under no_ipfs; null until published. */
  cid: string | null;
  /** Whether the operator pin holds this CID (released on delete). */
  pinned_by_operator: ColumnType<SqlBool, 0 | 1 | undefined, 0 | 1>;
  /** Email account index (u64 as decimal text) and address on chain. */
  chain_index: string | null;
  email_address: string | null;
  tx_signature: string | null;
  /** This deployment signed the SendMail (so its DeleteMail may close it). */
  published_by_us: ColumnType<SqlBool, 0 | 1 | undefined, 0 | 1>;
  /** JSON array of IMAP flags. */
  flags: ColumnType<string, string | undefined, string>;
  /** RFC 7162 MODSEQ: the mailbox's highest_modseq when this message last changed. */
  modseq: ColumnType<number, number | undefined, number>;
  deleted_at: number | null;
  /** When the Email account's rent was recovered (closed on chain, migration 0011); null: still open or never ours. */
  rent_recovered_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ReaderWrapsTable {
  message_id: string;
  /** e.g. `imap`: which operator-kept reader key the wrap opens with. */
  reader_id: string;
  wallet: string;
  /** base64 of the crypto_box_seal of the content key to that reader. */
  wrap: string;
  created_at: number;
}

/** An account's IMAP/POP reader key (migration 0007-reader-keys). */
export interface ReaderKeysTable {
  wallet: string;
  /** `imap.<ULID>`: new for every new key, the `reader_id` of its wraps. */
  reader_id: string;
  /** base64 of the X25519 public key. */
  public_key: string;
  /** credential-seal `v1:` text of the secret locked under the mail password (src/mail/reader-keys/lock.ts). */
  locked_secret: string;
  created_at: number;
  updated_at: number;
}

/** Per-account counters of the mail store (migration 0007-reader-keys). */
export interface MailCountersTable {
  wallet: string;
  /** Last UIDVALIDITY given to a new folder; the next is larger. */
  last_uid_validity: number;
}

/** Session epoch of an account (migration 0003-api): JWTs carry the epoch they were issued under. */
export interface AccountSessionsTable {
  wallet: string;
  epoch: number;
  updated_at: number;
}

/** Do-not-disturb schedule of an account (migration 0003-api). */
export interface DndSchedulesTable {
  wallet: string;
  /** JSON text of the schedule (docs/api.md). */
  schedule: string;
  updated_at: number;
}

export interface SenderEvaluationsTable {
  id: string;
  at: number;
  source_ip: string;
  helo: string;
  mail_from: string;
  header_from: string | null;
  spf: string;
  dkim: string | null;
  dmarc: string | null;
  dmarc_policy: string | null;
  disposition: string;
}

export interface DmarcReportsTable {
  /** ULID. */
  id: string;
  org_name: string;
  /** The reporter's report id; unique together with org_name. */
  report_id: string;
  /** policy_published domain (lowercase ASCII). */
  domain: string;
  /** Report period, Unix ms. */
  date_begin: number;
  date_end: number;
  reporter_email: string | null;
  /** JSON of the published policy (p, sp, adkim, aspf, pct, fo). */
  policy: string;
  record_count: number;
  /** Sum of the records' counts. */
  message_count: number;
  /** `dmarc_rua/…` blob holding the parsed report as JSON. */
  blob_key: string;
  /** Message-ID of the mail that carried it. */
  source_message_id: string | null;
  /** When it was ingested (retention runs on this). */
  received_at: number;
}

export interface DmarcReportRecordsTable {
  report_row_id: string;
  seq: number;
  source_ip: string;
  count: number;
  disposition: string;
  /** policy_evaluated dkim / spf: pass or fail. */
  dkim: string;
  spf: string;
  header_from: string;
  envelope_from: string | null;
  /** JSON {dkim: [{domain, selector?, result}], spf: [{domain, scope?, result}]}. */
  auth_results: string;
  date_begin: number;
  date_end: number;
  ingested_at: number;
}

export interface TlsrptPendingTable {
  /** ULID. */
  id: string;
  policy_domain: string;
  recorded_at: number;
  /** RFC 8460 result type, or `success`. */
  result_type: string;
  /** JSON text, or null. */
  detail: string | null;
}

/** One program index's position (migration 0010-program-index; src/core/store/program-index.ts). */
export interface ProgramIndexStateTable {
  /** e.g. `market:<program id>`. */
  index_id: string;
  /** The newest program signature applied; null before the first commit. */
  cursor_signature: string | null;
  cursor_slot: number | null;
  /** Bumped by every commit: a process whose copy is of another version reloads. */
  version: number;
  updated_at: number;
}

/** An account a program index keeps, as last read (migration 0010-program-index). */
export interface ProgramIndexAccountsTable {
  index_id: string;
  /** base58. */
  address: string;
  /** The account's kind tag (its first byte). */
  tag: number;
  /** The account data, base64. */
  data: string;
  updated_at: number;
}

/** SendMail intents (migration 0012, delivery/intents.ts): one row per delivered copy while it is sent. */
export interface DeliveryIntentsTable {
  /** The delivery job's id, `<msgid>.<i>`. */
  copy_id: string;
  msgid: string;
  rcpt_index: number;
  /** The recipient's wallet (its mailbox is where the Email accounts are searched). */
  wallet: string | null;
  cid: string | null;
  /** Blob store key of the sealed body the CID is of. */
  blob_key: string | null;
  /** The lowest Email index any signing of this copy was built at (u64 as decimal text). */
  since_index: string | null;
  email_index: string | null;
  email_address: string | null;
  signature: string | null;
  /** JSON: { resolve, seal, pin, submit } as the job had them when it signed (submit.tx: the signed bytes). */
  record: string | null;
  created_at: number;
  updated_at: number;
  /** Set once the copy is done: stored (its message row exists) or bounced for good. */
  finished_at: number | null;
  outcome: 'stored' | 'bounced' | 'deleted' | null;
}

/** The outbound ledger (migration 0014, src/core/store/outbound-ledger.ts): one row per message the spooler still owes. */
export interface OutboundLedgerTable {
  /** The intake job's id (QUEUE_OUTBOUND), which is also the message's spooler id. */
  msgid: string;
  kind: string;
  /** JSON: the intake job's data (src/contracts/inbound-jobs.ts OutboundJobData) as first queued. */
  data: string;
  /** The message's content blob (a rebuilt job reads it; the blob sweep keeps it). */
  blob_key: string;
  created_at: number;
}

/** Destination domains of a ledger message whose domain job ended. */
export interface OutboundLedgerDoneTable {
  msgid: string;
  /** As the spooler groups recipients (lowercase ASCII; `invalid.` for bad addresses). */
  domain: string;
  /** delivered | failed | local | deleted (failed includes bounced and expired). */
  outcome: string;
  at: number;
}

export interface Database {
  outbound_ledger: OutboundLedgerTable;
  outbound_ledger_done: OutboundLedgerDoneTable;
  delivery_intents: DeliveryIntentsTable;
  program_index_state: ProgramIndexStateTable;
  program_index_accounts: ProgramIndexAccountsTable;
  sender_evaluations: SenderEvaluationsTable;
  dmarc_reports: DmarcReportsTable;
  dmarc_report_records: DmarcReportRecordsTable;
  tlsrpt_pending: TlsrptPendingTable;
  accounts: AccountsTable;
  mailboxes: MailboxesTable;
  messages: MessagesTable;
  reader_wraps: ReaderWrapsTable;
  pin_providers: PinProvidersTable;
  audit_events: AuditEventsTable;
  kv_meta: KvMetaTable;
  account_sessions: AccountSessionsTable;
  dnd_schedules: DndSchedulesTable;
  reader_keys: ReaderKeysTable;
  mail_counters: MailCountersTable;
}

export function toBool(value: SqlBool): boolean {
  return value === true || value === 1;
}
