// One logged-in session's view of its account's mail (IMAP and POP3 alike):
// the folders, and messages opened with the session's unlocked reader key.
// Plaintext exists only in this object's memory (a bounded cache, dropped
// with the session); appended messages are sealed before they are stored.
import bs58 from 'bs58';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../../core/blobs/blob-store.ts';
import {
  FoldersRepo,
  type Mailbox,
  type ReadableMessage,
  type StoredMessage,
  specialUseOf,
} from '../../../core/store/index.ts';
import type { Database } from '../../../core/store/types.ts';
import type { UnlockedReaderKey } from '../../../mail/reader-keys/index.ts';
import {
  openSealedWithWrap,
  type SealEnvelope,
  sealMessage,
  walletEncryptionPublicKey,
  wrapContentKey,
} from '../../../mail/seal/index.ts';
import { learnKindOf, type SpamLearner } from '../../../mail/spam/learn.ts';
import { header, type MimeNode, parseMime } from '../mime/mime-tree.ts';
import type { SearchDoc } from '../search/search-eval.ts';

export interface MailAccessDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** The X25519 key a wallet's own copies are sealed to (its MailboxKey, else the wallet key); default the wallet key. */
  sealKeyOf?: (wallet: string) => Promise<Uint8Array>;
  /** Removed copies, for releasing the operator pin / closing the Email account of chain-published ones. */
  releaseCopies?: (rows: StoredMessage[]) => Promise<void>;
  /** Trains the spam filter from moves and copies into and out of Junk (src/mail/spam/learn.ts); absent: no training. */
  learner?: Pick<SpamLearner, 'submit'>;
  /** Plaintext kept per session for repeated fetches; default 32 MiB. */
  cacheBytes?: number;
  now?: () => number;
}

export interface OpenedMessage {
  raw: Buffer;
  envelope: SealEnvelope;
  tree?: MimeNode;
  search?: SearchDoc;
}

export class MessageUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MessageUnavailableError';
  }
}

/** How long after a send the server's Sent copy stands in for a client's appended one. */
const SENT_COPY_WINDOW_MS = 15 * 60_000;

function messageIdOf(raw: Buffer): string | null {
  const value = header(parseMime(raw), 'message-id')?.replace(/\s+/g, '');
  return value ? value : null;
}

export interface SealedRef {
  id: string;
  blobKey: string;
  wrap: string;
}

export class MailAccess {
  readonly folders: FoldersRepo;
  readonly wallet: string;
  readonly readerId: string;
  private readonly reader: UnlockedReaderKey;
  private readonly cache = new Map<string, OpenedMessage>();
  private cached = 0;
  private readonly sizes = new Map<string, number>();
  private readonly cacheLimit: number;

  constructor(
    private readonly deps: MailAccessDeps,
    reader: UnlockedReaderKey,
  ) {
    this.folders = new FoldersRepo(deps.db, { now: deps.now });
    this.reader = reader;
    this.wallet = reader.wallet;
    this.readerId = reader.readerId;
    this.cacheLimit = deps.cacheBytes ?? 32 * 1024 * 1024;
  }

  /** Opens a message with the session's reader key (cached). */
  async open(ref: SealedRef): Promise<OpenedMessage> {
    const hit = this.cache.get(ref.id);
    if (hit) {
      this.cache.delete(ref.id);
      this.cache.set(ref.id, hit);
      return hit;
    }
    let opened: OpenedMessage;
    try {
      const sealed = await this.deps.blobs.read(ref.blobKey);
      const r = await openSealedWithWrap(
        new Uint8Array(sealed.buffer, sealed.byteOffset, sealed.byteLength),
        new Uint8Array(Buffer.from(ref.wrap, 'base64')),
        this.reader.keypair,
      );
      opened = { raw: Buffer.from(r.raw.buffer, r.raw.byteOffset, r.raw.byteLength), envelope: r.envelope };
    } catch (err) {
      throw new MessageUnavailableError(`message ${ref.id} could not be opened: ${(err as Error).message}`);
    }
    this.sizes.set(ref.id, opened.raw.length);
    this.remember(ref.id, opened);
    return opened;
  }

  private remember(id: string, opened: OpenedMessage): void {
    if (opened.raw.length > this.cacheLimit / 4) return;
    this.cache.set(id, opened);
    this.cached += opened.raw.length;
    while (this.cached > this.cacheLimit) {
      const oldest = this.cache.keys().next();
      if (oldest.done) break;
      const gone = this.cache.get(oldest.value);
      this.cache.delete(oldest.value);
      this.cached -= gone?.raw.length ?? 0;
    }
  }

  /** The plaintext size (opens the message the first time). */
  async rawSize(ref: SealedRef): Promise<number> {
    return this.sizes.get(ref.id) ?? (await this.open(ref)).raw.length;
  }

  /** Seals a message to the wallet's key and wraps it for this reader, then stores it in `mailbox`. */
  async append(mailbox: Mailbox, raw: Buffer, flags: string[], receivedAt: number): Promise<StoredMessage> {
    const recipient = this.deps.sealKeyOf
      ? await this.deps.sealKeyOf(this.wallet)
      : walletEncryptionPublicKey(bs58.decode(this.wallet));
    const { sealed, contentKey } = await sealMessage({
      envelope: { version: 1, from: '', to: this.wallet, receivedAt },
      raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength),
      recipientPublicKey: recipient,
    });
    let wrap: Uint8Array;
    try {
      wrap = await wrapContentKey(contentKey, this.reader.keypair.publicKey);
    } finally {
      contentKey.fill(0);
    }
    const stored = await this.deps.blobs.putContent(sealed);
    return this.folders.appendMessage({
      wallet: this.wallet,
      mailboxId: mailbox.id,
      blobKey: stored.key,
      size: stored.size,
      receivedAt,
      flags,
      wraps: [{ readerId: this.readerId, wrap: Buffer.from(wrap).toString('base64') }],
    });
  }

  /**
   * A client that sends through this server and then appends its own copy
   * to Sent (Thunderbird's "Place a copy in") would file the message twice:
   * the server already keeps one (docs/submission.md "The Sent copy"). The
   * server's copy in this \Sent folder with the same Message-ID, made in
   * the last 15 minutes, or null.
   */
  async serverSentCopy(mailbox: Mailbox, raw: Buffer): Promise<ReadableMessage | null> {
    if (specialUseOf(mailbox.name) !== '\\Sent') return null;
    const wanted = messageIdOf(raw);
    if (!wanted) return null;
    const since = (this.deps.now ?? Date.now)() - SENT_COPY_WINDOW_MS;
    const candidates = await this.folders.listReadable(this.wallet, mailbox.id, this.readerId, {
      idPrefix: 's.',
      since,
    });
    for (const c of candidates.reverse()) {
      const opened = await this.open(c).catch(() => null);
      if (opened && messageIdOf(opened.raw) === wanted) return c;
    }
    return null;
  }

  /** Hands removed copies to the release hook (pins, DeleteMail) and forgets their plaintext. */
  async removed(rows: StoredMessage[]): Promise<void> {
    for (const r of rows) {
      const hit = this.cache.get(r.id);
      if (hit) this.cached -= hit.raw.length;
      this.cache.delete(r.id);
      this.sizes.delete(r.id);
    }
    if (rows.length > 0 && this.deps.releaseCopies) await this.deps.releaseCopies(rows);
  }

  /**
   * Teaches the spam filter what moving or copying these messages between
   * the two folders says (into Junk: spam; out of Junk but not to Trash:
   * ham). Never waits for it: the messages are opened one after another
   * now (before the session could end and take its key), learned later.
   */
  trainOnTransfer(from: Mailbox, to: Mailbox, refs: readonly SealedRef[]): void {
    const learner = this.deps.learner;
    if (!learner || refs.length === 0) return;
    const kind = learnKindOf(specialUseOf(from.name), specialUseOf(to.name));
    if (!kind) return;
    let previous: Promise<unknown> = Promise.resolve();
    const messages = refs.map((ref) => {
      const raw = previous.then(() => this.open(ref)).then((o) => o.raw);
      previous = raw.catch(() => undefined);
      return () => raw;
    });
    learner.submit(kind, messages);
  }

  /** Ends the session: the secret key and the plaintext go. */
  close(): void {
    this.reader.keypair.secretKey.fill(0);
    this.cache.clear();
    this.cached = 0;
    this.sizes.clear();
  }
}
