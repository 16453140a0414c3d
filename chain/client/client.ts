// Read helpers over a web3.js Connection, and the stamp price math
// (docs/protocol.md "Stamp prices"). Browser-safe.
import type { AccountInfo, Commitment, Connection, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import {
  type Alias,
  decodeAlias,
  decodeEmail,
  decodeFrombox,
  decodeMailbox,
  decodeMailboxKey,
  decodeMailDomain,
  decodeParticipantBeacon,
  decodePinLease,
  decodePostoffice,
  type Email,
  FROMBOX_SIZE,
  type Frombox,
  type Mailbox,
  type MailboxKey,
  type MailDomain,
  PARTICIPANT_BEACON_SIZE,
  type ParticipantBeacon,
  PIN_LEASE_SIZE,
  type PinLease,
  type Postoffice,
  pinLeaseLayout,
  rentExemptLamports,
} from './accounts/index.ts';
import { type Key, keyBytes, toPublicKey } from './bytes.ts';
import { fromHash as hashOfFrom, normalizeAlias, normalizeDomain } from './hash.ts';
import {
  aliasAddress,
  beaconAddress,
  domainAddress,
  emailAddress,
  fromboxAddress,
  mailboxAddress,
  mailboxKeyAddress,
  postofficeAddress,
} from './pda.ts';

/** getMultipleAccountsInfo's per-call cap on public RPC nodes. */
const MULTIPLE_ACCOUNTS_BATCH = 100;

// An address derived for our program but owned by someone else (e.g. lamports
// sent to a PDA before it was created) holds no record of ours yet.
function ours<T>(
  info: AccountInfo<Uint8Array> | null,
  programId: Key,
  decode: (d: Uint8Array) => T,
): T | null {
  if (!info?.owner.equals(toPublicKey(programId))) return null;
  return decode(new Uint8Array(info.data));
}

/** The record of our program at `address`, decoded, or null. */
export async function fetchDecoded<T>(
  conn: Connection,
  programId: Key,
  address: PublicKey,
  decode: (d: Uint8Array) => T,
  commitment?: Commitment,
): Promise<T | null> {
  return ours(await conn.getAccountInfo(address, commitment), programId, decode);
}

/** The wallet's Mailbox; `commitment` defaults to the connection's. */
export function getMailbox(
  conn: Connection,
  programId: Key,
  owner: Key,
  commitment?: Commitment,
): Promise<Mailbox | null> {
  return fetchDecoded(conn, programId, mailboxAddress(programId, owner)[0], decodeMailbox, commitment);
}

export function getMailboxKey(conn: Connection, programId: Key, owner: Key): Promise<MailboxKey | null> {
  return fetchDecoded(conn, programId, mailboxKeyAddress(programId, owner)[0], decodeMailboxKey);
}

export function getEmail(
  conn: Connection,
  programId: Key,
  recipient: Key,
  index: bigint,
): Promise<Email | null> {
  return fetchDecoded(conn, programId, emailAddress(programId, recipient, index)[0], decodeEmail);
}

/** An Email account read by its address (e.g. from a reply or a signature's accounts). */
export function getEmailAt(conn: Connection, programId: Key, address: Key): Promise<Email | null> {
  return fetchDecoded(conn, programId, toPublicKey(address), decodeEmail);
}

export function getFrombox(
  conn: Connection,
  programId: Key,
  fromHash: Uint8Array,
  recipient: Key,
): Promise<Frombox | null> {
  return fetchDecoded(conn, programId, fromboxAddress(programId, fromHash, recipient)[0], decodeFrombox);
}

export function getAlias(conn: Connection, programId: Key, alias: string): Promise<Alias | null> {
  return fetchDecoded(conn, programId, aliasAddress(programId, normalizeAlias(alias))[0], decodeAlias);
}

/** The wallet an alias points at (`Bob@host` and `bob` alike), or null when unregistered. Throws on an invalid alias. */
export async function resolveAlias(
  conn: Connection,
  programId: Key,
  alias: string,
): Promise<PublicKey | null> {
  return (await getAlias(conn, programId, alias))?.address ?? null;
}

export function getDomain(conn: Connection, programId: Key, domain: string): Promise<MailDomain | null> {
  return fetchDecoded(
    conn,
    programId,
    domainAddress(programId, normalizeDomain(domain))[0],
    decodeMailDomain,
  );
}

export function getPostoffice(conn: Connection, programId: Key): Promise<Postoffice | null> {
  return fetchDecoded(conn, programId, postofficeAddress(programId)[0], decodePostoffice);
}

export interface InboxEntry {
  address: PublicKey;
  email: Email;
  /** Rent plus any escrowed bounty. */
  lamports: number;
}

export interface ListInboxOptions {
  /** Most entries to return; default 50. */
  limit?: number;
  /** Only indices below this (pass the last entry's index to page on). */
  before?: bigint;
  /** Only indices at or above this (e.g. the mail_count last seen, to fetch just what is new). */
  after?: bigint;
}

/**
 * The owner's messages newest first, walking indices down from mail_count
 * (deleted ones are skipped). Empty when the owner has no mailbox.
 */
export async function listInbox(
  conn: Connection,
  programId: Key,
  owner: Key,
  opts: ListInboxOptions = {},
): Promise<InboxEntry[]> {
  const limit = opts.limit ?? 50;
  const mailbox = await getMailbox(conn, programId, owner);
  if (!mailbox || limit <= 0) return [];
  let next = opts.before !== undefined && opts.before < mailbox.mailCount ? opts.before : mailbox.mailCount;
  const floor = opts.after !== undefined && opts.after > 0n ? opts.after : 0n;
  const out: InboxEntry[] = [];
  while (next > floor && out.length < limit) {
    const batch = Math.min(MULTIPLE_ACCOUNTS_BATCH, Number(next - floor), Math.max(limit - out.length, 10));
    const addresses: PublicKey[] = [];
    for (let i = 1; i <= batch; i++) addresses.push(emailAddress(programId, owner, next - BigInt(i))[0]);
    const infos = await conn.getMultipleAccountsInfo(addresses);
    for (let i = 0; i < addresses.length && out.length < limit; i++) {
      const info = infos[i] ?? null;
      const email = ours(info, programId, decodeEmail);
      if (email && info) out.push({ address: addresses[i] as PublicKey, email, lamports: info.lamports });
    }
    next -= BigInt(batch);
  }
  return out;
}

export interface StampQuote {
  /** Per-stamp postage: the frombox's required_postage, or the mailbox default when the purchase creates it. */
  postage: bigint;
  /** Per-stamp settlement surcharge, held in the frombox until the stamp is spent. */
  surcharge: bigint;
  /** Per-stamp protocol fee; 0 when buying toward one's own mailbox. */
  fee: bigint;
  perStamp: bigint;
  stamps: bigint;
  /** The frombox's rent-exempt minimum when the purchase creates it, else 0. */
  rent: bigint;
  /** perStamp × stamps + rent: what the buyer is debited. */
  total: bigint;
  createsFrombox: boolean;
}

export interface StampQuoteInput {
  postoffice: Postoffice;
  /** The recipient's mailbox. */
  mailbox: Mailbox;
  /** The frombox bought toward, or null when the purchase creates it (BuyStamps). */
  frombox: Frombox | null;
  buyer: Key;
  stamps: bigint;
}

/** What buying `stamps` costs, exactly as the program charges it. */
export function stampQuote(q: StampQuoteInput): StampQuote {
  const createsFrombox = q.frombox === null;
  const postage = q.frombox ? q.frombox.requiredPostage : q.mailbox.defaultPostage;
  const surcharge = q.postoffice.settlementSurchargeLamports;
  const fee = toPublicKey(q.buyer).equals(q.mailbox.owner) ? 0n : q.postoffice.stampFeeLamports;
  const perStamp = postage + surcharge + fee;
  const rent = createsFrombox ? rentExemptLamports(FROMBOX_SIZE) : 0n;
  return {
    postage,
    surcharge,
    fee,
    perStamp,
    stamps: q.stamps,
    rent,
    total: perStamp * q.stamps + rent,
    createsFrombox,
  };
}

/**
 * Fetches what stampQuote needs and prices a purchase toward `recipient`:
 * by default for the buyer's own frombox (BuyStamps when it does not exist
 * yet, TopUpStamps otherwise); pass `fromHash` to price AddStamps.
 */
export async function fetchStampQuote(
  conn: Connection,
  programId: Key,
  p: { buyer: Key; recipient: Key; stamps: bigint; fromHash?: Uint8Array },
): Promise<StampQuote> {
  const fromHash = p.fromHash ?? hashOfFrom(p.buyer);
  const [postoffice, mailbox, frombox] = await Promise.all([
    getPostoffice(conn, programId),
    getMailbox(conn, programId, p.recipient),
    getFrombox(conn, programId, fromHash, p.recipient),
  ]);
  if (!postoffice) throw new Error('the postoffice is not initialized');
  if (!mailbox) throw new Error(`no mailbox for ${toPublicKey(p.recipient).toBase58()}`);
  return stampQuote({ postoffice, mailbox, frombox, buyer: p.buyer, stamps: p.stamps });
}

/** One program account of a kind, with its address. */
export interface Located<T> {
  address: PublicKey;
  account: T;
}

/** getProgramAccounts for one kind: memcmp on the kind tag plus `extra` filters, and the exact size (also used by market-client.ts). */
export async function listKind<T>(
  conn: Connection,
  programId: Key,
  tag: number,
  size: number,
  decode: (d: Uint8Array) => T,
  extra: { offset: number; bytes: Uint8Array }[] = [],
): Promise<Located<T>[]> {
  const filters = [
    { dataSize: size },
    { memcmp: { offset: 0, bytes: bs58.encode(Uint8Array.of(tag)) } },
    ...extra.map((f) => ({ memcmp: { offset: f.offset, bytes: bs58.encode(f.bytes) } })),
  ];
  const found = await conn.getProgramAccounts(toPublicKey(programId), { filters });
  return found.map(({ pubkey, account }) => ({
    address: pubkey,
    account: decode(new Uint8Array(account.data)),
  }));
}

/** The wallet's ParticipantBeacon, or null. */
export function getBeacon(conn: Connection, programId: Key, owner: Key): Promise<ParticipantBeacon | null> {
  return fetchDecoded(conn, programId, beaconAddress(programId, owner)[0], decodeParticipantBeacon);
}

/**
 * Beacons carrying tag `tag` (0..63), or every beacon when omitted. The node
 * filters by kind and size; a bitmap bit cannot be a memcmp filter (memcmp
 * compares whole bytes), so the tag is checked here. Sorted by owner.
 */
export async function listBeacons(
  conn: Connection,
  programId: Key,
  opts: { tag?: number } = {},
): Promise<Located<ParticipantBeacon>[]> {
  if (opts.tag !== undefined && (!Number.isInteger(opts.tag) || opts.tag < 0 || opts.tag > 63))
    throw new RangeError(`beacon tag must be 0..63, got ${opts.tag}`);
  const all = await listKind(conn, programId, 12, PARTICIPANT_BEACON_SIZE, decodeParticipantBeacon);
  const bit = opts.tag === undefined ? null : 1n << BigInt(opts.tag);
  return all
    .filter((b) => bit === null || (b.account.tags & bit) !== 0n)
    .sort((x, y) => x.account.owner.toBase58().localeCompare(y.account.owner.toBase58()));
}

/**
 * PinLeases paid to `operator` (memcmp on the operator field), optionally
 * only those still live at `now` (Unix seconds: expires_at > now).
 */
export async function listPinLeases(
  conn: Connection,
  programId: Key,
  opts: { operator?: Key; now?: bigint } = {},
): Promise<Located<PinLease>[]> {
  const extra =
    opts.operator === undefined
      ? []
      : [{ offset: pinLeaseLayout.offsets.operator, bytes: keyBytes(opts.operator) }];
  const all = await listKind(conn, programId, 15, PIN_LEASE_SIZE, decodePinLease, extra);
  const now = opts.now;
  return now === undefined ? all : all.filter((l) => l.account.expiresAt > now);
}
