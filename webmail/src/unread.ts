// The inbox's unread count over the whole mailbox, not the rows loaded so
// far. Email accounts are PDAs of (owner, index), so every address below
// mail_count is known without reading the chain; the ones this browser has
// marked read are not unread. Only the rest are asked for, and only whether
// they exist (a deleted message is not unread): getMultipleAccounts with a
// zero-length dataSlice, 100 a call. No body, no account data is fetched.
import { type Connection, PublicKey } from '@solana/web3.js';
import { emailAddress } from '../../chain/client/index.ts';

const BATCH = 100;
/** Past this many indexes only the newest are counted (the count says "N+"). */
export const UNREAD_SCAN_LIMIT = 5000;

const derived = new Map<string, string>();

/** The Email account address of `owner`'s message `index` (memoized: derivation hashes). */
export function emailAddressAt(programId: string, owner: string, index: bigint): string {
  const key = `${programId}:${owner}:${index}`;
  let hit = derived.get(key);
  if (hit === undefined) {
    hit = emailAddress(programId, owner, index)[0].toBase58();
    derived.set(key, hit);
  }
  return hit;
}

/** Every Email address of the mailbox, newest first (at most UNREAD_SCAN_LIMIT). */
export function mailboxAddresses(programId: string, owner: string, mailCount: bigint): string[] {
  const out: string[] = [];
  for (let i = mailCount - 1n; i >= 0n && out.length < UNREAD_SCAN_LIMIT; i--) {
    out.push(emailAddressAt(programId, owner, i));
  }
  return out;
}

export interface UnreadCount {
  /** The unread messages' Email addresses when counted (marks made since are subtracted by the caller). */
  unread: string[];
  /** Whether the mailbox has more indexes than were counted. */
  capped: boolean;
}

/**
 * Unread = an Email account that exists and that this browser has not
 * marked read. `known` are addresses already seen to exist (listed rows),
 * which need no read.
 */
export async function countUnread(
  conn: Connection,
  programId: string,
  owner: string,
  mailCount: bigint,
  isRead: (address: string) => boolean,
  known: ReadonlySet<string> = new Set(),
): Promise<UnreadCount> {
  const all = mailboxAddresses(programId, owner, mailCount);
  const candidates = all.filter((a) => !isRead(a));
  const unread: string[] = [];
  const ask: string[] = [];
  for (const a of candidates) {
    if (known.has(a)) unread.push(a);
    else ask.push(a);
  }
  for (let i = 0; i < ask.length; i += BATCH) {
    const batch = ask.slice(i, i + BATCH);
    const infos = await conn.getMultipleAccountsInfo(
      batch.map((a) => new PublicKey(a)),
      { dataSlice: { offset: 0, length: 0 } },
    );
    infos.forEach((info, j) => {
      const a = batch[j];
      if (a && info && info.owner.toBase58() === programId) unread.push(a);
    });
  }
  return { unread, capped: BigInt(all.length) < mailCount };
}
