// Accounts and their satellites (pin provider, audit trail). Credentials
// arrive already sealed (src/core/crypto/credential-seal.ts): this layer never
// sees plaintext secrets. Works on both dialects through one code path.
import bs58 from 'bs58';
import type { Kysely, Selectable } from 'kysely';
import { newSortableId } from '../log.ts';
import type { AccountSource, AccountsTable, AuditEventsTable, Database } from './types.ts';
import { toBool } from './types.ts';

export interface Account {
  wallet: string;
  createdAt: number;
  updatedAt: number;
  source: AccountSource;
  mailPasswordSealed: string | null;
  timezone: string | null;
  exposeDndSchedule: boolean;
  disabledAt: number | null;
  /** POP3 DELE + QUIT also closes the Email account on chain (default false: only the store copy goes). */
  pop3DeleClosesOnChain: boolean;
}

export interface AccountPatch {
  mailPasswordSealed?: string | null;
  timezone?: string | null;
  exposeDndSchedule?: boolean;
  disabledAt?: number | null;
  pop3DeleClosesOnChain?: boolean;
}

export interface StoredPinProvider {
  wallet: string;
  kind: string;
  sealedCredentials: string;
  updatedAt: number;
}

export interface AuditEvent {
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  outcome: 'success' | 'failure';
  detail: unknown;
}

export interface AuditInput {
  /** Who acted: `admin`, a wallet, `system`. */
  actor: string;
  /** What was done, e.g. `account.delete`, `account.export`. */
  action: string;
  target?: string | null;
  outcome: 'success' | 'failure';
  /** Any JSON-serializable value. */
  detail?: unknown;
}

export class InvalidWalletError extends Error {
  constructor(wallet: string) {
    super(`not a wallet address (base58 of 32 bytes): ${JSON.stringify(wallet)}`);
    this.name = 'InvalidWalletError';
  }
}

export class AccountNotFoundError extends Error {
  constructor(readonly wallet: string) {
    super(`no account for wallet ${wallet}`);
    this.name = 'AccountNotFoundError';
  }
}

function assertWallet(wallet: string): void {
  let ok = false;
  try {
    ok = bs58.decode(wallet).length === 32;
  } catch {}
  if (!ok) throw new InvalidWalletError(wallet);
}

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    wallet: row.wallet,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    source: row.source,
    mailPasswordSealed: row.mail_password_sealed,
    timezone: row.timezone,
    exposeDndSchedule: toBool(row.expose_dnd_schedule),
    disabledAt: row.disabled_at,
    pop3DeleClosesOnChain: toBool(row.pop3_dele_closes_on_chain),
  };
}

function toAuditEvent(row: Selectable<AuditEventsTable>): AuditEvent {
  return { ...row, detail: row.detail === null ? null : JSON.parse(row.detail) };
}

export class AccountsRepo {
  private readonly db: Kysely<Database>;
  private readonly now: () => number;

  constructor(db: Kysely<Database>, opts: { now?: () => number } = {}) {
    this.db = db;
    this.now = opts.now ?? Date.now;
  }

  /** Creates the account unless it exists; an existing row is left untouched. */
  async create(
    wallet: string,
    opts: { source: AccountSource; timezone?: string | null },
  ): Promise<{ created: boolean; account: Account }> {
    assertWallet(wallet);
    const at = this.now();
    const result = await this.db
      .insertInto('accounts')
      .values({
        wallet,
        created_at: at,
        updated_at: at,
        source: opts.source,
        mail_password_sealed: null,
        timezone: opts.timezone ?? null,
        expose_dnd_schedule: 0,
        disabled_at: null,
      })
      .onConflict((oc) => oc.column('wallet').doNothing())
      .executeTakeFirst();
    const account = await this.get(wallet);
    if (!account) throw new AccountNotFoundError(wallet); // deleted concurrently
    return { created: Number(result.numInsertedOrUpdatedRows ?? 0) > 0, account };
  }

  async get(wallet: string): Promise<Account | undefined> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }

  /** Keyset paging in wallet order: pass the previous page's `next` as `after`. */
  async list(
    opts: { after?: string; limit?: number } = {},
  ): Promise<{ accounts: Account[]; next: string | null }> {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
    let q = this.db
      .selectFrom('accounts')
      .selectAll()
      .orderBy('wallet')
      .limit(limit + 1);
    if (opts.after !== undefined) q = q.where('wallet', '>', opts.after);
    const rows = await q.execute();
    const page = rows.slice(0, limit).map(toAccount);
    return { accounts: page, next: rows.length > limit ? (page[page.length - 1]?.wallet ?? null) : null };
  }

  /** Returns false when no account matched. */
  async update(wallet: string, patch: AccountPatch): Promise<boolean> {
    const result = await this.db
      .updateTable('accounts')
      .set({
        updated_at: this.now(),
        ...(patch.mailPasswordSealed !== undefined && { mail_password_sealed: patch.mailPasswordSealed }),
        ...(patch.timezone !== undefined && { timezone: patch.timezone }),
        ...(patch.exposeDndSchedule !== undefined && {
          expose_dnd_schedule: patch.exposeDndSchedule ? 1 : 0,
        }),
        ...(patch.disabledAt !== undefined && { disabled_at: patch.disabledAt }),
        ...(patch.pop3DeleClosesOnChain !== undefined && {
          pop3_dele_closes_on_chain: patch.pop3DeleClosesOnChain ? 1 : 0,
        }),
      })
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Returns false when no account matched. The pin provider row goes with it (FK cascade). */
  async delete(wallet: string): Promise<boolean> {
    const result = await this.db.deleteFrom('accounts').where('wallet', '=', wallet).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Sets or replaces the provider. Throws AccountNotFoundError when the wallet has no account. */
  async setPinProvider(wallet: string, provider: { kind: string; sealedCredentials: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const exists = await trx
        .selectFrom('accounts')
        .select('wallet')
        .where('wallet', '=', wallet)
        .executeTakeFirst();
      if (!exists) throw new AccountNotFoundError(wallet);
      const values = {
        kind: provider.kind,
        sealed_credentials: provider.sealedCredentials,
        updated_at: this.now(),
      };
      await trx
        .insertInto('pin_providers')
        .values({ wallet, ...values })
        .onConflict((oc) => oc.column('wallet').doUpdateSet(values))
        .execute();
    });
  }

  async getPinProvider(wallet: string): Promise<StoredPinProvider | undefined> {
    const row = await this.db
      .selectFrom('pin_providers')
      .selectAll()
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    return row
      ? {
          wallet: row.wallet,
          kind: row.kind,
          sealedCredentials: row.sealed_credentials,
          updatedAt: row.updated_at,
        }
      : undefined;
  }

  /** Returns whether a provider was removed (the route answers 204 either way). */
  async deletePinProvider(wallet: string): Promise<boolean> {
    const result = await this.db.deleteFrom('pin_providers').where('wallet', '=', wallet).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async recordAudit(input: AuditInput): Promise<AuditEvent> {
    const event: AuditEvent = {
      id: newSortableId(),
      at: this.now(),
      actor: input.actor,
      action: input.action,
      target: input.target ?? null,
      outcome: input.outcome,
      detail: input.detail ?? null,
    };
    await this.db
      .insertInto('audit_events')
      .values({ ...event, detail: event.detail === null ? null : JSON.stringify(event.detail) })
      .execute();
    return event;
  }

  /** Newest first. */
  async listAudit(opts: { target?: string; limit?: number } = {}): Promise<AuditEvent[]> {
    let q = this.db
      .selectFrom('audit_events')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(opts.limit ?? 100, 1), 1000));
    if (opts.target !== undefined) q = q.where('target', '=', opts.target);
    return (await q.execute()).map(toAuditEvent);
  }
}
