// The operator's mail store: mailboxes, delivered copies and their
// per-reader wraps. Rows point at sealed bytes in the blob store; no
// plaintext ever reaches this layer. Delivery is idempotent per copy id so a
// retried pipeline job never stores a message twice.
import type { Kysely, Selectable, Transaction } from 'kysely';
import { newSortableId } from '../log.ts';
import { markIntentStoredIn } from './intents-repo.ts';
import { notifyMailChanged } from './mail-events.ts';
import type { Database, MailboxesTable, MessagesTable } from './types.ts';
import { toBool } from './types.ts';

export const INBOX = 'INBOX';

export interface Mailbox {
  id: string;
  wallet: string;
  name: string;
  uidValidity: number;
  uidNext: number;
  createdAt: number;
  /** RFC 7162 HIGHESTMODSEQ. */
  highestModseq: number;
}

export interface StoredMessage {
  id: string;
  wallet: string;
  mailboxId: string;
  uid: number;
  blobKey: string;
  size: number;
  receivedAt: number;
  cid: string | null;
  pinnedByOperator: boolean;
  chainIndex: string | null;
  emailAddress: string | null;
  txSignature: string | null;
  publishedByUs: boolean;
  flags: string[];
  deletedAt: number | null;
  /** When its Email account's rent was recovered (closed on chain; delivery/rent-recovery.ts), or null. */
  rentRecoveredAt: number | null;
}

export interface DeliveredCopy {
  id: string;
  wallet: string;
  blobKey: string;
  size: number;
  receivedAt: number;
  cid: string | null;
  pinnedByOperator: boolean;
  chainIndex: string | null;
  emailAddress: string | null;
  txSignature: string | null;
  publishedByUs: boolean;
  /** Wraps for operator-kept readers (base64), stored in the same transaction. */
  wraps?: { readerId: string; wrap: string }[];
  /** The folder it is filed in (default INBOX; `Junk` for mail rspamd flagged), created when missing. */
  folder?: string;
}

export interface ReaderWrap {
  messageId: string;
  readerId: string;
  wallet: string;
  wrap: string;
  createdAt: number;
}

export function toMailbox(row: Selectable<MailboxesTable>): Mailbox {
  return {
    id: row.id,
    wallet: row.wallet,
    name: row.name,
    uidValidity: Number(row.uid_validity),
    uidNext: Number(row.uid_next),
    createdAt: Number(row.created_at),
    highestModseq: Number(row.highest_modseq),
  };
}

export function toMessage(row: Selectable<MessagesTable>): StoredMessage {
  return {
    id: row.id,
    wallet: row.wallet,
    mailboxId: row.mailbox_id,
    uid: Number(row.uid),
    blobKey: row.blob_key,
    size: Number(row.size),
    receivedAt: Number(row.received_at),
    cid: row.cid,
    pinnedByOperator: toBool(row.pinned_by_operator),
    chainIndex: row.chain_index,
    emailAddress: row.email_address,
    txSignature: row.tx_signature,
    publishedByUs: toBool(row.published_by_us),
    flags: JSON.parse(row.flags) as string[],
    deletedAt: row.deleted_at === null ? null : Number(row.deleted_at),
    rentRecoveredAt:
      row.rent_recovered_at === null || row.rent_recovered_at === undefined
        ? null
        : Number(row.rent_recovered_at),
  };
}

/** Most delivered copies committed in one grouped transaction (MessagesRepo groupCommit). */
const STORE_GROUP_MAX = 128;

interface GroupedStore {
  copy: DeliveredCopy;
  resolve(result: StoreResult): void;
  reject(err: unknown): void;
}

type StoreResult = { created: boolean; message: StoredMessage };

export interface MessagesRepoOptions {
  now?: () => number;
  /**
   * Commit the copies that storeDelivered is given while an earlier group
   * commits in one transaction (one commit, so one WAL fsync, for all of
   * them); the delivery pipeline's many concurrent jobs set it.
   */
  groupCommit?: boolean;
}

export class MessagesRepo {
  private readonly db: Kysely<Database>;
  private readonly now: () => number;
  private readonly groupCommit: boolean;
  private grouped: GroupedStore[] = [];
  private draining = false;
  /** Grouped transactions committed and the copies in them, for tests and the bench. */
  readonly groupStats = { groups: 0, copies: 0, fallbacks: 0 };

  constructor(db: Kysely<Database>, opts: MessagesRepoOptions = {}) {
    this.db = db;
    this.now = opts.now ?? Date.now;
    this.groupCommit = opts.groupCommit ?? false;
  }

  private async ensureMailboxIn(trx: Transaction<Database> | Kysely<Database>, wallet: string, name: string) {
    const at = this.now();
    await trx
      .insertInto('mailboxes')
      .values({
        id: newSortableId(),
        wallet,
        name,
        uid_validity: Math.floor(at / 1000),
        uid_next: 1,
        created_at: at,
      })
      .onConflict((oc) => oc.columns(['wallet', 'name']).doNothing())
      .execute();
    const row = await trx
      .selectFrom('mailboxes')
      .selectAll()
      .where('wallet', '=', wallet)
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return toMailbox(row);
  }

  /** The named mailbox of an existing account, created when missing. */
  async ensureMailbox(wallet: string, name = INBOX): Promise<Mailbox> {
    return this.ensureMailboxIn(this.db, wallet, name);
  }

  /**
   * Stores a delivered copy in the wallet's INBOX, creating the account
   * (source `delivery`) and the mailbox on first delivery. A copy id that
   * already exists is returned unchanged (`created: false`).
   */
  async storeDelivered(copy: DeliveredCopy): Promise<StoreResult> {
    if (!this.groupCommit) return this.storeAlone(copy);
    return new Promise<StoreResult>((resolve, reject) => {
      this.grouped.push({ copy, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // After this turn's I/O, so the copies of jobs finishing together join one group.
        setImmediate(() => void this.drainGrouped());
      }
    });
  }

  private async storeAlone(copy: DeliveredCopy): Promise<StoreResult> {
    const result = await this.db.transaction().execute((trx) => this.storeIn(trx, copy));
    this.notifyStored([result]);
    return result;
  }

  /** After a commit: each wallet whose mailbox got a new copy, once per mailbox (IMAP IDLE push). */
  private notifyStored(results: StoreResult[]): void {
    const byWallet = new Map<string, Set<string>>();
    for (const r of results) {
      if (!r.created) continue;
      const boxes = byWallet.get(r.message.wallet) ?? new Set<string>();
      boxes.add(r.message.mailboxId);
      byWallet.set(r.message.wallet, boxes);
    }
    for (const [wallet, boxes] of byWallet) notifyMailChanged(this.db, wallet, [...boxes]);
  }

  // Group commit: the copies waiting when a group starts go into one
  // transaction, so a commit (SQLite's WAL fsync, PostgreSQL's WAL flush) is
  // shared by all of them; copies arriving meanwhile form the next group.
  // Each caller is answered only after the commit that holds its row. The
  // group is sorted by wallet, so two processes' groups take mailbox rows in
  // one order. When a group fails (one bad copy, a deadlock, a lost
  // connection) every copy of it is stored again on its own: storeIn is
  // idempotent per copy id, so a copy whose group did commit is found and
  // returned unchanged, and one bad copy fails only its own caller.
  private async drainGrouped(): Promise<void> {
    while (this.grouped.length > 0) {
      const group = this.grouped.splice(0, STORE_GROUP_MAX);
      group.sort((a, b) => (a.copy.wallet < b.copy.wallet ? -1 : a.copy.wallet > b.copy.wallet ? 1 : 0));
      try {
        const results = await this.db.transaction().execute(async (trx) => {
          const out: StoreResult[] = [];
          for (const g of group) out.push(await this.storeIn(trx, g.copy));
          return out;
        });
        this.groupStats.groups++;
        this.groupStats.copies += group.length;
        this.notifyStored(results);
        group.forEach((g, i) => {
          g.resolve(results[i] as StoreResult);
        });
      } catch (err) {
        if (group.length === 1) {
          (group[0] as GroupedStore).reject(err);
          continue;
        }
        this.groupStats.fallbacks++;
        for (const g of group) await this.storeAlone(g.copy).then(g.resolve, g.reject);
      }
    }
    this.draining = false;
  }

  // The common case, a wallet whose INBOX exists, is three statements: the
  // copy-id check, the UID taken from the INBOX (its row exists only with
  // the account's, by foreign key) and the insert. The account and the INBOX
  // are made only when the UID cannot be taken.
  private async storeIn(trx: Transaction<Database>, copy: DeliveredCopy): Promise<StoreResult> {
    const existing = await trx
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', copy.id)
      .executeTakeFirst();
    if (existing) return { created: false, message: toMessage(existing) };
    const at = this.now();
    const folder = copy.folder ?? INBOX;
    const takeUid = (where: { id: string } | { wallet: string }) => {
      let q = trx
        .updateTable('mailboxes')
        .set((eb) => ({ uid_next: eb('uid_next', '+', 1), highest_modseq: eb('highest_modseq', '+', 1) }));
      q =
        'id' in where
          ? q.where('id', '=', where.id)
          : q.where('wallet', '=', where.wallet).where('name', '=', folder);
      return q.returning(['id', 'uid_next', 'highest_modseq']).executeTakeFirst();
    };
    let bumped = await takeUid({ wallet: copy.wallet });
    if (!bumped) {
      await trx
        .insertInto('accounts')
        .values({
          wallet: copy.wallet,
          created_at: at,
          updated_at: at,
          source: 'delivery',
          mail_password_sealed: null,
          timezone: null,
          expose_dnd_schedule: 0,
          disabled_at: null,
        })
        .onConflict((oc) => oc.column('wallet').doNothing())
        .execute();
      if (folder !== INBOX) await this.ensureMailboxIn(trx, copy.wallet, INBOX);
      const mailbox = await this.ensureMailboxIn(trx, copy.wallet, folder);
      bumped = await takeUid({ id: mailbox.id });
      if (!bumped) throw new Error(`no mailbox ${mailbox.id}`);
    }
    const row = {
      id: copy.id,
      wallet: copy.wallet,
      mailbox_id: bumped.id,
      uid: Number(bumped.uid_next) - 1,
      blob_key: copy.blobKey,
      size: copy.size,
      received_at: copy.receivedAt,
      cid: copy.cid,
      pinned_by_operator: copy.pinnedByOperator ? 1 : 0,
      chain_index: copy.chainIndex,
      email_address: copy.emailAddress,
      tx_signature: copy.txSignature,
      published_by_us: copy.publishedByUs ? 1 : 0,
      flags: '[]',
      modseq: Number(bumped.highest_modseq),
      deleted_at: null,
      rent_recovered_at: null,
    } as const;
    await trx.insertInto('messages').values(row).execute();
    for (const w of copy.wraps ?? []) {
      await trx
        .insertInto('reader_wraps')
        .values({
          message_id: copy.id,
          reader_id: w.readerId,
          wallet: copy.wallet,
          wrap: w.wrap,
          created_at: at,
        })
        .execute();
    }
    // The copy's SendMail intent (delivery_intents, if any) is finished with it, in this transaction.
    await markIntentStoredIn(trx, copy.id, at);
    // The row as written (every column is given above): no read back.
    return { created: true, message: toMessage(row) };
  }

  async get(id: string): Promise<StoredMessage | undefined> {
    const row = await this.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toMessage(row) : undefined;
  }

  async listMailboxes(wallet: string): Promise<Mailbox[]> {
    const rows = await this.db
      .selectFrom('mailboxes')
      .selectAll()
      .where('wallet', '=', wallet)
      .orderBy('name')
      .execute();
    return rows.map(toMailbox);
  }

  /** Messages of a mailbox in UID order; keyset paging with `afterUid`. */
  async listMessages(
    mailboxId: string,
    opts: { afterUid?: number; limit?: number } = {},
  ): Promise<StoredMessage[]> {
    const limit = Math.min(Math.max(opts.limit ?? 500, 1), 5000);
    let q = this.db
      .selectFrom('messages')
      .selectAll()
      .where('mailbox_id', '=', mailboxId)
      .orderBy('uid')
      .limit(limit);
    if (opts.afterUid !== undefined) q = q.where('uid', '>', opts.afterUid);
    return (await q.execute()).map(toMessage);
  }

  /** Every copy of a wallet (all mailboxes), oldest first; keyset paging by id. */
  async listForWallet(
    wallet: string,
    opts: { after?: string; limit?: number } = {},
  ): Promise<StoredMessage[]> {
    const limit = Math.min(Math.max(opts.limit ?? 500, 1), 5000);
    let q = this.db
      .selectFrom('messages')
      .selectAll()
      .where('wallet', '=', wallet)
      .orderBy('id')
      .limit(limit);
    if (opts.after !== undefined) q = q.where('id', '>', opts.after);
    return (await q.execute()).map(toMessage);
  }

  async setFlags(id: string, flags: string[]): Promise<boolean> {
    const written = await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('messages')
        .select(['wallet', 'mailbox_id'])
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return false;
      await writeFlagsIn(trx, row.wallet, [{ id, flags }]);
      return row;
    });
    if (!written) return false;
    notifyMailChanged(this.db, written.wallet, [written.mailbox_id]);
    return true;
  }

  /**
   * The rent-recovery sweep's candidates (delivery/rent-recovery.ts): copies
   * whose Email account this deployment published, received before `before`
   * (Unix ms) and not yet recorded as recovered, oldest first; keyset paging
   * with `after` (the last row's received_at and id).
   */
  async listRentRecoverable(
    before: number,
    opts: { after?: { receivedAt: number; id: string }; limit?: number } = {},
  ): Promise<StoredMessage[]> {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 5000);
    let q = this.db
      .selectFrom('messages')
      .selectAll()
      .where('rent_recovered_at', 'is', null)
      .where('received_at', '<', before)
      .where('published_by_us', '=', 1)
      .where('email_address', 'is not', null)
      .orderBy('received_at')
      .orderBy('id')
      .limit(limit);
    const after = opts.after;
    if (after !== undefined)
      q = q.where((eb) =>
        eb.or([
          eb('received_at', '>', after.receivedAt),
          eb.and([eb('received_at', '=', after.receivedAt), eb('id', '>', after.id)]),
        ]),
      );
    return (await q.execute()).map(toMessage);
  }

  /**
   * Records that the Email account `emailAddress` of copy `id` is closed (its
   * rent recovered) at `at`. False when it already was, or the copy is gone
   * (deleted meanwhile): the caller counts a recovery only once.
   */
  async markRentRecovered(id: string, emailAddress: string, at: number): Promise<boolean> {
    const r = await this.db
      .updateTable('messages')
      .set({ rent_recovered_at: at })
      .where('id', '=', id)
      .where('email_address', '=', emailAddress)
      .where('rent_recovered_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Of the copies `ids`, those that still exist and are not recorded as rent-recovered. */
  async rentUnrecovered(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('messages')
      .select('id')
      .where('id', 'in', ids)
      .where('rent_recovered_at', 'is', null)
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /** Removes one copy and its wraps; returns the removed row (for unpin/DeleteMail follow-ups). */
  async delete(id: string): Promise<StoredMessage | undefined> {
    const removed = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      await trx.deleteFrom('reader_wraps').where('message_id', '=', id).execute();
      await trx.deleteFrom('messages').where('id', '=', id).execute();
      return toMessage(row);
    });
    if (removed) notifyMailChanged(this.db, removed.wallet, [removed.mailboxId]);
    return removed;
  }

  async addReaderWrap(messageId: string, wallet: string, readerId: string, wrap: string): Promise<void> {
    await this.db
      .insertInto('reader_wraps')
      .values({ message_id: messageId, reader_id: readerId, wallet, wrap, created_at: this.now() })
      .onConflict((oc) => oc.columns(['message_id', 'reader_id']).doUpdateSet({ wrap }))
      .execute();
    // The message becomes readable to that reader (its folder's count changes for it).
    notifyMailChanged(this.db, wallet);
  }

  async getReaderWrap(messageId: string, readerId: string): Promise<ReaderWrap | undefined> {
    const row = await this.db
      .selectFrom('reader_wraps')
      .selectAll()
      .where('message_id', '=', messageId)
      .where('reader_id', '=', readerId)
      .executeTakeFirst();
    return row
      ? {
          messageId: row.message_id,
          readerId: row.reader_id,
          wallet: row.wallet,
          wrap: row.wrap,
          createdAt: Number(row.created_at),
        }
      : undefined;
  }

  /** Deletes every wrap of a wallet (the admin sweep); returns how many went. */
  async deleteReaderWrapsForWallet(wallet: string): Promise<number> {
    const r = await this.db.deleteFrom('reader_wraps').where('wallet', '=', wallet).executeTakeFirst();
    notifyMailChanged(this.db, wallet);
    return Number(r.numDeletedRows);
  }

  /** Deletes every mailbox and copy of a wallet (the admin sweep); returns how many copies went. */
  async deleteAllForWallet(wallet: string): Promise<number> {
    const copies = await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('reader_wraps').where('wallet', '=', wallet).execute();
      const r = await trx.deleteFrom('messages').where('wallet', '=', wallet).executeTakeFirst();
      await trx.deleteFrom('mailboxes').where('wallet', '=', wallet).execute();
      return Number(r.numDeletedRows);
    });
    notifyMailChanged(this.db, wallet);
    return copies;
  }
}

/**
 * Writes new flag sets for messages of `wallet` inside `trx`: each mailbox
 * involved takes its next mod-sequence once, and its messages record it.
 * Returns each written message's new MODSEQ; `touched` collects the
 * mailboxes involved.
 */
export async function writeFlagsIn(
  trx: Kysely<Database> | Transaction<Database>,
  wallet: string,
  updates: { id: string; flags: string[] }[],
  touched?: Set<string>,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (updates.length === 0) return out;
  const rows = await trx
    .selectFrom('messages')
    .select(['id', 'mailbox_id'])
    .where('wallet', '=', wallet)
    .where(
      'id',
      'in',
      updates.map((u) => u.id),
    )
    .execute();
  const mailboxOf = new Map(rows.map((r) => [r.id, r.mailbox_id]));
  const modseqOf = new Map<string, number>();
  for (const mailboxId of new Set(mailboxOf.values())) {
    modseqOf.set(mailboxId, await nextModseq(trx, mailboxId));
    touched?.add(mailboxId);
  }
  for (const u of updates) {
    const mailboxId = mailboxOf.get(u.id);
    if (mailboxId === undefined) continue;
    const modseq = modseqOf.get(mailboxId) as number;
    await trx
      .updateTable('messages')
      .set({ flags: JSON.stringify([...new Set(u.flags)].sort()), modseq })
      .where('id', '=', u.id)
      .where('wallet', '=', wallet)
      .execute();
    out.set(u.id, modseq);
  }
  return out;
}

/** Takes a mailbox's next mod-sequence (and, with `uids`, that many UIDs); returns both. */
export async function nextModseqAndUids(
  trx: Kysely<Database> | Transaction<Database>,
  mailboxId: string,
  uids: number,
  wallet?: string,
): Promise<{ modseq: number; firstUid: number } | undefined> {
  let q = trx
    .updateTable('mailboxes')
    .set((eb) => ({ uid_next: eb('uid_next', '+', uids), highest_modseq: eb('highest_modseq', '+', 1) }))
    .where('id', '=', mailboxId);
  if (wallet !== undefined) q = q.where('wallet', '=', wallet);
  const row = await q.returning(['uid_next', 'highest_modseq']).executeTakeFirst();
  if (!row) return undefined;
  return { modseq: Number(row.highest_modseq), firstUid: Number(row.uid_next) - uids };
}

async function nextModseq(trx: Kysely<Database> | Transaction<Database>, mailboxId: string): Promise<number> {
  const taken = await nextModseqAndUids(trx, mailboxId, 0);
  if (!taken) throw new Error(`no mailbox ${mailboxId}`);
  return taken.modseq;
}
