// `sealpost market`: the alias marketplace on chain (docs/protocol.md, "Alias
// marketplace"; `market domain` is in market-domain.ts): open listings; selling an alias at a fixed price or by
// auction; bidding, buying, settling, cancelling; and the escrowed hand-off
// to a named wallet (offer, accept, reclaim). Every command reads the
// listing or escrow first, so it can name the accounts the instruction needs
// and say plainly what is missing; the program re-checks every rule.
import type { PublicKey } from '@solana/web3.js';
import type { Command } from 'commander';
import type { AliasEscrow, AliasListing } from '../../../../chain/client/accounts/index.ts';
import { ZERO_KEY } from '../../../../chain/client/bytes.ts';
import { isBase58Key, normalizeAlias } from '../../../../chain/client/hash.ts';
import {
  type AliasRef,
  AUCTION_MAX_SECS,
  acceptAliasInstruction,
  aliasAccountOf,
  bidAliasInstruction,
  buyAliasInstruction,
  cancelListingInstruction,
  LISTING_MODE,
  listAliasInstruction,
  minimumBid,
  offerAliasInstruction,
  reclaimAliasInstruction,
  settleAuctionInstruction,
} from '../../../../chain/client/instructions.ts';
import { getEscrow, getListing, listAliasListings } from '../../../../chain/client/market-client.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { solOption } from '../../options.ts';
import { addChainOptions, type ChainOpts, chainOf, keyCommand, report, send } from '../chain-cli.ts';
import { addressOption, intOption, loadKeypair } from '../operate/program-common.ts';
import { isoSeconds, sol } from './mailbox-common.ts';
import { registerDomainMarket } from './market-domain.ts';

interface KeyOpts extends ChainOpts {
  key: string;
  json?: boolean;
}

/** NAME: an alias (any spelling CreateAlias accepts) or its Alias account address. */
function aliasArg(value: string): { ref: AliasRef; label: string } {
  if (isBase58Key(value)) return { ref: { aliasAccount: value }, label: value };
  let name: string;
  try {
    name = normalizeAlias(value);
  } catch {
    throw new CliError(`NAME: "${value}" is neither an alias nor an Alias account address`, EXIT_USAGE);
  }
  return { ref: { alias: name }, label: name };
}

function listingRow(address: PublicKey, l: AliasListing) {
  const auction = l.mode === LISTING_MODE.auction;
  const bidder = l.highBidder.equals(ZERO_KEY) ? null : l.highBidder.toBase58();
  return {
    listing: address.toBase58(),
    alias: l.alias.toBase58(),
    holder: l.holder.toBase58(),
    mode: auction ? 'auction' : 'fixed',
    price_lamports: l.priceLamports.toString(),
    ends_at: auction ? isoSeconds(l.expiresAt) : null,
    antisnipe_secs: Number(l.antisnipeWindowSecs),
    high_bid_lamports: l.highBidLamports.toString(),
    high_bidder: bidder,
    min_bid_lamports: auction ? minimumBid(l).toString() : null,
  };
}

function escrowRow(e: AliasEscrow) {
  return {
    alias: e.alias.toBase58(),
    holder: e.holder.toBase58(),
    recipient: e.recipient.toBase58(),
    fee_lamports: e.feeLamports.toString(),
    expires_at: isoSeconds(e.expiresAt),
  };
}

async function session(name: string, opts: KeyOpts) {
  const alias = aliasArg(name);
  const key = loadKeypair('--key', opts.key);
  const { conn, programId } = await chainOf(opts);
  return { ...alias, key, conn, programId };
}

async function needListing(s: Awaited<ReturnType<typeof session>>): Promise<AliasListing> {
  const listing = await getListing(s.conn, s.programId, s.ref);
  if (!listing) throw new CliError(`${s.label} is not listed`);
  return listing;
}

async function needEscrow(s: Awaited<ReturnType<typeof session>>): Promise<AliasEscrow> {
  const escrow = await getEscrow(s.conn, s.programId, s.ref);
  if (!escrow) throw new CliError(`${s.label} has no pending offer`);
  return escrow;
}

interface SellOpts extends KeyOpts {
  price?: bigint;
  auction?: boolean;
  reserve?: bigint;
  ends?: string;
  antisnipe: number;
}

type SellTerms =
  | { priceLamports: bigint }
  | { auction: { reserveLamports: bigint; endsAt: bigint; antisnipeSecs: bigint } };

function sellTerms(opts: SellOpts): SellTerms {
  if (!!opts.auction === (opts.price !== undefined))
    throw new CliError(
      'market sell: give either --price SOL or --auction (with --reserve and --ends)',
      EXIT_USAGE,
    );
  if (!opts.auction) {
    if (opts.reserve !== undefined || opts.ends !== undefined || opts.antisnipe !== 0)
      throw new CliError('market sell: --reserve, --ends and --antisnipe go with --auction', EXIT_USAGE);
    return { priceLamports: opts.price as bigint };
  }
  if (opts.reserve === undefined || opts.ends === undefined)
    throw new CliError('market sell --auction: --reserve SOL and --ends ISO are required', EXIT_USAGE);
  const ms = Date.parse(opts.ends);
  if (!Number.isFinite(ms) || !/^\d{4}-\d{2}-\d{2}T/.test(opts.ends))
    throw new CliError(
      `--ends: expected an ISO 8601 time (e.g. 2026-05-01T12:00:00Z), got "${opts.ends}"`,
      EXIT_USAGE,
    );
  // ListAlias refuses an end in the past or more than 30 days out; say so before anything is signed.
  const endsAt = BigInt(Math.floor(ms / 1000));
  const now = BigInt(Math.floor(Date.now() / 1000));
  if (endsAt <= now || endsAt - now > AUCTION_MAX_SECS)
    throw new CliError(
      `--ends: an auction ends after now and at most ${AUCTION_MAX_SECS / 86_400n} days from now, got ${opts.ends}`,
      EXIT_USAGE,
    );
  return {
    auction: {
      reserveLamports: opts.reserve,
      endsAt,
      antisnipeSecs: BigInt(opts.antisnipe),
    },
  };
}

export function register(program: Command): void {
  const cmd = program
    .command('market')
    .description(
      'the alias marketplace: list, sell, bid, buy, settle, cancel; offer, accept, reclaim; and `market domain`',
    );
  registerDomainMarket(cmd);

  addChainOptions(
    cmd
      .command('list')
      .description('open alias listings: fixed prices and auctions')
      .option('--holder <wallet>', "only this wallet's listings", addressOption('wallet address'))
      .option('--json', 'print a JSON array on stdout'),
  ).action(async (opts: ChainOpts & { holder?: string; json?: boolean }) => {
    const { conn, programId } = await chainOf(opts);
    const found = await listAliasListings(conn, programId, opts.holder ? { holder: opts.holder } : {});
    const rows = found.map(({ address, account }) => listingRow(address, account));
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    for (const r of rows) {
      const terms =
        r.mode === 'fixed'
          ? `price ${sol(BigInt(r.price_lamports))} SOL`
          : `auction reserve ${sol(BigInt(r.price_lamports))} SOL, high bid ${sol(BigInt(r.high_bid_lamports))} SOL, next ≥ ${sol(BigInt(r.min_bid_lamports ?? 0))} SOL, ends ${r.ends_at}`;
      process.stdout.write(`${r.alias} holder=${r.holder} ${terms}\n`);
    }
  });

  keyCommand(
    cmd.command('sell').argument('<name>', 'the alias (or its Alias account address)'),
    'list an alias you own at a fixed price or by auction (it is locked until bought, settled or cancelled)',
    "the holder's wallet keypair file (signs, pays the listing's rent)",
  )
    .option('--price <sol>', 'fixed price in SOL', solOption)
    .option('--auction', 'sell by auction')
    .option('--reserve <sol>', 'auction: lowest first bid in SOL', solOption)
    .option('--ends <iso>', 'auction: end time, ISO 8601, at most 30 days from now')
    .option(
      '--antisnipe <secs>',
      'auction: a bid this close to the end extends it (0..86400)',
      intOption(0, 86_400),
      0,
    )
    .action(async (name: string, opts: SellOpts) => {
      const terms = sellTerms(opts);
      const s = await session(name, opts);
      const ix = listAliasInstruction({
        programId: s.programId,
        holder: s.key.publicKey,
        ...s.ref,
        ...terms,
      });
      const signature = await send(s.conn, s.key, ix, 'ListAlias');
      const line =
        'priceLamports' in terms
          ? `listed ${s.label} at ${sol(terms.priceLamports)} SOL (${signature})`
          : `listed ${s.label} for auction: reserve ${sol(terms.auction.reserveLamports)} SOL, ends ${isoSeconds(terms.auction.endsAt)}, anti-snipe ${terms.auction.antisnipeSecs} s (${signature})`;
      report(opts, line, { signature, alias: aliasAccountOf(s.programId, s.ref).toBase58() });
    });

  keyCommand(
    cmd.command('bid').argument('<name>', 'the alias'),
    'bid on an auctioned alias (the previous high bidder is refunded in the same transaction)',
    "the bidder's wallet keypair file (signs, pays the bid into escrow)",
  )
    .requiredOption('--amount <sol>', 'the bid in SOL', solOption)
    .action(async (name: string, opts: KeyOpts & { amount: bigint }) => {
      const s = await session(name, opts);
      const l = await needListing(s);
      if (l.mode !== LISTING_MODE.auction)
        throw new CliError(`${s.label} is for sale at a fixed price: use market buy`);
      const highBidder = l.highBidLamports > 0n ? l.highBidder : null;
      const ix = bidAliasInstruction({
        programId: s.programId,
        bidder: s.key.publicKey,
        ...s.ref,
        amountLamports: opts.amount,
        highBidder,
      });
      const signature = await send(s.conn, s.key, ix, 'BidAlias');
      report(opts, `bid ${sol(opts.amount)} SOL on ${s.label} (${signature})`, {
        signature,
        amount_lamports: opts.amount.toString(),
      });
    });

  keyCommand(
    cmd.command('buy').argument('<name>', 'the alias'),
    'buy an alias listed at a fixed price: the price goes to the holder, the alias to you',
    "the buyer's wallet keypair file (signs, pays the price)",
  ).action(async (name: string, opts: KeyOpts) => {
    const s = await session(name, opts);
    const l = await needListing(s);
    if (l.mode !== LISTING_MODE.fixed) throw new CliError(`${s.label} is up for auction: use market bid`);
    const ix = buyAliasInstruction({
      programId: s.programId,
      buyer: s.key.publicKey,
      ...s.ref,
      holder: l.holder,
    });
    const signature = await send(s.conn, s.key, ix, 'BuyAlias');
    report(opts, `bought ${s.label} for ${sol(l.priceLamports)} SOL (${signature})`, {
      signature,
      price_lamports: l.priceLamports.toString(),
    });
  });

  keyCommand(
    cmd.command('settle').argument('<name>', 'the alias'),
    'settle an ended auction (anyone may): the bid to the holder, the alias to the high bidder',
    'any wallet keypair file (pays the transaction fee)',
  ).action(async (name: string, opts: KeyOpts) => {
    const s = await session(name, opts);
    const l = await needListing(s);
    const highBidder = l.highBidLamports > 0n ? l.highBidder : null;
    const ix = settleAuctionInstruction({ programId: s.programId, ...s.ref, holder: l.holder, highBidder });
    const signature = await send(s.conn, s.key, ix, 'SettleAuction');
    const winner = highBidder?.toBase58() ?? null;
    report(
      opts,
      winner
        ? `settled ${s.label}: ${winner} gets it for ${sol(l.highBidLamports)} SOL (${signature})`
        : `settled ${s.label}: no bids, back to ${l.holder.toBase58()} (${signature})`,
      { signature, winner, price_lamports: l.highBidLamports.toString() },
    );
  });

  keyCommand(
    cmd.command('cancel').argument('<name>', 'the alias'),
    'cancel your listing while nobody has bid; the alias and the rent come back',
    "the holder's wallet keypair file",
  ).action(async (name: string, opts: KeyOpts) => {
    const s = await session(name, opts);
    await needListing(s);
    const ix = cancelListingInstruction({ programId: s.programId, holder: s.key.publicKey, ...s.ref });
    const signature = await send(s.conn, s.key, ix, 'CancelListing');
    report(opts, `cancelled the listing of ${s.label} (${signature})`, { signature });
  });

  keyCommand(
    cmd.command('offer').argument('<name>', 'the alias'),
    'offer an alias you own to one wallet for a fee, until it expires (locked meanwhile)',
    "the holder's wallet keypair file (signs, pays the escrow's rent)",
  )
    .requiredOption('--to <wallet>', 'the only wallet that may accept', addressOption('wallet address'))
    .requiredOption('--fee <sol>', 'what the recipient pays you on acceptance (0 = a gift)', solOption)
    .requiredOption('--days <n>', 'days until the offer expires (1..365)', intOption(1, 365))
    .action(async (name: string, opts: KeyOpts & { to: string; fee: bigint; days: number }) => {
      const s = await session(name, opts);
      const expiresAt = BigInt(Math.floor(Date.now() / 1000) + opts.days * 86_400);
      const ix = offerAliasInstruction({
        programId: s.programId,
        holder: s.key.publicKey,
        ...s.ref,
        recipient: opts.to,
        feeLamports: opts.fee,
        expiresAt,
      });
      const signature = await send(s.conn, s.key, ix, 'OfferAlias');
      report(
        opts,
        `offered ${s.label} to ${opts.to} for ${sol(opts.fee)} SOL until ${isoSeconds(expiresAt)} (${signature})`,
        { signature, expires_at: isoSeconds(expiresAt) },
      );
    });

  keyCommand(
    cmd.command('accept').argument('<name>', 'the alias'),
    'accept an alias offered to you before it expires: pay the fee, get the alias',
    "the recipient's wallet keypair file (signs, pays the fee)",
  ).action(async (name: string, opts: KeyOpts) => {
    const s = await session(name, opts);
    const e = await needEscrow(s);
    const ix = acceptAliasInstruction({
      programId: s.programId,
      recipient: s.key.publicKey,
      ...s.ref,
      holder: e.holder,
    });
    const signature = await send(s.conn, s.key, ix, 'AcceptAlias');
    report(opts, `accepted ${s.label} for ${sol(e.feeLamports)} SOL (${signature})`, {
      signature,
      ...escrowRow(e),
    });
  });

  keyCommand(
    cmd.command('reclaim').argument('<name>', 'the alias'),
    'return an offered alias to its holder: the holder any time, anyone after expiry',
    'the holder (or, after expiry, any) wallet keypair file',
  ).action(async (name: string, opts: KeyOpts) => {
    const s = await session(name, opts);
    const e = await needEscrow(s);
    const ix = reclaimAliasInstruction({
      programId: s.programId,
      signer: s.key.publicKey,
      ...s.ref,
      holder: e.holder,
    });
    const signature = await send(s.conn, s.key, ix, 'ReclaimAlias');
    report(opts, `returned ${s.label} to ${e.holder.toBase58()} (${signature})`, { signature });
  });
}
