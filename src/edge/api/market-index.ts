// The gateway's off-chain index of the marketplace (reference: "marketplace
// and alias listings need the gateway's off-chain index"): every open
// listing, its high bid, and every pending alias escrow, read from a
// ProgramIndex (src/core/store/program-index.ts: the program's signatures since the
// last sync, their transactions, and getMultipleAccounts of the accounts they
// wrote; no getProgramAccounts, docs/operations.md "Chain reads without
// getProgramAccounts") and kept as one snapshot. A snapshot older than
// `ttlMs` is rebuilt on the next read. A read asking for fresh data gets a
// snapshot whose chain read began after it arrived, but rebuilds start at
// most once per `minRefreshMs`, so clients cannot turn the index into an RPC
// amplifier. Concurrent reads share one rebuild.
//
// Listing kinds are rows of LISTING_SOURCES: AliasListing (tag 8, the name
// read from the alias's creation) and DomainListing (tag 9, the name read
// from the MailDomain account, which holds it). A domain listing named for
// one buyer is in the index like any other, marked by its `buyer` (the chain
// shows it to everyone anyway); clients offer "Buy" to that wallet only.
import type { Connection, PublicKey } from '@solana/web3.js';
import type { Kysely } from 'kysely';
import {
  ALIAS_BID_SIZE,
  ALIAS_ESCROW_SIZE,
  ALIAS_LISTING_SIZE,
  type AliasListing,
  DOMAIN_LISTING_SIZE,
  type DomainListing,
  decodeAliasBid,
  decodeAliasEscrow,
  decodeAliasListing,
  decodeDomainListing,
  decodeMailDomain,
  MAIL_DOMAIN_FIXED_SIZE,
  PENDING_RECLAIM_SIZE,
} from '../../../chain/client/accounts/index.ts';
import { type Key, toPublicKey, ZERO_KEY } from '../../../chain/client/bytes.ts';
import {
  decodeInstruction,
  type InstructionKind,
  LISTING_MODE,
} from '../../../chain/client/instruction-data.ts';
import { minimumBid } from '../../../chain/client/market-instructions.ts';
import { aliasAddress, domainAddress } from '../../../chain/client/pda.ts';
import type {
  BidRow,
  EscrowRow,
  ListingKind,
  ListingRow,
  MarketSnapshot,
} from '../../contracts/api-responses.ts';
import { type IndexState, ProgramIndex, StoreIndexState } from '../../core/store/program-index.ts';
import type { Database } from '../../core/store/types.ts';

export type { BidRow, EscrowRow, ListingKind, ListingRow, MarketSnapshot };

type NameLookup = (conn: Connection, programId: Key, item: PublicKey) => Promise<string | null>;

/**
 * An Alias account's name: it is only in CreateAlias's data, so this reads
 * the account's oldest transaction and keeps a name only when it derives
 * exactly this account (a name can never lie).
 */
async function aliasNameFromHistory(
  conn: Connection,
  programId: Key,
  account: PublicKey,
): Promise<string | null> {
  const program = toPublicKey(programId);
  let before: string | undefined;
  let oldest: string | undefined;
  for (;;) {
    const page = await conn.getSignaturesForAddress(account, { before, limit: 1000 });
    const last = page.at(-1);
    if (!last) break;
    oldest = last.signature;
    if (page.length < 1000) break;
    before = last.signature;
  }
  if (!oldest) return null;
  const tx = await conn.getTransaction(oldest, {
    maxSupportedTransactionVersion: 0,
    commitment: 'confirmed',
  });
  if (!tx) return null;
  const keys = tx.transaction.message.getAccountKeys().staticAccountKeys;
  for (const ix of tx.transaction.message.compiledInstructions) {
    if (!keys[ix.programIdIndex]?.equals(program)) continue;
    try {
      const decoded = decodeInstruction(ix.data);
      if (decoded.kind !== 'CreateAlias') continue;
      if (aliasAddress(programId, decoded.name)[0].equals(account)) return decoded.name;
    } catch {
      // Not one of ours that decodes: look at the next instruction.
    }
  }
  return null;
}

/**
 * The kinds the API's program index keeps: MailDomain (6, for /v1/timelocks),
 * AliasListing (8), DomainListing (9), AliasEscrow (10), AliasBid (11) and
 * PendingReclaim (18), each checked by its size.
 */
const KEPT_SIZES: ReadonlyMap<number, (n: number) => boolean> = new Map([
  [6, (n: number) => n >= MAIL_DOMAIN_FIXED_SIZE],
  [8, (n: number) => n === ALIAS_LISTING_SIZE],
  [9, (n: number) => n === DOMAIN_LISTING_SIZE],
  [10, (n: number) => n === ALIAS_ESCROW_SIZE],
  [11, (n: number) => n === ALIAS_BID_SIZE],
  [18, (n: number) => n === PENDING_RECLAIM_SIZE],
]);

/**
 * Instructions that never create a kept kind (the mail traffic: sends,
 * deletes, stamps, keys, leases, beacons, attestations, mailboxes, aliases):
 * the index reads only the kept accounts they write, not all their writable
 * accounts. Any other instruction, and one that does not decode, may create
 * one: all its writable accounts are read.
 */
const NEVER_CREATES_KEPT: ReadonlySet<InstructionKind> = new Set<InstructionKind>([
  'SendMail',
  'DeleteMail',
  'ClaimBounty',
  'AddStamps',
  'BuyStamps',
  'TopUpStamps',
  'CreateFrombox',
  'UpdateFrombox',
  'ReclaimFromboxStamps',
  'PublishKey',
  'RemoveKey',
  'CreatePinLease',
  'ClosePinLease',
  'PublishBeacon',
  'CloseBeacon',
  'AttestSender',
  'RevokeAttestation',
  'SetRecipientRule',
  'CloseRecipientRule',
  'CreateMailbox',
  'SetMailboxFlags',
  'SetMailboxDomain',
  'CreateAlias',
  'RequestMailboxClose',
  'CancelMailboxClose',
  'CloseMailbox',
]);

/** The program index behind the market routes and /v1/timelocks; persisted in the store when `db` is given. */
export function marketProgramIndex(opts: {
  connection: Connection;
  programId: Key;
  db?: Kysely<Database>;
  state?: IndexState;
  now?: () => number;
}): ProgramIndex {
  const programId = toPublicKey(opts.programId).toBase58();
  return new ProgramIndex({
    connection: opts.connection,
    programId,
    state: opts.state ?? (opts.db ? new StoreIndexState(opts.db, `market:${programId}`) : undefined),
    keep: (_address, data) => KEPT_SIZES.get(data[0] as number)?.(data.length) === true,
    creates: (ix) => ix === null || !NEVER_CREATES_KEPT.has(ix.kind),
    now: opts.now,
  });
}

interface ListingSource<T> {
  kind: ListingKind;
  tag: number;
  size: number;
  decode: (data: Uint8Array) => T;
  /** The listed account. */
  item: (record: T) => PublicKey;
  /** The listed account's name (cached per account by the index); null when it cannot be told. */
  lookupName: NameLookup;
  row: (address: PublicKey, record: T, name: string | null, chainTime: number) => ListingRow;
}

const keyOrNull = (k: PublicKey): string | null => (k.equals(ZERO_KEY) ? null : k.toBase58());

const aliasListings: ListingSource<AliasListing> = {
  kind: 'alias',
  tag: 8,
  size: ALIAS_LISTING_SIZE,
  decode: decodeAliasListing,
  item: (l) => l.alias,
  lookupName: aliasNameFromHistory,
  row: (address, l, name, chainTime) => {
    const auction = l.mode === LISTING_MODE.auction;
    return {
      address: address.toBase58(),
      kind: 'alias',
      item: l.alias.toBase58(),
      name,
      holder: l.holder.toBase58(),
      buyer: null,
      mode: auction ? 'auction' : 'fixed',
      price_lamports: l.priceLamports.toString(),
      created_at: Number(l.createdAt),
      ends_at: auction ? Number(l.expiresAt) : null,
      antisnipe_window_secs: Number(l.antisnipeWindowSecs),
      high_bid_lamports: l.highBidLamports.toString(),
      high_bidder: keyOrNull(l.highBidder),
      min_bid_lamports: auction ? minimumBid(l).toString() : null,
      ended: auction && BigInt(chainTime) >= l.expiresAt,
      expires_at: null,
      expired: false,
    };
  },
};

/** A MailDomain's name: the account holds it; kept only when it derives exactly this account. */
async function domainNameOfAccount(
  conn: Connection,
  programId: Key,
  account: PublicKey,
): Promise<string | null> {
  const info = await conn.getAccountInfo(account, 'confirmed');
  if (!info?.owner.equals(toPublicKey(programId))) return null;
  try {
    const { domain } = decodeMailDomain(new Uint8Array(info.data));
    return domainAddress(programId, domain)[0].equals(account) ? domain : null;
  } catch {
    return null;
  }
}

const domainListings: ListingSource<DomainListing> = {
  kind: 'domain',
  tag: 9,
  size: DOMAIN_LISTING_SIZE,
  decode: decodeDomainListing,
  item: (l) => l.domain,
  lookupName: domainNameOfAccount,
  row: (address, l, name, chainTime) => ({
    address: address.toBase58(),
    kind: 'domain',
    item: l.domain.toBase58(),
    name,
    holder: l.holder.toBase58(),
    buyer: keyOrNull(l.buyer),
    mode: 'fixed',
    price_lamports: l.priceLamports.toString(),
    created_at: Number(l.createdAt),
    ends_at: null,
    antisnipe_window_secs: 0,
    high_bid_lamports: '0',
    high_bidder: null,
    min_bid_lamports: null,
    ended: false,
    expires_at: Number(l.expiresAt),
    expired: BigInt(chainTime) >= l.expiresAt,
  }),
};

/** Every listing kind the program writes. */
// biome-ignore lint/suspicious/noExplicitAny: each source keeps its own record type.
const LISTING_SOURCES: ListingSource<any>[] = [aliasListings, domainListings];

/** The listing kinds the index serves (the routes' `kind` filter). */
export const LISTING_KINDS: readonly ListingKind[] = LISTING_SOURCES.map((s) => s.kind);

export class ChainUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the chain RPC does not answer: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ChainUnavailableError';
  }
}

export interface MarketIndexOptions {
  connection: Connection;
  programId: Key;
  /** The program index read (default: marketProgramIndex over `db`, or in memory without it). */
  index?: ProgramIndex;
  /** The store that keeps the program index across restarts. */
  db?: Kysely<Database>;
  /** A snapshot older than this is rebuilt on the next read; default 5000 ms. */
  ttlMs?: number;
  /** Least time between two rebuilds that fresh reads start; default 1000 ms. */
  minRefreshMs?: number;
  now?: () => number;
  /** Alias names looked up at once when the index meets new aliases; default 8. */
  nameLookups?: number;
}

export const MARKET_INDEX_TTL_MS = 5_000;
export const MARKET_INDEX_MIN_REFRESH_MS = 1_000;

export class MarketIndex {
  private snapshot: MarketSnapshot | null = null;
  private building: { startedAt: number; promise: Promise<MarketSnapshot> } | null = null;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** Listed account → name (null: it cannot be told); an account's name never changes. */
  private readonly names = new Map<string, string | null>();
  private readonly ttlMs: number;
  private readonly minRefreshMs: number;
  private readonly now: () => number;
  private readonly nameLookups: number;
  readonly index: ProgramIndex;

  constructor(private readonly opts: MarketIndexOptions) {
    this.index = opts.index ?? marketProgramIndex(opts);
    this.ttlMs = opts.ttlMs ?? MARKET_INDEX_TTL_MS;
    this.minRefreshMs = opts.minRefreshMs ?? MARKET_INDEX_MIN_REFRESH_MS;
    this.now = opts.now ?? Date.now;
    this.nameLookups = Math.max(1, opts.nameLookups ?? 8);
  }

  /**
   * The current snapshot. Cached while younger than the TTL; with `fresh`,
   * one whose chain read began after this call (so a transaction confirmed
   * before it is in), built at most once per minRefreshMs: a fresh read
   * that comes sooner waits for that slot and shares the rebuild.
   */
  async read(opts: { fresh?: boolean } = {}): Promise<MarketSnapshot> {
    if (!opts.fresh) {
      const s = this.snapshot;
      if (s && this.now() - s.refreshedAt < this.ttlMs) return s;
      return this.building?.promise ?? this.start();
    }
    const asked = this.now();
    for (;;) {
      if (this.snapshot && this.snapshot.refreshedAt >= asked) return this.snapshot;
      if (this.building && this.building.startedAt >= asked) return this.building.promise;
      if (this.building) {
        await this.building.promise.catch(() => {});
        continue;
      }
      const wait = this.lastStart + this.minRefreshMs - this.now();
      if (wait > 0) {
        await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      return this.start();
    }
  }

  private start(): Promise<MarketSnapshot> {
    const startedAt = this.now();
    this.lastStart = startedAt;
    const promise = this.build(startedAt).finally(() => {
      this.building = null;
    });
    this.building = { startedAt, promise };
    return promise;
  }

  private async build(refreshedAt: number): Promise<MarketSnapshot> {
    const { connection: conn } = this.opts;
    try {
      const [chainTime] = await Promise.all([chainNow(conn), this.index.sync(refreshedAt)]);
      const kept = <T>(tag: number, decode: (d: Uint8Array) => T) =>
        [...this.index.ofTag(tag)].map(([address, data]) => ({
          address: toPublicKey(address),
          account: decode(data),
        }));
      const listingSets = LISTING_SOURCES.map((src) => ({ src, found: kept(src.tag, src.decode) }));
      const escrows = kept(10, decodeAliasEscrow);
      const bids = kept(11, decodeAliasBid);
      await this.learnNames([
        ...listingSets.flatMap(({ src, found }) =>
          found.map((f) => ({ item: src.item(f.account) as PublicKey, lookup: src.lookupName })),
        ),
        ...escrows.map((e) => ({ item: e.account.alias, lookup: aliasNameFromHistory })),
      ]);
      const nameOf = (k: PublicKey) => this.names.get(k.toBase58()) ?? null;
      const listings = listingSets
        .flatMap(({ src, found }) =>
          found.map((f) => src.row(f.address, f.account, nameOf(src.item(f.account)), chainTime)),
        )
        .sort(newestFirst);
      const snapshot: MarketSnapshot = {
        refreshedAt,
        chainTime,
        listings,
        escrows: escrows
          .map(({ address, account: e }) => ({
            address: address.toBase58(),
            alias: e.alias.toBase58(),
            name: nameOf(e.alias),
            holder: e.holder.toBase58(),
            recipient: e.recipient.toBase58(),
            fee_lamports: e.feeLamports.toString(),
            offered_at: Number(e.offeredAt),
            expires_at: Number(e.expiresAt),
            expired: BigInt(chainTime) >= e.expiresAt,
          }))
          .sort((a, b) => b.offered_at - a.offered_at || a.address.localeCompare(b.address)),
        bids: bids.map(({ address, account: b }) => ({
          address: address.toBase58(),
          listing: b.listing.toBase58(),
          bidder: b.bidder.toBase58(),
          amount_lamports: b.amountLamports.toString(),
          bid_at: Number(b.bidAt),
        })),
      };
      this.snapshot = snapshot;
      return snapshot;
    } catch (err) {
      throw err instanceof ChainUnavailableError ? err : new ChainUnavailableError(err);
    }
  }

  /** Names of listed accounts not seen before, a few lookups at a time (each is RPC round trips). */
  private async learnNames(items: { item: PublicKey; lookup: NameLookup }[]): Promise<void> {
    const { connection: conn, programId } = this.opts;
    const todo = [...new Map(items.map((x) => [x.item.toBase58(), x])).values()].filter(
      (x) => !this.names.has(x.item.toBase58()),
    );
    const worker = async () => {
      for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
        // A failed lookup leaves the name unknown (null in this snapshot) and is tried again next build.
        const name = await next.lookup(conn, programId, next.item).catch(() => undefined);
        if (name !== undefined) this.names.set(next.item.toBase58(), name);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.nameLookups, todo.length) }, worker));
  }
}

function newestFirst(a: ListingRow, b: ListingRow): number {
  return b.created_at - a.created_at || a.address.localeCompare(b.address);
}

/** The chain's clock: the block time of the newest confirmed slot. */
export async function chainNow(conn: Connection): Promise<number> {
  const slot = await conn.getSlot('confirmed');
  const t = await conn.getBlockTime(slot);
  return t ?? Math.floor(Date.now() / 1000);
}
