// Folders of the operator's mail store as IMAP, POP3 and the server-mode
// webmail see them: the default set (INBOX and the special-use folders),
// user folders with a `/` hierarchy, and the message moves between them.
// Every query is scoped by wallet, so a bad id can never reach another
// account's rows. UIDs only grow: each mailbox hands out `uid_next` and
// bumps it in the same transaction; a folder created again under an old
// name gets a larger UIDVALIDITY (mail_counters), never a reused one.
import type { Kysely, Transaction } from 'kysely';
import { newSortableId } from '../log.ts';
import { notifyMailChanged } from './mail-events.ts';
import {
  INBOX,
  type Mailbox,
  MessagesRepo,
  nextModseqAndUids,
  type StoredMessage,
  toMailbox,
  toMessage,
  writeFlagsIn,
} from './messages-repo.ts';
import type { Database } from './types.ts';

export type SpecialUse = '\\Sent' | '\\Drafts' | '\\Trash' | '\\Junk';

/** Folders every account has besides INBOX (RFC 6154 special-use). */
export const SPECIAL_USE_FOLDERS: readonly { name: string; use: SpecialUse }[] = [
  { name: 'Sent', use: '\\Sent' },
  { name: 'Drafts', use: '\\Drafts' },
  { name: 'Trash', use: '\\Trash' },
  { name: 'Junk', use: '\\Junk' },
];

export const FOLDER_DELIMITER = '/';
const MAX_FOLDER_NAME = 200;
const MAX_FOLDER_DEPTH = 16;

export class FolderError extends Error {
  constructor(
    readonly code: 'exists' | 'not_found' | 'bad_name' | 'has_children' | 'protected',
    message: string,
  ) {
    super(message);
    this.name = 'FolderError';
  }
}

export function specialUseOf(name: string): SpecialUse | undefined {
  return SPECIAL_USE_FOLDERS.find((f) => f.name === name)?.use;
}

/** INBOX is case-insensitive (RFC 3501 §5.1); every other name is kept as given. */
export function normalizeFolderName(name: string): string {
  return name.toUpperCase() === INBOX ? INBOX : name;
}

/** Why a folder name is unusable, or null. */
export function folderNameProblem(name: string): string | null {
  if (name.length === 0) return 'the folder name is empty';
  if ([...name].length > MAX_FOLDER_NAME) return `folder names are at most ${MAX_FOLDER_NAME} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'folder names must not contain control characters';
  if (/[*%]/.test(name)) return 'folder names must not contain * or %';
  const levels = name.split(FOLDER_DELIMITER);
  if (levels.some((l) => l.length === 0))
    return 'folder names must not have empty levels (leading, trailing or double /)';
  if (levels.length > MAX_FOLDER_DEPTH) return `folders nest at most ${MAX_FOLDER_DEPTH} levels deep`;
  return null;
}

/** A message a reader can open: its row facts plus that reader's wrap. */
export interface ReadableMessage {
  id: string;
  uid: number;
  flags: string[];
  /** Size of the sealed blob (the plaintext size is known once opened). */
  sealedSize: number;
  receivedAt: number;
  blobKey: string;
  /** base64 wrap of the content key for the reader. */
  wrap: string;
  /** RFC 7162 MODSEQ of the message's last change. */
  modseq: number;
}

export interface AppendInput {
  wallet: string;
  mailboxId: string;
  blobKey: string;
  size: number;
  receivedAt: number;
  flags: string[];
  wraps: { readerId: string; wrap: string }[];
}

type Db = Kysely<Database> | Transaction<Database>;

export class FoldersRepo {
  private readonly db: Kysely<Database>;
  private readonly now: () => number;
  private readonly messages: MessagesRepo;

  constructor(db: Kysely<Database>, opts: { now?: () => number } = {}) {
    this.db = db;
    this.now = opts.now ?? Date.now;
    this.messages = new MessagesRepo(db, opts);
  }

  private async nextUidValidity(trx: Db, wallet: string): Promise<number> {
    const row = await trx
      .selectFrom('mail_counters')
      .select('last_uid_validity')
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    const next = Math.max(Math.floor(this.now() / 1000), row ? Number(row.last_uid_validity) + 1 : 1);
    if (row) {
      await trx
        .updateTable('mail_counters')
        .set({ last_uid_validity: next })
        .where('wallet', '=', wallet)
        .execute();
    } else {
      await trx.insertInto('mail_counters').values({ wallet, last_uid_validity: next }).execute();
    }
    return next;
  }

  private async insertMailbox(trx: Db, wallet: string, name: string): Promise<Mailbox> {
    const id = newSortableId();
    await trx
      .insertInto('mailboxes')
      .values({
        id,
        wallet,
        name,
        uid_validity: await this.nextUidValidity(trx, wallet),
        uid_next: 1,
        created_at: this.now(),
      })
      .execute();
    return toMailbox(
      await trx.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    );
  }

  /** INBOX and the special-use folders, created when missing (the account row must exist). */
  async ensureDefaultFolders(wallet: string): Promise<Mailbox[]> {
    const existing = new Set((await this.listMailboxes(wallet)).map((m) => m.name));
    const missing = [INBOX, ...SPECIAL_USE_FOLDERS.map((f) => f.name)].filter((n) => !existing.has(n));
    for (const name of missing) {
      try {
        await this.db.transaction().execute((trx) => this.insertMailbox(trx, wallet, name));
      } catch (err) {
        // A concurrent session created it first; the unique (wallet, name) holds.
        if (!(await this.getMailbox(wallet, name))) throw err;
      }
    }
    return this.listMailboxes(wallet);
  }

  listMailboxes(wallet: string): Promise<Mailbox[]> {
    return this.messages.listMailboxes(wallet);
  }

  async getMailbox(wallet: string, name: string): Promise<Mailbox | undefined> {
    const row = await this.db
      .selectFrom('mailboxes')
      .selectAll()
      .where('wallet', '=', wallet)
      .where('name', '=', normalizeFolderName(name))
      .executeTakeFirst();
    return row ? toMailbox(row) : undefined;
  }

  async getMailboxById(wallet: string, id: string): Promise<Mailbox | undefined> {
    const row = await this.db
      .selectFrom('mailboxes')
      .selectAll()
      .where('wallet', '=', wallet)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toMailbox(row) : undefined;
  }

  async createMailbox(wallet: string, rawName: string): Promise<Mailbox> {
    const name = normalizeFolderName(rawName);
    const problem = folderNameProblem(name);
    if (problem) throw new FolderError('bad_name', problem);
    if (await this.getMailbox(wallet, name)) throw new FolderError('exists', `folder ${name} already exists`);
    try {
      return await this.db.transaction().execute((trx) => this.insertMailbox(trx, wallet, name));
    } catch (err) {
      if (await this.getMailbox(wallet, name))
        throw new FolderError('exists', `folder ${name} already exists`);
      throw err;
    }
  }

  /** Deletes a folder and its messages; returns the removed copies (for pin release). */
  async deleteMailbox(wallet: string, rawName: string): Promise<StoredMessage[]> {
    const name = normalizeFolderName(rawName);
    if (name === INBOX) throw new FolderError('protected', 'INBOX cannot be deleted');
    const removed = await this.db.transaction().execute(async (trx) => {
      const box = await trx
        .selectFrom('mailboxes')
        .selectAll()
        .where('wallet', '=', wallet)
        .where('name', '=', name)
        .executeTakeFirst();
      if (!box) throw new FolderError('not_found', `no folder ${name}`);
      const names = await namesOf(trx, wallet);
      if (names.some((n) => n.name.startsWith(`${name}/`)))
        throw new FolderError('has_children', `folder ${name} has child folders; delete them first`);
      const rows = await trx
        .selectFrom('messages')
        .selectAll()
        .where('wallet', '=', wallet)
        .where('mailbox_id', '=', box.id)
        .execute();
      const ids = rows.map((r) => r.id);
      for (const chunk of chunks(ids, 500)) {
        await trx.deleteFrom('reader_wraps').where('message_id', 'in', chunk).execute();
        await trx.deleteFrom('messages').where('id', 'in', chunk).execute();
      }
      await trx.deleteFrom('mailboxes').where('id', '=', box.id).execute();
      return rows.map(toMessage);
    });
    this.changed(wallet);
    return removed;
  }

  /** After a commit: sessions showing these mailboxes (every one of the wallet's when absent) look again. */
  private changed(wallet: string, mailboxIds?: readonly string[]): void {
    notifyMailChanged(this.db, wallet, mailboxIds);
  }

  /**
   * Renames a folder and its children. Renaming INBOX moves its messages
   * into a new folder and leaves INBOX empty (RFC 3501 §6.3.5).
   */
  async renameMailbox(wallet: string, rawFrom: string, rawTo: string): Promise<void> {
    const from = normalizeFolderName(rawFrom);
    const to = normalizeFolderName(rawTo);
    const problem = folderNameProblem(to);
    if (problem) throw new FolderError('bad_name', problem);
    if (to === INBOX) throw new FolderError('exists', 'INBOX already exists');
    if (to === from || to.startsWith(`${from}/`)) {
      throw new FolderError('bad_name', 'a folder cannot be renamed to itself or into its own children');
    }
    // Renaming INBOX moves its messages out; any other rename keeps ids, UIDs and contents.
    let movedOut = false;
    await this.db.transaction().execute(async (trx) => {
      const box = await trx
        .selectFrom('mailboxes')
        .selectAll()
        .where('wallet', '=', wallet)
        .where('name', '=', from)
        .executeTakeFirst();
      if (!box) throw new FolderError('not_found', `no folder ${from}`);
      const names = await namesOf(trx, wallet);
      if (names.some((n) => n.name === to || n.name.startsWith(`${to}/`)))
        throw new FolderError('exists', `folder ${to} already exists`);
      if (from === INBOX) {
        const target = await this.insertMailbox(trx, wallet, to);
        const ids = (
          await trx
            .selectFrom('messages')
            .select('id')
            .where('mailbox_id', '=', box.id)
            .orderBy('uid')
            .execute()
        ).map((r) => r.id);
        await this.moveIn(trx, wallet, ids, target.id);
        movedOut = true;
        return;
      }
      const children = names.filter((n) => n.name.startsWith(`${from}/`));
      // The folder keeps its id, UIDVALIDITY and UIDs: the messages did not change.
      await trx.updateTable('mailboxes').set({ name: to }).where('id', '=', box.id).execute();
      for (const c of children) {
        await trx
          .updateTable('mailboxes')
          .set({ name: to + c.name.slice(from.length) })
          .where('id', '=', c.id)
          .execute();
      }
    });
    if (movedOut) this.changed(wallet);
  }

  /**
   * Messages of a folder that `readerId` holds a wrap for (and not marked
   * deleted), in UID order; `only` narrows to ids with a prefix (e.g. the
   * server's Sent copies, `s.`) received at or after a time.
   */
  async listReadable(
    wallet: string,
    mailboxId: string,
    readerId: string,
    only?: { idPrefix: string; since: number },
  ): Promise<ReadableMessage[]> {
    let query = this.db
      .selectFrom('messages')
      .innerJoin('reader_wraps', (j) =>
        j.onRef('reader_wraps.message_id', '=', 'messages.id').on('reader_wraps.reader_id', '=', readerId),
      )
      .select([
        'messages.id as id',
        'messages.uid as uid',
        'messages.flags as flags',
        'messages.size as size',
        'messages.received_at as received_at',
        'messages.blob_key as blob_key',
        'messages.modseq as modseq',
        'reader_wraps.wrap as wrap',
      ])
      .where('messages.wallet', '=', wallet)
      .where('messages.mailbox_id', '=', mailboxId)
      .where('messages.deleted_at', 'is', null);
    if (only) {
      // Ids are ULID-based ([0-9A-Za-z.]): no LIKE wildcard can occur in a prefix.
      query = query
        .where('messages.id', 'like', `${only.idPrefix}%`)
        .where('messages.received_at', '>=', only.since);
    }
    const rows = await query.orderBy('messages.uid').execute();
    return rows.map((r) => ({
      id: r.id,
      uid: Number(r.uid),
      flags: JSON.parse(r.flags) as string[],
      sealedSize: Number(r.size),
      receivedAt: Number(r.received_at),
      blobKey: r.blob_key,
      wrap: r.wrap,
      modseq: Number(r.modseq),
    }));
  }

  /** A cheap fingerprint of a folder's readable content, to notice new, removed or re-flagged mail. */
  async readableStamp(wallet: string, mailboxId: string, readerId: string): Promise<string> {
    const row = await this.db
      .selectFrom('messages')
      .innerJoin('reader_wraps', (j) =>
        j.onRef('reader_wraps.message_id', '=', 'messages.id').on('reader_wraps.reader_id', '=', readerId),
      )
      .select((eb) => [
        eb.fn.countAll().as('n'),
        eb.fn.max('messages.uid').as('max_uid'),
        eb.selectFrom('mailboxes').select('highest_modseq').where('id', '=', mailboxId).as('highest_modseq'),
      ])
      .where('messages.wallet', '=', wallet)
      .where('messages.mailbox_id', '=', mailboxId)
      .where('messages.deleted_at', 'is', null)
      .executeTakeFirst();
    return `${Number(row?.n ?? 0)}:${Number(row?.max_uid ?? 0)}:${Number(row?.highest_modseq ?? 0)}`;
  }

  /** Stores an appended message (already sealed) with its wraps; the mailbox's next UID. */
  async appendMessage(input: AppendInput): Promise<StoredMessage> {
    const id = `a.${newSortableId()}`;
    const stored = await this.db.transaction().execute((trx) => this.insertAppended(trx, id, input));
    this.changed(input.wallet, [input.mailboxId]);
    return stored;
  }

  /**
   * Stores a copy the server makes itself — the Sent copy of submitted mail —
   * in the folder named `folder`, created when missing (the account row must
   * exist). Idempotent by `id`: an existing copy is returned unchanged.
   */
  async storeCopy(
    input: Omit<AppendInput, 'mailboxId'> & { id: string; folder: string },
  ): Promise<{ created: boolean; message: StoredMessage }> {
    let box = await this.getMailbox(input.wallet, input.folder);
    if (!box) {
      try {
        box = await this.createMailbox(input.wallet, input.folder);
      } catch (err) {
        // Another session made it meanwhile.
        box = await this.getMailbox(input.wallet, input.folder);
        if (!box) throw err;
      }
    }
    const mailboxId = box.id;
    const out = await this.db.transaction().execute(async (trx) => {
      const existing = await trx
        .selectFrom('messages')
        .selectAll()
        .where('id', '=', input.id)
        .executeTakeFirst();
      if (existing) return { created: false, message: toMessage(existing) };
      return { created: true, message: await this.insertAppended(trx, input.id, { ...input, mailboxId }) };
    });
    if (out.created) this.changed(input.wallet, [mailboxId]);
    return out;
  }

  private async insertAppended(
    trx: Transaction<Database>,
    id: string,
    input: AppendInput,
  ): Promise<StoredMessage> {
    const { uid, modseq } = await this.takeUids(trx, input.wallet, input.mailboxId, 1);
    const at = this.now();
    await trx
      .insertInto('messages')
      .values({
        id,
        wallet: input.wallet,
        mailbox_id: input.mailboxId,
        uid,
        blob_key: input.blobKey,
        size: input.size,
        received_at: input.receivedAt,
        cid: null,
        pinned_by_operator: 0,
        chain_index: null,
        email_address: null,
        tx_signature: null,
        published_by_us: 0,
        flags: JSON.stringify([...new Set(input.flags)].sort()),
        modseq,
        deleted_at: null,
      })
      .execute();
    for (const w of input.wraps) {
      await trx
        .insertInto('reader_wraps')
        .values({
          message_id: id,
          reader_id: w.readerId,
          wallet: input.wallet,
          wrap: w.wrap,
          created_at: at,
        })
        .execute();
    }
    return toMessage(
      await trx.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    );
  }

  /** Reserves `count` UIDs of a mailbox of `wallet` and its next mod-sequence; returns the first UID and it. */
  private async takeUids(
    trx: Db,
    wallet: string,
    mailboxId: string,
    count: number,
  ): Promise<{ uid: number; modseq: number }> {
    const taken = await nextModseqAndUids(trx, mailboxId, count, wallet);
    if (!taken) throw new FolderError('not_found', 'no such folder');
    return { uid: taken.firstUid, modseq: taken.modseq };
  }

  private async moveIn(
    trx: Db,
    wallet: string,
    ids: string[],
    toMailboxId: string,
  ): Promise<{ id: string; uid: number }[]> {
    if (ids.length === 0) return [];
    let { uid, modseq } = await this.takeUids(trx, wallet, toMailboxId, ids.length);
    const out: { id: string; uid: number }[] = [];
    for (const id of ids) {
      const r = await trx
        .updateTable('messages')
        .set({ mailbox_id: toMailboxId, uid, modseq })
        .where('id', '=', id)
        .where('wallet', '=', wallet)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) throw new FolderError('not_found', `no message ${id}`);
      out.push({ id, uid });
      uid++;
    }
    return out;
  }

  /** Moves messages (in the given order) to another folder: same rows, new UIDs there. */
  async moveMessages(
    wallet: string,
    ids: string[],
    toMailboxId: string,
  ): Promise<{ id: string; uid: number }[]> {
    const moved = await this.db.transaction().execute((trx) => this.moveIn(trx, wallet, ids, toMailboxId));
    // The folders they left are not known here without another query: every folder of the wallet looks.
    if (moved.length > 0) this.changed(wallet);
    return moved;
  }

  /**
   * Copies messages to another folder: new rows sharing the sealed blob and
   * the wraps. A copy is not the chain's record of the message, so deleting
   * it never releases the pin or closes the Email account.
   */
  async copyMessages(
    wallet: string,
    ids: string[],
    toMailboxId: string,
  ): Promise<{ sourceId: string; id: string; uid: number }[]> {
    if (ids.length === 0) return [];
    const copied = await this.db.transaction().execute(async (trx) => {
      let { uid, modseq } = await this.takeUids(trx, wallet, toMailboxId, ids.length);
      const at = this.now();
      const out: { sourceId: string; id: string; uid: number }[] = [];
      for (const sourceId of ids) {
        const src = await trx
          .selectFrom('messages')
          .selectAll()
          .where('id', '=', sourceId)
          .where('wallet', '=', wallet)
          .executeTakeFirst();
        if (!src) throw new FolderError('not_found', `no message ${sourceId}`);
        const id = `c.${newSortableId()}`;
        await trx
          .insertInto('messages')
          .values({
            ...src,
            id,
            mailbox_id: toMailboxId,
            uid,
            modseq,
            pinned_by_operator: 0,
            published_by_us: 0,
            deleted_at: null,
          })
          .execute();
        const wraps = await trx
          .selectFrom('reader_wraps')
          .selectAll()
          .where('message_id', '=', sourceId)
          .execute();
        for (const w of wraps) {
          await trx
            .insertInto('reader_wraps')
            .values({ message_id: id, reader_id: w.reader_id, wallet, wrap: w.wrap, created_at: at })
            .execute();
        }
        out.push({ sourceId, id, uid });
        uid++;
      }
      return out;
    });
    this.changed(wallet, [toMailboxId]);
    return copied;
  }

  /** Removes messages of one folder; returns the removed rows (for pin release). */
  async expunge(wallet: string, mailboxId: string, ids: string[]): Promise<StoredMessage[]> {
    if (ids.length === 0) return [];
    const removed = await this.db.transaction().execute(async (trx) => {
      const removed: StoredMessage[] = [];
      for (const chunk of chunks(ids, 500)) {
        const rows = await trx
          .selectFrom('messages')
          .selectAll()
          .where('wallet', '=', wallet)
          .where('mailbox_id', '=', mailboxId)
          .where('id', 'in', chunk)
          .execute();
        const found = rows.map((r) => r.id);
        if (found.length === 0) continue;
        await trx.deleteFrom('reader_wraps').where('message_id', 'in', found).execute();
        await trx.deleteFrom('messages').where('id', 'in', found).execute();
        removed.push(...rows.map(toMessage));
      }
      // An expunge is a change of the mailbox too (HIGHESTMODSEQ moves on).
      if (removed.length > 0) await nextModseqAndUids(trx, mailboxId, 0, wallet);
      return removed;
    });
    if (removed.length > 0) this.changed(wallet, [mailboxId]);
    return removed;
  }

  /** Writes new flag sets for messages of `wallet`, in one transaction; returns each one's new MODSEQ. */
  async writeFlags(wallet: string, updates: { id: string; flags: string[] }[]): Promise<Map<string, number>> {
    if (updates.length === 0) return new Map();
    const touched = new Set<string>();
    const written = await this.db.transaction().execute((trx) => writeFlagsIn(trx, wallet, updates, touched));
    if (touched.size > 0) this.changed(wallet, [...touched]);
    return written;
  }
}

/** Folder names are few per account; prefix matching is done here rather than with LIKE (no portable escape). */
async function namesOf(trx: Db, wallet: string): Promise<{ id: string; name: string }[]> {
  return trx.selectFrom('mailboxes').select(['id', 'name']).where('wallet', '=', wallet).execute();
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
