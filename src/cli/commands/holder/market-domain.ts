// `sealpost market domain`: the domain marketplace on chain (docs/protocol.md,
// "Domain marketplace"): open listings; listing a domain you are the
// authority of, for anyone or for one named wallet; buying; and returning a
// listing to its holder. While listed, the domain's authority is the listing
// (its relayed mail waits); a buyer publishes its own key at
// `_solana.authority.<domain>` afterwards. Every command reads the listing
// first, so it can name the accounts the instruction needs; the program
// re-checks every rule.
import type { Connection, PublicKey } from '@solana/web3.js';
import type { Command } from 'commander';
import { type DomainListing, decodeMailDomain } from '../../../../chain/client/accounts/index.ts';
import { ZERO_KEY } from '../../../../chain/client/bytes.ts';
import { normalizeDomain } from '../../../../chain/client/hash.ts';
import {
  buyDomainInstruction,
  cancelDomainListingInstruction,
  DOMAIN_LISTING_MAX_SECS,
  listDomainInstruction,
} from '../../../../chain/client/instructions.ts';
import { getDomainListing, listDomainListings } from '../../../../chain/client/market-client.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { solOption } from '../../options.ts';
import { addChainOptions, type ChainOpts, chainOf, keyCommand, report, send } from '../chain-cli.ts';
import { addressOption, intOption, loadKeypair } from '../operate/program-common.ts';
import { isoSeconds, sol } from './mailbox-common.ts';

interface KeyOpts extends ChainOpts {
  key: string;
  json?: boolean;
}

const MAX_DAYS = Number(DOMAIN_LISTING_MAX_SECS / 86_400n);

function domainArg(value: string): string {
  try {
    return normalizeDomain(value);
  } catch {
    throw new CliError(`DOMAIN: "${value}" is not a domain name`, EXIT_USAGE);
  }
}

function listingRow(address: PublicKey, l: DomainListing, name: string | null) {
  return {
    listing: address.toBase58(),
    domain: name,
    mail_domain: l.domain.toBase58(),
    holder: l.holder.toBase58(),
    buyer: l.buyer.equals(ZERO_KEY) ? null : l.buyer.toBase58(),
    price_lamports: l.priceLamports.toString(),
    expires_at: isoSeconds(l.expiresAt),
  };
}

/** The DNS names of MailDomain accounts (null for one that cannot be read). */
async function domainNames(conn: Connection, accounts: PublicKey[]): Promise<(string | null)[]> {
  if (accounts.length === 0) return [];
  const infos = await conn.getMultipleAccountsInfo(accounts);
  return infos.map((info) => {
    try {
      return info ? decodeMailDomain(new Uint8Array(info.data)).domain : null;
    } catch {
      return null;
    }
  });
}

async function session(value: string, opts: KeyOpts) {
  const domain = domainArg(value);
  const key = loadKeypair('--key', opts.key);
  const { conn, programId } = await chainOf(opts);
  return { domain, key, conn, programId };
}

async function needListing(s: Awaited<ReturnType<typeof session>>): Promise<DomainListing> {
  const listing = await getDomainListing(s.conn, s.programId, { domain: s.domain });
  if (!listing) throw new CliError(`${s.domain} is not listed`);
  return listing;
}

interface SellOpts extends KeyOpts {
  price: bigint;
  to?: string;
  days: number;
}

export function registerDomainMarket(market: Command): void {
  const cmd = market
    .command('domain')
    .description('the domain marketplace: list, sell (to anyone or one wallet), buy, cancel');

  addChainOptions(
    cmd
      .command('list')
      .description('open domain listings')
      .option('--holder <wallet>', "only this wallet's listings", addressOption('wallet address'))
      .option('--buyer <wallet>', 'only listings offered to this wallet', addressOption('wallet address'))
      .option('--json', 'print a JSON array on stdout'),
  ).action(async (opts: ChainOpts & { holder?: string; buyer?: string; json?: boolean }) => {
    const { conn, programId } = await chainOf(opts);
    const found = await listDomainListings(conn, programId, {
      ...(opts.holder ? { holder: opts.holder } : {}),
      ...(opts.buyer ? { buyer: opts.buyer } : {}),
    });
    const names = await domainNames(
      conn,
      found.map((f) => f.account.domain),
    );
    const rows = found.map(({ address, account }, i) => listingRow(address, account, names[i] ?? null));
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    for (const r of rows) {
      const to = r.buyer ? ` to ${r.buyer}` : '';
      process.stdout.write(
        `${r.domain ?? r.mail_domain} holder=${r.holder} price ${sol(BigInt(r.price_lamports))} SOL${to} until ${r.expires_at}\n`,
      );
    }
  });

  keyCommand(
    cmd.command('sell').argument('<domain>', 'the domain name'),
    `list a domain you are the authority of, for anyone or for one wallet, for 1..${MAX_DAYS} days (its relayed mail waits meanwhile)`,
    "the domain authority's keypair file (signs, pays the listing's rent)",
  )
    .requiredOption('--price <sol>', 'price in SOL (0 only with --to: a gift)', solOption)
    .option('--to <wallet>', 'the only wallet that may buy', addressOption('wallet address'))
    .requiredOption('--days <n>', `days until the listing expires (1..${MAX_DAYS})`, intOption(1, MAX_DAYS))
    .action(async (value: string, opts: SellOpts) => {
      if (opts.price === 0n && !opts.to)
        throw new CliError('market domain sell: --price 0 is a gift and needs --to <wallet>', EXIT_USAGE);
      const s = await session(value, opts);
      const expiresAt = BigInt(Math.floor(Date.now() / 1000) + opts.days * 86_400);
      const ix = listDomainInstruction({
        programId: s.programId,
        domain: s.domain,
        holder: s.key.publicKey,
        priceLamports: opts.price,
        expiresAt,
        ...(opts.to ? { buyer: opts.to } : {}),
      });
      const signature = await send(s.conn, s.key, ix, 'ListDomain');
      const to = opts.to ? ` to ${opts.to}` : '';
      report(
        opts,
        `listed ${s.domain} at ${sol(opts.price)} SOL${to} until ${isoSeconds(expiresAt)}; relayed mail for it waits until the listing closes (${signature})`,
        { signature, expires_at: isoSeconds(expiresAt) },
      );
    });

  keyCommand(
    cmd.command('buy').argument('<domain>', 'the domain name'),
    "buy a listed domain: the price goes to the holder, the domain's authority to you",
    "the buyer's wallet keypair file (signs, pays the price; becomes the domain's authority)",
  ).action(async (value: string, opts: KeyOpts) => {
    const s = await session(value, opts);
    const l = await needListing(s);
    const ix = buyDomainInstruction({
      programId: s.programId,
      domain: s.domain,
      buyer: s.key.publicKey,
      holder: l.holder,
    });
    const signature = await send(s.conn, s.key, ix, 'BuyDomain');
    const authority = s.key.publicKey.toBase58();
    report(
      opts,
      `bought ${s.domain} for ${sol(l.priceLamports)} SOL; publish TXT _solana.authority.${s.domain} = ${authority} and point its MX records at your server (${signature})`,
      {
        signature,
        price_lamports: l.priceLamports.toString(),
        authority,
        dns_record: { name: `_solana.authority.${s.domain}`, type: 'TXT', value: authority },
      },
    );
  });

  keyCommand(
    cmd.command('cancel').argument('<domain>', 'the domain name'),
    'return a listed domain to its holder: the holder any time, anyone after expiry',
    'the holder (or, after expiry, any) wallet keypair file',
  ).action(async (value: string, opts: KeyOpts) => {
    const s = await session(value, opts);
    const l = await needListing(s);
    const ix = cancelDomainListingInstruction({
      programId: s.programId,
      domain: s.domain,
      signer: s.key.publicKey,
      holder: l.holder,
    });
    const signature = await send(s.conn, s.key, ix, 'CancelDomainListing');
    report(opts, `returned ${s.domain} to ${l.holder.toBase58()} (${signature})`, { signature });
  });
}
