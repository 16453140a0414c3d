// The account export (docs/export.md): written piece by piece from
// keyset-paged queries, so a mailbox of any size never sits in memory. It
// carries pointers to the bytes (blob key, CID once pinned), never bodies,
// and no credential material, lease or rate-window rows.
import type { Kysely } from 'kysely';
import { quotaUsage } from '../../core/store/account-api-queries.ts';
import type { Account } from '../../core/store/accounts-repo.ts';
import { AccountsRepo } from '../../core/store/accounts-repo.ts';
import { MessagesRepo, type StoredMessage } from '../../core/store/messages-repo.ts';
import { SettingsRepo } from '../../core/store/settings-repo.ts';
import type { Database } from '../../core/store/types.ts';

export const EXPORT_FORMAT = 'sealpost-account-export';
export const EXPORT_VERSION = 1;
const PAGE = 500;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function messageEntry(m: StoredMessage): unknown {
  return {
    id: m.id,
    uid: m.uid,
    received_at: iso(m.receivedAt),
    size: m.size,
    flags: m.flags,
    blob_key: m.blobKey,
    cid: m.cid,
    chain:
      m.emailAddress === null && m.txSignature === null
        ? null
        : { index: m.chainIndex, email_address: m.emailAddress, tx_signature: m.txSignature },
    deleted_at: iso(m.deletedAt),
  };
}

/** The document's head: everything but the mailboxes. */
export async function accountFacts(
  db: Kysely<Database>,
  account: Account,
): Promise<{ account: unknown; away_schedule: unknown; quota: unknown }> {
  const provider = await new AccountsRepo(db).getPinProvider(account.wallet);
  return {
    account: {
      wallet: account.wallet,
      created_at: iso(account.createdAt),
      updated_at: iso(account.updatedAt),
      source: account.source,
      timezone: account.timezone,
      expose_dnd_schedule: account.exposeDndSchedule,
      mail_password_set: account.mailPasswordSealed !== null,
      disabled_at: iso(account.disabledAt),
      pop3_dele_closes_on_chain: account.pop3DeleClosesOnChain,
      pin_provider: { configured: provider !== undefined, kind: provider?.kind ?? null },
    },
    away_schedule: await new SettingsRepo(db).getDndSchedule(account.wallet),
    quota: await quotaUsage(db, account.wallet),
  };
}

/** Yields the export document as JSON text chunks. */
export async function* exportDocument(
  db: Kysely<Database>,
  account: Account,
  now: () => number = Date.now,
): AsyncGenerator<string> {
  const head = { format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: iso(now()) };
  const facts = await accountFacts(db, account);
  const opening = JSON.stringify({ ...head, ...facts });
  yield `${opening.slice(0, -1)},"mailboxes":[`;
  const messages = new MessagesRepo(db);
  const mailboxes = await messages.listMailboxes(account.wallet);
  for (const [i, mb] of mailboxes.entries()) {
    const box = JSON.stringify({
      id: mb.id,
      name: mb.name,
      uid_validity: mb.uidValidity,
      uid_next: mb.uidNext,
      created_at: iso(mb.createdAt),
    });
    yield `${i > 0 ? ',' : ''}${box.slice(0, -1)},"messages":[`;
    let afterUid: number | undefined;
    let first = true;
    for (;;) {
      const page = await messages.listMessages(mb.id, { afterUid, limit: PAGE });
      if (page.length === 0) break;
      afterUid = page[page.length - 1]?.uid;
      yield (first ? '' : ',') + page.map((m) => JSON.stringify(messageEntry(m))).join(',');
      first = false;
      if (page.length < PAGE) break;
    }
    yield ']}';
  }
  yield ']}\n';
}
