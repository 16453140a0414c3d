// The marketplace index and a wallet's timelocks over the account API
// (docs/api.md "Marketplace index"): public reads of the open listings, and
// the token wallet's own offers, bids and pending timelocks. Everything is
// read from chain state (src/edge/api/market-index.ts, src/edge/api/wallet-timelocks.ts)
// through one program index (src/core/store/program-index.ts), kept in the store when
// `db` is given; the API writes nothing on chain: the webmail signs every
// marketplace transaction with the wallet's key.
// A route plugin: `sealpost serve` passes `marketRoutes(deps)` to the API.
import type { Connection } from '@solana/web3.js';
import type { FastifyPluginAsync } from 'fastify';
import type { Kysely } from 'kysely';
import type { Key } from '../../../../chain/client/bytes.ts';
import { isBase58Key, normalizeAlias, normalizeDomain } from '../../../../chain/client/hash.ts';
import { aliasAccountOf } from '../../../../chain/client/market-instructions.ts';
import { domainAddress } from '../../../../chain/client/pda.ts';
import type { Database } from '../../../core/store/types.ts';
import { ApiError } from '../errors.ts';
import {
  ChainUnavailableError,
  chainNow,
  LISTING_KINDS,
  type ListingRow,
  MarketIndex,
  type MarketIndexOptions,
  type MarketSnapshot,
} from '../market-index.ts';
import { walletTimelocks } from '../wallet-timelocks.ts';

export interface MarketRouteDeps {
  connection: Connection;
  programId: Key;
  /** The store that keeps the program index (migration 0010-program-index); in memory without it. */
  db?: Kysely<Database>;
  /** Cache timing of the index (defaults in market-index.ts). */
  ttlMs?: MarketIndexOptions['ttlMs'];
  minRefreshMs?: MarketIndexOptions['minRefreshMs'];
  now?: () => number;
}

const PAGE = 50;
const MAX_PAGE = 200;
const WALLET = { type: 'string', pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' } as const;
const LAMPORTS = { type: 'string', pattern: '^[0-9]+$', description: 'lamports (decimal, u64)' } as const;
const SECS = { type: 'integer', description: 'Unix seconds (chain time)' } as const;
const NULLABLE_WALLET = { type: ['string', 'null'] } as const;
const FRESH = {
  type: 'string',
  enum: ['true', 'false'],
  description:
    'true: answer from a chain read that began after this request (at most one read a second is started)',
} as const;

const LISTING_ROW = {
  type: 'object',
  additionalProperties: false,
  required: [
    'address',
    'kind',
    'item',
    'name',
    'holder',
    'buyer',
    'mode',
    'price_lamports',
    'created_at',
    'ends_at',
    'antisnipe_window_secs',
    'high_bid_lamports',
    'high_bidder',
    'min_bid_lamports',
    'ended',
    'expires_at',
    'expired',
  ],
  properties: {
    address: { type: 'string', description: 'the listing account' },
    kind: { type: 'string', enum: [...LISTING_KINDS] },
    item: { type: 'string', description: 'the listed account (the Alias or MailDomain account)' },
    name: {
      type: ['string', 'null'],
      description:
        "the alias's name (read from its creation) or the domain's (from its MailDomain); null if unknown",
    },
    holder: { type: 'string' },
    buyer: {
      type: ['string', 'null'],
      description: 'a domain listing named for one wallet: only it may buy; null: anyone',
    },
    mode: { type: 'string', enum: ['fixed', 'auction'] },
    price_lamports: { ...LAMPORTS, description: 'fixed price, or the auction reserve' },
    created_at: SECS,
    ends_at: { type: ['integer', 'null'], description: 'auction end (chain seconds, after anti-snipe)' },
    antisnipe_window_secs: { type: 'integer' },
    high_bid_lamports: LAMPORTS,
    high_bidder: NULLABLE_WALLET,
    min_bid_lamports: { type: ['string', 'null'], description: 'the least the next bid may be' },
    ended: { type: 'boolean', description: 'the auction has ended: settle it' },
    expires_at: {
      type: ['integer', 'null'],
      description: 'domain listings: buy before this chain time; from it on anyone returns the domain',
    },
    expired: { type: 'boolean', description: 'the domain listing has expired: return it to its holder' },
  },
} as const;

const ESCROW_ROW = {
  type: 'object',
  additionalProperties: false,
  required: [
    'address',
    'alias',
    'name',
    'holder',
    'recipient',
    'fee_lamports',
    'offered_at',
    'expires_at',
    'expired',
  ],
  properties: {
    address: { type: 'string' },
    alias: { type: 'string', description: 'the Alias account' },
    name: { type: ['string', 'null'] },
    holder: { type: 'string' },
    recipient: { type: 'string' },
    fee_lamports: LAMPORTS,
    offered_at: SECS,
    expires_at: SECS,
    expired: { type: 'boolean' },
  },
} as const;

const BID_ROW = {
  type: 'object',
  additionalProperties: false,
  required: ['address', 'listing', 'bidder', 'amount_lamports', 'bid_at'],
  properties: {
    address: { type: 'string' },
    listing: { type: 'string' },
    bidder: { type: 'string' },
    amount_lamports: LAMPORTS,
    bid_at: SECS,
  },
} as const;

const FRESHNESS = {
  refreshed_at: { type: 'integer', description: 'Unix ms when the index read the chain' },
  chain_time: SECS,
} as const;

const TIMELOCK_ROW = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'address', 'subject', 'domain', 'requested_at', 'ends_at', 'can_complete', 'role'],
  properties: {
    kind: { type: 'string', enum: ['mailbox_close', 'domain_deactivation', 'domain_reclaim'] },
    address: { type: 'string', description: 'the pending record' },
    subject: { type: 'string', description: 'the wallet (mailbox_close) or the MailDomain account' },
    domain: { type: ['string', 'null'] },
    requested_at: SECS,
    ends_at: { ...SECS, description: 'from this chain time it can be completed' },
    can_complete: { type: 'boolean' },
    new_authority: { type: 'string' },
    payer: { type: 'string' },
    role: { type: 'string', enum: ['owner', 'authority', 'new_authority'] },
  },
} as const;

/** Keyset cursor over (created_at desc, address asc): `<created_at>.<address>`. */
const CURSOR_RE = /^(\d{1,15})\.([1-9A-HJ-NP-Za-km-z]{32,44})$/;

function afterCursor(rows: ListingRow[], cursor: string | undefined): ListingRow[] {
  if (cursor === undefined) return rows;
  const m = CURSOR_RE.exec(cursor);
  if (!m) throw new ApiError(400, 'invalid_cursor', 'cursor is not a next_cursor this API returned');
  const at = Number(m[1]);
  const address = m[2] as string;
  return rows.filter((r) => r.created_at < at || (r.created_at === at && r.address > address));
}

function chainError(err: unknown): never {
  if (err instanceof ChainUnavailableError)
    throw new ApiError(503, 'chain_unavailable', `${err.message}; try again shortly`);
  throw err;
}

export function marketRoutes(deps: MarketRouteDeps): FastifyPluginAsync {
  const index = new MarketIndex(deps);
  const read = (fresh: string | undefined): Promise<MarketSnapshot> =>
    index.read({ fresh: fresh === 'true' }).catch(chainError);
  const freshness = (s: MarketSnapshot) => ({ refreshed_at: s.refreshedAt, chain_time: s.chainTime });

  return async (app) => {
    app.get(
      '/v1/market/listings',
      {
        config: {
          auth: 'none',
          doc: {
            summary: 'Open marketplace listings from the off-chain index, newest first',
            description:
              "Built from chain state (an index of the program's transactions, no getProgramAccounts) and cached: refreshed_at says when the chain was read (at most 5 s before; with fresh=true, after the request arrived). Pass next_cursor as cursor for the next page. A domain listing named for one wallet is listed for everyone with that wallet in buyer (only it may buy).",
            tags: ['market'],
            errors: [400, 429, 503],
          },
        },
        schema: {
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: {
              kind: { type: 'string', enum: [...LISTING_KINDS] },
              mode: { type: 'string', enum: ['fixed', 'auction'] },
              holder: { ...WALLET, description: 'only this wallet’s listings' },
              alias: {
                type: 'string',
                minLength: 1,
                maxLength: 300,
                description: 'only this alias (name or Alias account)',
              },
              domain: {
                type: 'string',
                minLength: 1,
                maxLength: 300,
                description: 'only this domain (name or MailDomain account)',
              },
              buyer: { ...WALLET, description: 'only domain listings named for this wallet' },
              ended: {
                type: 'string',
                enum: ['true', 'false'],
                description: 'auctions past their end (to settle), or not',
              },
              limit: {
                type: 'string',
                pattern: '^[0-9]{1,3}$',
                description: `1–${MAX_PAGE}, default ${PAGE}`,
              },
              cursor: { type: 'string', maxLength: 80 },
              fresh: FRESH,
            },
          },
          response: {
            200: {
              type: 'object',
              additionalProperties: false,
              required: ['listings', 'next_cursor', 'refreshed_at', 'chain_time'],
              properties: {
                listings: { type: 'array', items: LISTING_ROW },
                next_cursor: { type: ['string', 'null'] },
                ...FRESHNESS,
              },
            },
          },
        },
      },
      async (request) => {
        const q = request.query as Record<string, string | undefined>;
        const limit = Number(q.limit ?? PAGE);
        if (limit < 1 || limit > MAX_PAGE)
          throw new ApiError(400, 'invalid_request', `querystring.limit must be 1–${MAX_PAGE}`);
        let item: string | undefined;
        if (q.alias !== undefined) {
          if (isBase58Key(q.alias)) item = q.alias;
          else {
            try {
              item = aliasAccountOf(deps.programId, { alias: normalizeAlias(q.alias) }).toBase58();
            } catch {
              throw new ApiError(
                400,
                'invalid_alias',
                `querystring.alias ${JSON.stringify(q.alias)} is not an alias name or account`,
              );
            }
          }
        }
        let domain: string | undefined;
        if (q.domain !== undefined) {
          if (isBase58Key(q.domain)) domain = q.domain;
          else {
            try {
              domain = domainAddress(deps.programId, normalizeDomain(q.domain))[0].toBase58();
            } catch {
              throw new ApiError(
                400,
                'invalid_domain',
                `querystring.domain ${JSON.stringify(q.domain)} is not a domain name or account`,
              );
            }
          }
        }
        const snap = await read(q.fresh);
        const rows = afterCursor(
          snap.listings.filter(
            (r) =>
              (q.kind === undefined || r.kind === q.kind) &&
              (q.mode === undefined || r.mode === q.mode) &&
              (q.holder === undefined || r.holder === q.holder) &&
              (item === undefined || (r.kind === 'alias' && r.item === item)) &&
              (domain === undefined || (r.kind === 'domain' && r.item === domain)) &&
              (q.buyer === undefined || r.buyer === q.buyer) &&
              (q.ended === undefined || String(r.ended) === q.ended),
          ),
          q.cursor,
        );
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        return {
          listings: page,
          next_cursor: rows.length > limit && last ? `${last.created_at}.${last.address}` : null,
          ...freshness(snap),
        };
      },
    );

    app.get(
      '/v1/market/listings/:address',
      {
        config: {
          auth: 'none',
          doc: {
            summary: 'One open listing from the off-chain index',
            tags: ['market'],
            errors: [400, 404, 429, 503],
          },
        },
        schema: {
          params: {
            type: 'object',
            required: ['address'],
            additionalProperties: false,
            properties: { address: { ...WALLET, description: 'the listing account' } },
          },
          querystring: { type: 'object', additionalProperties: false, properties: { fresh: FRESH } },
          response: {
            200: {
              type: 'object',
              additionalProperties: false,
              required: ['listing', 'refreshed_at', 'chain_time'],
              properties: { listing: LISTING_ROW, ...FRESHNESS },
            },
          },
        },
      },
      async (request) => {
        const { address } = request.params as { address: string };
        const snap = await read((request.query as { fresh?: string }).fresh);
        const listing = snap.listings.find((r) => r.address === address);
        if (!listing)
          throw new ApiError(
            404,
            'listing_not_found',
            `no open listing ${address} (sold, settled, cancelled or never listed)`,
          );
        return { listing, ...freshness(snap) };
      },
    );

    /** A JWT route answering the token wallet's part of the snapshot: `{...fields, refreshed_at, chain_time}`. */
    const ownRoute = (
      path: string,
      summary: string,
      fields: Record<string, { items: object; description?: string }>,
      pick: (snap: MarketSnapshot, wallet: string) => Record<string, unknown[]>,
    ) =>
      app.get(
        path,
        {
          config: { auth: 'jwt', doc: { summary, tags: ['market'], errors: [400, 401, 429, 503] } },
          schema: {
            querystring: { type: 'object', additionalProperties: false, properties: { fresh: FRESH } },
            response: {
              200: {
                type: 'object',
                additionalProperties: false,
                required: [...Object.keys(fields), 'refreshed_at', 'chain_time'],
                properties: {
                  ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { type: 'array', ...v }])),
                  ...FRESHNESS,
                },
              },
            },
          },
        },
        async (request) => {
          const snap = await read((request.query as { fresh?: string }).fresh);
          return { ...pick(snap, request.wallet), ...freshness(snap) };
        },
      );

    ownRoute(
      '/v1/market/offers',
      'Pending alias escrow offers addressed to you, and those you made',
      {
        received: { items: ESCROW_ROW, description: 'offers you may accept' },
        made: { items: ESCROW_ROW, description: 'your offers (withdraw them any time)' },
      },
      (snap, wallet) => ({
        received: snap.escrows.filter((e) => e.recipient === wallet),
        made: snap.escrows.filter((e) => e.holder === wallet),
      }),
    );
    ownRoute(
      '/v1/market/bids',
      'Your escrowed bids (you hold the high bid of each listing named)',
      { bids: { items: BID_ROW } },
      (snap, wallet) => ({ bids: snap.bids.filter((b) => b.bidder === wallet) }),
    );

    app.get(
      '/v1/timelocks',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Your pending timelocks: mailbox close, and deactivations and reclaims of your domains',
            description:
              'Read from the chain at each request: the program index is brought up to date after the request arrived (not cached). ends_at is the chain time from which the record can be completed; can_complete compares it with chain_time.',
            tags: ['timelocks'],
            errors: [401, 429, 503],
          },
        },
        schema: {
          response: {
            200: {
              type: 'object',
              additionalProperties: false,
              required: ['timelocks', 'chain_time'],
              properties: { timelocks: { type: 'array', items: TIMELOCK_ROW }, chain_time: SECS },
            },
          },
        },
      },
      async (request) => {
        try {
          const asked = (deps.now ?? Date.now)();
          const [chainTime] = await Promise.all([chainNow(deps.connection), index.index.sync(asked)]);
          const timelocks = await walletTimelocks(
            deps.connection,
            deps.programId,
            request.wallet,
            chainTime,
            index.index,
          );
          return { timelocks, chain_time: chainTime };
        } catch (err) {
          chainError(err instanceof ApiError ? err : new ChainUnavailableError(err));
        }
      },
    );
  };
}
