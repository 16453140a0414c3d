// Eleventh schema: the opt-in rent recovery (`[chain] rent_recovery_days`,
// delivery/rent-recovery.ts, docs/operations.md "Rent recovery").
// `rent_recovered_at` (Unix ms, null: not recovered) is set on a delivered
// copy once the Email account it names is closed on chain — by the sweep's
// DeleteMail, or found already closed — so the copy is never swept again;
// the row itself stays, and server-mode readers keep reading it from the
// store. The index serves the sweep's "oldest first, not yet recovered" scan.
import type { Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('messages').addColumn('rent_recovered_at', 'bigint').execute();
  await db.schema
    .createIndex('messages_rent_recovery')
    .on('messages')
    .columns(['rent_recovered_at', 'received_at'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('messages_rent_recovery').execute();
  await db.schema.alterTable('messages').dropColumn('rent_recovered_at').execute();
}
