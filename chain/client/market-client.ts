// Readers of the marketplace's records over JSON-RPC (docs/protocol.md
// "Alias marketplace", "Domain marketplace"): one listing or escrow by alias,
// one domain listing by domain, and every open listing or escrow, optionally
// narrowed by memcmp on a wallet field.
import type { Connection, PublicKey } from '@solana/web3.js';
import {
  ALIAS_ESCROW_SIZE,
  ALIAS_LISTING_SIZE,
  type AliasEscrow,
  type AliasListing,
  aliasEscrowLayout,
  aliasListingLayout,
  DOMAIN_LISTING_SIZE,
  type DomainListing,
  decodeAliasEscrow,
  decodeAliasListing,
  decodeDomainListing,
  domainListingLayout,
} from './accounts/index.ts';
import { type Key, keyBytes, toPublicKey } from './bytes.ts';
import { type Located, listKind } from './client.ts';
import { domainListingOf } from './domain-market-instructions.ts';
import { type AliasRef, escrowOf, listingOf } from './market-instructions.ts';
import type { DomainRef } from './timelock-instructions.ts';

async function fetchOurs<T>(
  conn: Connection,
  programId: Key,
  address: PublicKey,
  decode: (d: Uint8Array) => T,
): Promise<T | null> {
  const info = await conn.getAccountInfo(address);
  if (!info?.owner.equals(toPublicKey(programId))) return null;
  return decode(new Uint8Array(info.data));
}

/** The alias's open listing, or null. */
export function getListing(conn: Connection, programId: Key, ref: AliasRef): Promise<AliasListing | null> {
  return fetchOurs(conn, programId, listingOf(programId, ref), decodeAliasListing);
}

/** The alias's pending escrow offer, or null. */
export function getEscrow(conn: Connection, programId: Key, ref: AliasRef): Promise<AliasEscrow | null> {
  return fetchOurs(conn, programId, escrowOf(programId, ref), decodeAliasEscrow);
}

/** Every open AliasListing (optionally one holder's), oldest first. */
export async function listAliasListings(
  conn: Connection,
  programId: Key,
  opts: { holder?: Key } = {},
): Promise<Located<AliasListing>[]> {
  const extra =
    opts.holder === undefined
      ? []
      : [{ offset: aliasListingLayout.offsets.holder, bytes: keyBytes(opts.holder) }];
  const all = await listKind(conn, programId, 8, ALIAS_LISTING_SIZE, decodeAliasListing, extra);
  return all.sort((x, y) => Number(x.account.createdAt - y.account.createdAt));
}

/** Every pending AliasEscrow (optionally those offered to one recipient), oldest first. */
export async function listAliasEscrows(
  conn: Connection,
  programId: Key,
  opts: { recipient?: Key } = {},
): Promise<Located<AliasEscrow>[]> {
  const extra =
    opts.recipient === undefined
      ? []
      : [{ offset: aliasEscrowLayout.offsets.recipient, bytes: keyBytes(opts.recipient) }];
  const all = await listKind(conn, programId, 10, ALIAS_ESCROW_SIZE, decodeAliasEscrow, extra);
  return all.sort((x, y) => Number(x.account.offeredAt - y.account.offeredAt));
}

/** The domain's open DomainListing, or null. */
export function getDomainListing(
  conn: Connection,
  programId: Key,
  ref: DomainRef,
): Promise<DomainListing | null> {
  return fetchOurs(conn, programId, domainListingOf(programId, ref), decodeDomainListing);
}

/**
 * Every open DomainListing (optionally one holder's, or those a wallet may
 * buy: named to it; open ones have the zero key there), oldest first.
 */
export async function listDomainListings(
  conn: Connection,
  programId: Key,
  opts: { holder?: Key; buyer?: Key } = {},
): Promise<Located<DomainListing>[]> {
  const { offsets } = domainListingLayout;
  const extra = [
    ...(opts.holder === undefined ? [] : [{ offset: offsets.holder, bytes: keyBytes(opts.holder) }]),
    ...(opts.buyer === undefined ? [] : [{ offset: offsets.buyer, bytes: keyBytes(opts.buyer) }]),
  ];
  const all = await listKind(conn, programId, 9, DOMAIN_LISTING_SIZE, decodeDomainListing, extra);
  return all.sort((x, y) => Number(x.account.createdAt - y.account.createdAt));
}
