// Account satellites the API keeps (migration 0003-api): the session epoch
// behind "revoke all sessions" and the do-not-disturb schedule. Both rows go
// with the account (FK cascade); the admin sweep also deletes the schedule
// explicitly, just before the account row.
import type { Kysely } from 'kysely';
import type { Database } from './types.ts';

export class SettingsRepo {
  private readonly db: Kysely<Database>;
  private readonly now: () => number;

  constructor(db: Kysely<Database>, opts: { now?: () => number } = {}) {
    this.db = db;
    this.now = opts.now ?? Date.now;
  }

  /** The wallet's session epoch; 0 when sessions were never revoked (or there is no account). */
  async sessionEpoch(wallet: string): Promise<number> {
    const row = await this.db
      .selectFrom('account_sessions')
      .select('epoch')
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    return row ? Number(row.epoch) : 0;
  }

  /**
   * Moves the epoch past every token issued so far; returns the new epoch,
   * or null when the wallet has no account. The epoch is the revocation
   * time in ms, never lower than the previous epoch + 1.
   */
  async bumpSessionEpoch(wallet: string): Promise<number | null> {
    return this.db.transaction().execute(async (trx) => {
      const account = await trx
        .selectFrom('accounts')
        .select('wallet')
        .where('wallet', '=', wallet)
        .executeTakeFirst();
      if (!account) return null;
      const current = await trx
        .selectFrom('account_sessions')
        .select('epoch')
        .where('wallet', '=', wallet)
        .executeTakeFirst();
      const at = this.now();
      const epoch = Math.max(at, current ? Number(current.epoch) + 1 : 1);
      await trx
        .insertInto('account_sessions')
        .values({ wallet, epoch, updated_at: at })
        .onConflict((oc) => oc.column('wallet').doUpdateSet({ epoch, updated_at: at }))
        .execute();
      return epoch;
    });
  }

  /**
   * Applies account settings in one transaction (timezone and the exposure
   * flag are columns of the account row; the schedule is its own row).
   * Undefined fields are left alone; returns false when the wallet has no account.
   */
  async applySettings(
    wallet: string,
    patch: {
      timezone?: string | null;
      exposeDndSchedule?: boolean;
      dndSchedule?: unknown;
      pop3DeleClosesOnChain?: boolean;
    },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const at = this.now();
      const updated = await trx
        .updateTable('accounts')
        .set({
          updated_at: at,
          ...(patch.timezone !== undefined && { timezone: patch.timezone }),
          ...(patch.exposeDndSchedule !== undefined && {
            expose_dnd_schedule: patch.exposeDndSchedule ? 1 : 0,
          }),
          ...(patch.pop3DeleClosesOnChain !== undefined && {
            pop3_dele_closes_on_chain: patch.pop3DeleClosesOnChain ? 1 : 0,
          }),
        })
        .where('wallet', '=', wallet)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return false;
      if (patch.dndSchedule === null) {
        await trx.deleteFrom('dnd_schedules').where('wallet', '=', wallet).execute();
      } else if (patch.dndSchedule !== undefined) {
        const values = { schedule: JSON.stringify(patch.dndSchedule), updated_at: at };
        await trx
          .insertInto('dnd_schedules')
          .values({ wallet, ...values })
          .onConflict((oc) => oc.column('wallet').doUpdateSet(values))
          .execute();
      }
      return true;
    });
  }

  /** The stored schedule (parsed JSON), or null when none is set. */
  async getDndSchedule(wallet: string): Promise<unknown> {
    const row = await this.db
      .selectFrom('dnd_schedules')
      .select('schedule')
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    return row ? (JSON.parse(row.schedule) as unknown) : null;
  }

  /** Sets (an object) or clears (null) the schedule; false when the wallet has no account. */
  async setDndSchedule(wallet: string, schedule: unknown): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const account = await trx
        .selectFrom('accounts')
        .select('wallet')
        .where('wallet', '=', wallet)
        .executeTakeFirst();
      if (!account) return false;
      if (schedule === null) {
        await trx.deleteFrom('dnd_schedules').where('wallet', '=', wallet).execute();
        return true;
      }
      const values = { schedule: JSON.stringify(schedule), updated_at: this.now() };
      await trx
        .insertInto('dnd_schedules')
        .values({ wallet, ...values })
        .onConflict((oc) => oc.column('wallet').doUpdateSet(values))
        .execute();
      return true;
    });
  }

  /** Deletes the schedule row; returns whether one existed. */
  async deleteDndSchedule(wallet: string): Promise<boolean> {
    const r = await this.db.deleteFrom('dnd_schedules').where('wallet', '=', wallet).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
