// The Sent copy of submitted mail (docs/submission.md "The Sent copy"): once
// a submission is queued, the message as it left (trace fields included) is
// kept in the sender account's "Sent" folder exactly as delivered mail is
// kept: sealed to the wallet's own key (its MailboxKey when published, else
// the wallet key) so the webmail opens it in the page, with a wrap for the
// account's IMAP/POP reader key when it has one, flagged \Seen. The row id
// is derived from the submission's msgid, so storing twice stores once.
import bs58 from 'bs58';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import { FoldersRepo, MessagesRepo, type StoredMessage } from '../../core/store/index.ts';
import type { Database } from '../../core/store/types.ts';
import {
  MAX_ADDRESS_BYTES,
  sealMessage,
  walletEncryptionPublicKey,
  wrapContentKey,
} from '../../mail/seal/index.ts';

export const SENT_FOLDER = 'Sent';

export interface SentCopyDeps {
  db: Kysely<Database>;
  blobs: BlobStore;
  /** The X25519 key a wallet's own copies are sealed to; default the wallet key. */
  sealKeyOf?: (wallet: string) => Promise<Uint8Array>;
  /** Operator-kept readers of a wallet (its IMAP/POP reader key); none without a mail password. */
  readerKeys?: (wallet: string) => Promise<{ readerId: string; publicKey: Uint8Array }[]>;
  now?: () => number;
}

export interface SentCopy {
  wallet: string;
  /** The submission's id: the copy's row id is `s.<msgid>`. */
  msgid: string;
  /** The message as it was queued (with the trace fields added on top). */
  raw: Buffer;
  envelopeFrom: string;
  /** The recipients the message was queued for. */
  recipients: string[];
  sentAt: number;
}

export type SentCopyOutcome =
  | { stored: true; created: boolean; message: StoredMessage }
  | { stored: false; reason: 'no_account' };

/** The copy's row id for a submission. */
export function sentCopyId(msgid: string): string {
  return `s.${msgid}`;
}

/** The envelope's `to` names every recipient while they fit the sealed envelope's field. */
function envelopeTo(recipients: string[]): string {
  let out = '';
  for (const [i, r] of recipients.entries()) {
    const next = out === '' ? r : `${out}, ${r}`;
    if (Buffer.byteLength(next) > MAX_ADDRESS_BYTES - 32) return `${out}, and ${recipients.length - i} more`;
    out = next;
  }
  return out;
}

export async function storeSentCopy(deps: SentCopyDeps, copy: SentCopy): Promise<SentCopyOutcome> {
  const account = await deps.db
    .selectFrom('accounts')
    .select('wallet')
    .where('wallet', '=', copy.wallet)
    .executeTakeFirst();
  // Folders belong to an account row; a token without one (login creates nothing) keeps no copy.
  if (!account) return { stored: false, reason: 'no_account' };
  const folders = new FoldersRepo(deps.db, { now: deps.now });
  const id = sentCopyId(copy.msgid);
  const existing = await new MessagesRepo(deps.db).get(id);
  if (existing && existing.wallet === copy.wallet) return { stored: true, created: false, message: existing };

  const sealKey = deps.sealKeyOf
    ? await deps.sealKeyOf(copy.wallet)
    : walletEncryptionPublicKey(bs58.decode(copy.wallet));
  const { sealed, contentKey } = await sealMessage({
    envelope: {
      version: 1,
      from: copy.envelopeFrom,
      to: envelopeTo(copy.recipients),
      receivedAt: copy.sentAt,
    },
    raw: new Uint8Array(copy.raw.buffer, copy.raw.byteOffset, copy.raw.byteLength),
    recipientPublicKey: sealKey,
  });
  const wraps: { readerId: string; wrap: string }[] = [];
  try {
    for (const r of deps.readerKeys ? await deps.readerKeys(copy.wallet) : []) {
      const wrap = await wrapContentKey(contentKey, r.publicKey);
      wraps.push({ readerId: r.readerId, wrap: Buffer.from(wrap).toString('base64') });
    }
  } finally {
    contentKey.fill(0);
  }
  // An account that never logged in over IMAP gets its whole default folder set, as at a first login.
  if (!(await folders.getMailbox(copy.wallet, SENT_FOLDER))) await folders.ensureDefaultFolders(copy.wallet);
  const blob = await deps.blobs.putContent(sealed);
  const out = await folders.storeCopy({
    id,
    wallet: copy.wallet,
    folder: SENT_FOLDER,
    blobKey: blob.key,
    size: blob.size,
    receivedAt: copy.sentAt,
    flags: ['\\Seen'],
    wraps,
  });
  return { stored: true, ...out };
}
