// Read-only aggregates the account API needs beyond the repos: quota usage
// for the export and the account view.
import type { Kysely } from 'kysely';
import type { Database } from './types.ts';

export interface QuotaUsage {
  messages: number;
  bytes: number;
}

/** Count and total size of the stored copies of a wallet (all mailboxes). */
export async function quotaUsage(db: Kysely<Database>, wallet: string): Promise<QuotaUsage> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => [eb.fn.countAll().as('messages'), eb.fn.sum<number | string | null>('size').as('bytes')])
    .where('wallet', '=', wallet)
    .executeTakeFirst();
  return { messages: Number(row?.messages ?? 0), bytes: Number(row?.bytes ?? 0) };
}
