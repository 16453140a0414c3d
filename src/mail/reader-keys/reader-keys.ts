// An account's IMAP/POP reader key (DESIGN.md "Sealing": readers the
// operator keeps). Setting the mail password creates it; delivery wraps
// every later message's content key to its public half; a logged-in
// IMAP/POP session unlocks the secret half with the password and holds it
// in memory only. The secret is stored locked under the password (lock.ts)
// and sealed under the credential key — never in the clear.
//
// Changing the password re-locks the same key when the old password is
// given, so older mail stays readable. Without it the key is replaced (the
// reset path): the new key cannot open mail wrapped for the old one, whose
// wraps are deleted in the same transaction.
import type { Kysely } from 'kysely';
import { type CredentialSealer, credentialAad } from '../../core/crypto/credential-seal.ts';
import { newSortableId } from '../../core/log.ts';
import type { Database } from '../../core/store/types.ts';
import { generateReaderKeypair, type ReaderKeypair, readerKeypairFromSecret } from '../seal/index.ts';
import { type LockParams, lockSecret, type RandomBytes, unlockSecret } from './lock.ts';

const SEAL_PURPOSE = 'reader-key';

export interface ReaderKeyDeps {
  db: Kysely<Database>;
  sealer: CredentialSealer;
  now?: () => number;
  /** Key pairs, salts and IVs; default the platform CSPRNG. */
  randomBytes?: RandomBytes;
  lockParams?: LockParams;
}

export interface StoredReaderKey {
  wallet: string;
  readerId: string;
  publicKey: Uint8Array;
  lockedSecret: string;
  createdAt: number;
  updatedAt: number;
}

export interface UnlockedReaderKey {
  wallet: string;
  readerId: string;
  /** Wipe `keypair.secretKey` when the session ends. */
  keypair: ReaderKeypair;
}

/** What happened to the reader key when the password was stored. */
export type ReaderKeyChange = 'created' | 'relocked' | 'reset';

/** The wallet and reader id a lock is bound to (GCM associated data). */
function lockAad(wallet: string, readerId: string): string {
  return `sealpost-reader-key:v1:${wallet}:${readerId}`;
}

export function newReaderId(): string {
  return `imap.${newSortableId()}`;
}

export async function getReaderKey(
  db: Kysely<Database>,
  wallet: string,
): Promise<StoredReaderKey | undefined> {
  const row = await db.selectFrom('reader_keys').selectAll().where('wallet', '=', wallet).executeTakeFirst();
  if (!row) return undefined;
  return {
    wallet: row.wallet,
    readerId: row.reader_id,
    publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64')),
    lockedSecret: row.locked_secret,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * Delivery's view (delivery/stages/seal.ts `SealDeps.readerKeys`): the
 * public reader keys of a wallet; none when it has no mail password.
 */
export function readerPublicKeys(
  db: Kysely<Database>,
): (wallet: string) => Promise<{ readerId: string; publicKey: Uint8Array }[]> {
  return async (wallet) => {
    const key = await getReaderKey(db, wallet);
    return key ? [{ readerId: key.readerId, publicKey: key.publicKey }] : [];
  };
}

/** Opens a stored key with the password; null when the password does not open it. */
export async function openReaderKey(
  deps: ReaderKeyDeps,
  stored: StoredReaderKey,
  password: string,
): Promise<UnlockedReaderKey | null> {
  const locked = deps.sealer.open(stored.lockedSecret, credentialAad(SEAL_PURPOSE, stored.wallet));
  const secret = await unlockSecret(locked, password, lockAad(stored.wallet, stored.readerId));
  if (!secret) return null;
  const keypair = readerKeypairFromSecret(secret);
  secret.fill(0);
  if (Buffer.compare(Buffer.from(keypair.publicKey), Buffer.from(stored.publicKey)) !== 0) {
    keypair.secretKey.fill(0);
    return null;
  }
  return { wallet: stored.wallet, readerId: stored.readerId, keypair };
}

async function lockFor(
  deps: ReaderKeyDeps,
  wallet: string,
  readerId: string,
  secret: Uint8Array,
  password: string,
): Promise<string> {
  const locked = await lockSecret(secret, password, lockAad(wallet, readerId), {
    params: deps.lockParams,
    randomBytes: deps.randomBytes,
  });
  return deps.sealer.seal(locked, credentialAad(SEAL_PURPOSE, wallet));
}

interface PreparedKey {
  readerId: string;
  publicKey: Uint8Array;
  lockedSecret: string;
  change: ReaderKeyChange;
  /** The reader id whose wraps go (reset path). */
  replaces?: string;
}

/** Works out the key to store for `password` (the slow scrypt work happens here, outside any transaction). */
async function prepareKey(
  deps: ReaderKeyDeps,
  wallet: string,
  password: string,
  oldPassword: string | undefined,
): Promise<PreparedKey> {
  const existing = await getReaderKey(deps.db, wallet);
  if (existing && oldPassword !== undefined) {
    const opened = await openReaderKey(deps, existing, oldPassword);
    if (opened) {
      try {
        return {
          readerId: existing.readerId,
          publicKey: existing.publicKey,
          lockedSecret: await lockFor(deps, wallet, existing.readerId, opened.keypair.secretKey, password),
          change: 'relocked',
        };
      } finally {
        opened.keypair.secretKey.fill(0);
      }
    }
  }
  const keypair = generateReaderKeypair(deps.randomBytes);
  const readerId = newReaderId();
  try {
    return {
      readerId,
      publicKey: keypair.publicKey,
      lockedSecret: await lockFor(deps, wallet, readerId, keypair.secretKey, password),
      change: existing ? 'reset' : 'created',
      replaces: existing?.readerId,
    };
  } finally {
    keypair.secretKey.fill(0);
  }
}

/**
 * Stores the sealed password hash and the reader key for `password` in one
 * transaction: created the first time, re-locked when `oldPassword` opens
 * the current key, else replaced (reset). `updated: false` when the wallet
 * has no account (nothing is written).
 */
export async function storeMailCredentials(
  deps: ReaderKeyDeps,
  wallet: string,
  input: { sealedPasswordHash: string; password: string; oldPassword?: string },
): Promise<{ updated: boolean; readerKey?: ReaderKeyChange }> {
  const prepared = await prepareKey(deps, wallet, input.password, input.oldPassword);
  const now = (deps.now ?? Date.now)();
  return deps.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('accounts')
      .set({ mail_password_sealed: input.sealedPasswordHash, updated_at: now })
      .where('wallet', '=', wallet)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return { updated: false };
    const values = {
      reader_id: prepared.readerId,
      public_key: Buffer.from(prepared.publicKey).toString('base64'),
      locked_secret: prepared.lockedSecret,
      updated_at: now,
    };
    await trx
      .insertInto('reader_keys')
      .values({ wallet, ...values, created_at: now })
      .onConflict((oc) => oc.column('wallet').doUpdateSet(values))
      .execute();
    // Wraps for a replaced key can never be opened again: drop them now.
    const gone = await trx
      .selectFrom('reader_wraps')
      .select('reader_id')
      .distinct()
      .where('wallet', '=', wallet)
      .where('reader_id', '!=', prepared.readerId)
      .execute();
    for (const g of gone) {
      await trx
        .deleteFrom('reader_wraps')
        .where('wallet', '=', wallet)
        .where('reader_id', '=', g.reader_id)
        .execute();
    }
    return { updated: true, readerKey: prepared.change };
  });
}

/**
 * The unlocked key for a session whose password was just verified. An
 * account whose password predates reader keys gets one now (it opens mail
 * delivered from now on). A key that the verified password does not open
 * is replaced, but only while `stillCurrent()` confirms the password is
 * still the account's (a concurrent password change wins over a login).
 */
export async function unlockForSession(
  deps: ReaderKeyDeps,
  wallet: string,
  password: string,
  stillCurrent: () => Promise<boolean>,
): Promise<UnlockedReaderKey | null> {
  const stored = await getReaderKey(deps.db, wallet);
  if (stored) {
    const opened = await openReaderKey(deps, stored, password);
    if (opened) return opened;
    if (!(await stillCurrent())) return null;
  }
  const keypair = generateReaderKeypair(deps.randomBytes);
  const readerId = newReaderId();
  const lockedSecret = await lockFor(deps, wallet, readerId, keypair.secretKey, password);
  const now = (deps.now ?? Date.now)();
  const values = {
    reader_id: readerId,
    public_key: Buffer.from(keypair.publicKey).toString('base64'),
    locked_secret: lockedSecret,
    updated_at: now,
  };
  if (stored) {
    // Only replace the exact key that failed; a newer one written meanwhile stays.
    const r = await deps.db
      .updateTable('reader_keys')
      .set(values)
      .where('wallet', '=', wallet)
      .where('reader_id', '=', stored.readerId)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) {
      keypair.secretKey.fill(0);
      return null;
    }
    await deps.db
      .deleteFrom('reader_wraps')
      .where('wallet', '=', wallet)
      .where('reader_id', '=', stored.readerId)
      .execute();
  } else {
    await deps.db
      .insertInto('reader_keys')
      .values({ wallet, ...values, created_at: now })
      .onConflict((oc) => oc.column('wallet').doNothing())
      .execute();
    const winner = await getReaderKey(deps.db, wallet);
    if (winner?.readerId !== readerId) {
      // Another session created one first: use that one.
      keypair.secretKey.fill(0);
      return winner ? openReaderKey(deps, winner, password) : null;
    }
  }
  return { wallet, readerId, keypair };
}
