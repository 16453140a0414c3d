// The marketplace and timelock actions of the page (server mode): each is
// prepared from a fresh chain read — the listing, escrow or pending record
// as it is now, the rents, the wallet's balance — into what the
// confirmation sheet shows (itemized amounts, the balance afterwards) and
// the instructions the wallet signs on "Confirm". Preparing reads only;
// nothing is signed or spent before the holder confirms, and the program
// re-checks every rule (its refusal is shown in words, errors.ts).
import { type Connection, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import {
  ALIAS_BID_SIZE,
  ALIAS_ESCROW_SIZE,
  ALIAS_LISTING_SIZE,
  DOMAIN_LISTING_SIZE,
  PENDING_DEACTIVATION_SIZE,
  PENDING_MAILBOX_CLOSE_SIZE,
} from '../../../chain/client/accounts/index.ts';
import { ZERO_KEY } from '../../../chain/client/bytes.ts';
import { getAlias, getDomain, getMailbox } from '../../../chain/client/client.ts';
import { normalizeAlias, normalizeDomain } from '../../../chain/client/hash.ts';
import {
  type AliasRef,
  AUCTION_MAX_SECS,
  acceptAliasInstruction,
  bidAliasInstruction,
  buyAliasInstruction,
  buyDomainInstruction,
  cancelDeactivationInstruction,
  cancelDomainListingInstruction,
  cancelListingInstruction,
  cancelMailboxCloseInstruction,
  closeMailboxInstruction,
  DOMAIN_LISTING_MAX_SECS,
  domainListingOf,
  isDomainListed,
  listAliasInstruction,
  listDomainInstruction,
  listingOf,
  minimumBid,
  offerAliasInstruction,
  reclaimAliasInstruction,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
  settleAuctionInstruction,
  settleDomainTimelockInstruction,
} from '../../../chain/client/instructions.ts';
import { getDomainListing, getEscrow, getListing } from '../../../chain/client/market-client.ts';
import {
  aliasBidAddress,
  domainAddress,
  mailboxAddress,
  pendingCloseAddress,
  pendingDeactivationAddress,
} from '../../../chain/client/pda.ts';
import { getPendingDeactivation, getPendingMailboxClose } from '../../../chain/client/timelock-client.ts';
import { formatSol, SIGNATURE_FEE } from './compose.ts';
import { type FeeQuote, quotePriorityFee } from './tx.ts';

/** A line of the sheet: what moves, in lamports (negative: comes back to the wallet). */
export interface CostRow {
  label: string;
  lamports: bigint;
  testId: string;
}

export interface PreparedAction {
  title: string;
  /** One sentence on what happens. */
  summary: string;
  rows: CostRow[];
  /** Σ rows: what the wallet's balance drops by (negative: it grows). */
  net: bigint;
  balance: bigint;
  after: bigint;
  confirmLabel: string;
  /** What the page says once it is confirmed. */
  done: string;
  instructions: TransactionInstruction[];
  /** The compute budget's price, shown as the priority fee row and paid by the send. */
  feeQuote?: FeeQuote;
}

/** A refusal before anything is shown or signed (bad input, nothing to act on). */
export class MarketInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MarketInputError';
  }
}

interface Ctx {
  conn: Connection;
  programId: string;
  wallet: PublicKey;
}

const row = (label: string, lamports: bigint, testId: string): CostRow => ({ label, lamports, testId });
/** An amount that comes back to the wallet (shown as "… SOL back"). */
const back = (label: string, lamports: bigint): CostRow =>
  row(`${label} (returned to you)`, -lamports, 'cost-returned');
const FEE_ROW = row('Network fee', SIGNATURE_FEE, 'cost-fee');

async function finish(
  c: Ctx,
  a: Omit<PreparedAction, 'net' | 'balance' | 'after' | 'rows' | 'feeQuote'> & { rows: CostRow[] },
): Promise<PreparedAction> {
  const feeQuote = await quotePriorityFee(c.conn, a.instructions, c.wallet);
  const rows = [...a.rows, FEE_ROW, row('Priority fee', feeQuote.lamports, 'cost-priority')];
  const net = rows.reduce((sum, r) => sum + r.lamports, 0n);
  const balance = BigInt(await c.conn.getBalance(c.wallet, 'confirmed'));
  return { ...a, rows, net, balance, after: balance - net, feeQuote };
}

const rent = (c: Ctx, size: number) => c.conn.getMinimumBalanceForRentExemption(size).then(BigInt);
/** The rent of an account the action creates (what `label` says of its return). */
const rentRow = async (c: Ctx, label: string, size: number): Promise<CostRow> =>
  row(label, await rent(c, size), 'cost-rent');

/** An alias typed by the holder: its normalized name (a helpful error otherwise). */
export function aliasName(text: string): string {
  try {
    return normalizeAlias(text.trim());
  } catch {
    throw new MarketInputError(`"${text.trim()}" is not an alias name (letters, digits, . _ -).`);
  }
}

function sol(text: string, what: string, opts: { min?: bigint } = {}): bigint {
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text.trim());
  if (!m) throw new MarketInputError(`${what}: "${text.trim()}" is not an amount of SOL (for example 1.5).`);
  const v = BigInt(m[1] as string) * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
  if (opts.min !== undefined && v < opts.min)
    throw new MarketInputError(`${what} must be at least ${formatSol(opts.min)} SOL.`);
  return v;
}

function walletAddress(text: string): PublicKey {
  try {
    return new PublicKey(text.trim());
  } catch {
    throw new MarketInputError(`"${text.trim()}" is not a wallet address.`);
  }
}

/** SOL text → lamports (for forms). */
export const parseAmount = sol;

async function ownedAlias(c: Ctx, name: string) {
  const alias = await getAlias(c.conn, c.programId, name);
  if (!alias) throw new MarketInputError(`There is no alias "${name}" on chain.`);
  return alias;
}

export async function prepareList(
  c: Ctx,
  p: {
    alias: string;
    mode: 'fixed' | 'auction';
    price: string;
    endsInHours?: string;
    antisnipeMinutes?: string;
  },
): Promise<PreparedAction> {
  const name = aliasName(p.alias);
  await ownedAlias(c, name);
  const price = sol(p.price, p.mode === 'fixed' ? 'Price' : 'Reserve', { min: 1n });
  const ref: AliasRef = { alias: name };
  let ix: TransactionInstruction;
  let summary: string;
  if (p.mode === 'fixed') {
    ix = listAliasInstruction({ programId: c.programId, holder: c.wallet, ...ref, priceLamports: price });
    summary = `List ${name} for ${formatSol(price)} SOL. The first buyer pays you that and takes the alias; until then it stays yours and you can cancel.`;
  } else {
    const hours = Number((p.endsInHours ?? '').trim());
    const maxHours = Number(AUCTION_MAX_SECS) / 3600;
    if (!Number.isFinite(hours) || hours <= 0 || hours > maxHours)
      throw new MarketInputError(
        `The auction must run for more than 0 hours and at most ${maxHours} hours (${maxHours / 24} days).`,
      );
    const minutes = Number((p.antisnipeMinutes ?? '0').trim() || '0');
    if (!Number.isInteger(minutes) || minutes < 0 || minutes > 1440)
      throw new MarketInputError('The anti-snipe window is 0 to 1440 minutes.');
    const endsAt = BigInt(Math.floor(Date.now() / 1000 + hours * 3600));
    ix = listAliasInstruction({
      programId: c.programId,
      holder: c.wallet,
      ...ref,
      auction: { reserveLamports: price, endsAt, antisnipeSecs: BigInt(minutes * 60) },
    });
    summary = `Auction ${name} with a reserve of ${formatSol(price)} SOL, ending ${new Date(Number(endsAt) * 1000).toLocaleString()}${minutes > 0 ? `; a bid in the last ${minutes} min moves the end to ${minutes} min after that bid` : ''}.`;
  }
  return finish(c, {
    title: `List ${name}?`,
    summary,
    rows: [await rentRow(c, 'Listing account rent (returned when the listing closes)', ALIAS_LISTING_SIZE)],
    confirmLabel: 'Confirm and list',
    done: `${name} is listed.`,
    instructions: [ix],
  });
}

async function openListing(c: Ctx, item: string) {
  const listing = await getListing(c.conn, c.programId, { aliasAccount: item });
  if (!listing) throw new MarketInputError('This listing is no longer open (sold, settled or cancelled).');
  return listing;
}

export async function prepareBid(
  c: Ctx,
  p: { item: string; label: string; amount: string },
): Promise<PreparedAction> {
  const listing = await openListing(c, p.item);
  const amount = sol(p.amount, 'Bid');
  const highBidder = listing.highBidder.equals(ZERO_KEY) ? null : listing.highBidder;
  const raising = highBidder?.equals(c.wallet) ?? false;
  const listingAddr = listingOf(c.programId, { aliasAccount: p.item });
  const bidAccount = aliasBidAddress(c.programId, listingAddr, c.wallet)[0];
  const rows: CostRow[] = [
    row(
      raising
        ? `Raise of your high bid to ${formatSol(amount)} SOL (held by the program until the auction settles)`
        : 'Your bid (held by the program; returned in full if someone outbids you)',
      raising ? amount - listing.highBidLamports : amount,
      'cost-bid',
    ),
  ];
  if (!raising)
    rows.push(
      row(
        'Bid account rent (returned with the bid, or at settlement)',
        (await c.conn.getAccountInfo(bidAccount)) ? 0n : await rent(c, ALIAS_BID_SIZE),
        'cost-rent',
      ),
    );
  return finish(c, {
    title: `Bid on ${p.label}?`,
    summary: `Bid ${formatSol(amount)} SOL. The least bid now is ${formatSol(minimumBid(listing))} SOL; the auction ends ${new Date(Number(listing.expiresAt) * 1000).toLocaleString()}.`,
    rows,
    confirmLabel: 'Confirm and bid',
    done: `Your bid of ${formatSol(amount)} SOL on ${p.label} is in.`,
    instructions: [
      bidAliasInstruction({
        programId: c.programId,
        bidder: c.wallet,
        aliasAccount: p.item,
        amountLamports: amount,
        highBidder,
      }),
    ],
  });
}

export async function prepareBuy(c: Ctx, p: { item: string; label: string }): Promise<PreparedAction> {
  const listing = await openListing(c, p.item);
  return finish(c, {
    title: `Buy ${p.label}?`,
    summary: `You pay the holder ${formatSol(listing.priceLamports)} SOL and the alias becomes yours: mail to it comes to your wallet.`,
    rows: [row('Price (paid to the holder)', listing.priceLamports, 'cost-price')],
    confirmLabel: 'Confirm and buy',
    done: `${p.label} is yours.`,
    instructions: [
      buyAliasInstruction({
        programId: c.programId,
        buyer: c.wallet,
        holder: listing.holder,
        aliasAccount: p.item,
      }),
    ],
  });
}

export async function prepareSettle(c: Ctx, p: { item: string; label: string }): Promise<PreparedAction> {
  const listing = await openListing(c, p.item);
  const highBidder = listing.highBidder.equals(ZERO_KEY) ? null : listing.highBidder;
  const mine = listing.holder.equals(c.wallet);
  const rows: CostRow[] = [];
  if (mine)
    rows.push(
      row(
        highBidder ? 'Winning bid and listing rent (paid to you)' : 'Listing rent (returned to you)',
        -(listing.highBidLamports + (await rent(c, ALIAS_LISTING_SIZE))),
        'cost-returned',
      ),
    );
  else if (highBidder?.equals(c.wallet))
    rows.push(
      row(
        'Bid account rent (returned to you; your bid pays the holder)',
        -(await rent(c, ALIAS_BID_SIZE)),
        'cost-returned',
      ),
    );
  return finish(c, {
    title: `Settle the auction of ${p.label}?`,
    summary: highBidder
      ? `The auction has ended: the alias goes to the high bidder, the winning bid of ${formatSol(listing.highBidLamports)} SOL to the holder.`
      : 'The auction ended without bids: the alias returns to its holder.',
    rows,
    confirmLabel: 'Confirm and settle',
    done: `The auction of ${p.label} is settled.`,
    instructions: [
      settleAuctionInstruction({
        programId: c.programId,
        holder: listing.holder,
        highBidder,
        aliasAccount: p.item,
      }),
    ],
  });
}

export async function prepareCancel(c: Ctx, p: { item: string; label: string }): Promise<PreparedAction> {
  await openListing(c, p.item);
  return finish(c, {
    title: `Cancel the listing of ${p.label}?`,
    summary: 'The alias comes back to you. A listing someone has bid on cannot be cancelled.',
    rows: [back('Listing rent', await rent(c, ALIAS_LISTING_SIZE))],
    confirmLabel: 'Confirm and cancel the listing',
    done: `The listing of ${p.label} is cancelled.`,
    instructions: [
      cancelListingInstruction({ programId: c.programId, holder: c.wallet, aliasAccount: p.item }),
    ],
  });
}

export async function prepareOffer(
  c: Ctx,
  p: { alias: string; recipient: string; fee: string; days: string },
): Promise<PreparedAction> {
  const name = aliasName(p.alias);
  await ownedAlias(c, name);
  const recipient = walletAddress(p.recipient);
  const fee = sol(p.fee.trim() === '' ? '0' : p.fee, 'Fee');
  const days = Number(p.days.trim());
  if (!Number.isFinite(days) || days <= 0 || days > 365)
    throw new MarketInputError('The offer must stay open for more than 0 days (at most 365).');
  const expiresAt = BigInt(Math.floor(Date.now() / 1000 + days * 86_400));
  return finish(c, {
    title: `Offer ${name} to ${p.recipient.trim().slice(0, 4)}…?`,
    summary: `Only ${p.recipient.trim()} may accept, by paying you ${formatSol(fee)} SOL, until ${new Date(Number(expiresAt) * 1000).toLocaleString()}. Until then the alias stays with the offer; you can withdraw it.`,
    rows: [
      await rentRow(c, 'Offer account rent (returned when it is accepted or withdrawn)', ALIAS_ESCROW_SIZE),
    ],
    confirmLabel: 'Confirm and offer',
    done: `${name} is offered.`,
    instructions: [
      offerAliasInstruction({
        programId: c.programId,
        holder: c.wallet,
        alias: name,
        recipient,
        feeLamports: fee,
        expiresAt,
      }),
    ],
  });
}

async function openEscrow(c: Ctx, alias: string) {
  const escrow = await getEscrow(c.conn, c.programId, { aliasAccount: alias });
  if (!escrow) throw new MarketInputError('This offer is no longer open.');
  return escrow;
}

export async function prepareAccept(c: Ctx, p: { alias: string; label: string }): Promise<PreparedAction> {
  const escrow = await openEscrow(c, p.alias);
  return finish(c, {
    title: `Accept ${p.label}?`,
    summary: 'The alias becomes yours: mail to it comes to your wallet.',
    rows: [row('Fee (paid to the offering holder)', escrow.feeLamports, 'cost-price')],
    confirmLabel: 'Confirm and accept',
    done: `${p.label} is yours.`,
    instructions: [
      acceptAliasInstruction({
        programId: c.programId,
        recipient: c.wallet,
        holder: escrow.holder,
        aliasAccount: p.alias,
      }),
    ],
  });
}

export async function prepareWithdraw(c: Ctx, p: { alias: string; label: string }): Promise<PreparedAction> {
  const escrow = await openEscrow(c, p.alias);
  return finish(c, {
    title: `Withdraw the offer of ${p.label}?`,
    summary: 'The alias comes back to you.',
    rows: [back('Offer account rent', await rent(c, ALIAS_ESCROW_SIZE))],
    confirmLabel: 'Confirm and withdraw',
    done: `The offer of ${p.label} is withdrawn.`,
    instructions: [
      reclaimAliasInstruction({
        programId: c.programId,
        signer: c.wallet,
        holder: escrow.holder,
        aliasAccount: p.alias,
      }),
    ],
  });
}

// Domains -------------------------------------------------------------------

function domainName(text: string): string {
  try {
    return normalizeDomain(text.trim());
  } catch {
    throw new MarketInputError(`"${text.trim()}" is not a domain name.`);
  }
}

/** The chain's clock (a listing's term is counted from it, not from this device's). */
async function chainSeconds(c: Ctx): Promise<bigint> {
  const t = await c.conn.getBlockTime(await c.conn.getSlot('confirmed'));
  return BigInt(t ?? Math.floor(Date.now() / 1000));
}

/** Longest term the form offers, in days (the program's maximum). */
export const DOMAIN_LISTING_MAX_DAYS = Number(DOMAIN_LISTING_MAX_SECS) / 86_400;
/** Room for the transaction to land: a term of exactly the maximum would exceed it by then. */
const TERM_MARGIN_SECS = 120n;

const DNS_HINT = (domain: string, wallet: PublicKey) =>
  `Publish the DNS TXT record _solana.authority.${domain} with the value ${wallet.toBase58()} (replacing the seller's) and point its MX records at your mail server.`;

export async function prepareListDomain(
  c: Ctx,
  p: { domain: string; price: string; buyer: string; days: string },
): Promise<PreparedAction> {
  const domain = domainName(p.domain);
  const record = await getDomain(c.conn, c.programId, domain);
  if (!record) throw new MarketInputError(`${domain} is not a mail domain on chain.`);
  const mailDomain = domainAddress(c.programId, domain)[0];
  if (isDomainListed(c.programId, mailDomain, record.authority))
    throw new MarketInputError(`${domain} is already listed.`);
  if (!record.authority.equals(c.wallet))
    throw new MarketInputError(`This wallet is not the authority of ${domain}, so it cannot list it.`);
  const buyer = p.buyer.trim() === '' ? undefined : walletAddress(p.buyer);
  if (buyer?.equals(c.wallet)) throw new MarketInputError('The named buyer must be another wallet.');
  const price = sol(p.price.trim() === '' ? '0' : p.price, 'Price');
  if (price === 0n && !buyer)
    throw new MarketInputError('A price of 0 is a gift: name the wallet that receives it.');
  const days = Number(p.days.trim());
  if (!Number.isFinite(days) || days <= 0 || days > DOMAIN_LISTING_MAX_DAYS)
    throw new MarketInputError(
      `A domain is listed for more than 0 days and at most ${DOMAIN_LISTING_MAX_DAYS}.`,
    );
  const now = await chainSeconds(c);
  const term = BigInt(Math.round(days * 86_400));
  const expiresAt =
    now +
    (term > DOMAIN_LISTING_MAX_SECS - TERM_MARGIN_SECS ? DOMAIN_LISTING_MAX_SECS - TERM_MARGIN_SECS : term);
  const until = new Date(Number(expiresAt) * 1000).toLocaleString();
  const who = buyer ? `only ${buyer.toBase58()} may buy it` : 'anyone may buy it';
  return finish(c, {
    title: `List ${domain}?`,
    summary: `List ${domain} for ${formatSol(price)} SOL until ${until}; ${who}. While it is listed the domain's authority is the listing: mail your server relays for ${domain} waits (senders retry), and you can cancel any time to get it back.`,
    rows: [await rentRow(c, 'Listing account rent (returned when the listing closes)', DOMAIN_LISTING_SIZE)],
    confirmLabel: 'Confirm and list',
    done: `${domain} is listed.`,
    instructions: [
      listDomainInstruction({
        programId: c.programId,
        domain,
        holder: c.wallet,
        priceLamports: price,
        expiresAt,
        ...(buyer ? { buyer } : {}),
      }),
    ],
  });
}

async function openDomainListing(c: Ctx, domain: string) {
  const listing = await getDomainListing(c.conn, c.programId, { domain });
  if (!listing) throw new MarketInputError(`${domain} is not listed (sold, returned or never listed).`);
  return listing;
}

/**
 * Buying reads the listing as it is now; the program refuses one's own
 * listing, another wallet's hand-off and an expired listing (in words on the sheet).
 */
export async function prepareBuyDomain(c: Ctx, p: { domain: string }): Promise<PreparedAction> {
  const domain = domainName(p.domain);
  const listing = await openDomainListing(c, domain);
  return finish(c, {
    title: `Buy ${domain}?`,
    summary: `You pay the holder ${formatSol(listing.priceLamports)} SOL and become the authority of ${domain} on chain. Then publish your key in its DNS and point its MX records at your server.`,
    rows: [
      row('Price (paid to the holder)', listing.priceLamports, 'cost-price'),
      row("Rent (none: no account is created; the listing's rent returns to the holder)", 0n, 'cost-rent'),
    ],
    confirmLabel: 'Confirm and buy',
    done: `${domain} is yours. ${DNS_HINT(domain, c.wallet)}`,
    instructions: [
      buyDomainInstruction({ programId: c.programId, domain, buyer: c.wallet, holder: listing.holder }),
    ],
  });
}

/** The holder cancels any time; anyone returns an expired listing to its holder. */
export async function prepareCancelDomain(c: Ctx, p: { domain: string }): Promise<PreparedAction> {
  const domain = domainName(p.domain);
  const listing = await openDomainListing(c, domain);
  const mine = listing.holder.equals(c.wallet);
  const rentLamports = BigInt(await c.conn.getBalance(domainListingOf(c.programId, { domain }), 'confirmed'));
  return finish(c, {
    title: mine ? `Cancel the listing of ${domain}?` : `Return ${domain} to its holder?`,
    summary: mine
      ? `${domain} comes back to you and your server relays its mail again.`
      : `The listing has expired: ${domain} goes back to its holder, who also gets the listing's rent. You pay only the network fee.`,
    rows: mine
      ? [back('Listing rent', rentLamports)]
      : [row('Listing rent (returned to the holder, not you)', 0n, 'cost-rent')],
    confirmLabel: mine ? 'Confirm and cancel the listing' : 'Confirm and return',
    done: mine ? `The listing of ${domain} is cancelled.` : `${domain} is back with its holder.`,
    instructions: [
      cancelDomainListingInstruction({
        programId: c.programId,
        domain,
        signer: c.wallet,
        holder: listing.holder,
      }),
    ],
  });
}

// Timelocks ----------------------------------------------------------------

export async function prepareMailboxClose(
  c: Ctx,
  step: 'request' | 'cancel' | 'close',
): Promise<PreparedAction> {
  const p = { programId: c.programId, owner: c.wallet };
  const pending = await getPendingMailboxClose(c.conn, c.programId, c.wallet);
  if (step === 'request') {
    if (!(await getMailbox(c.conn, c.programId, c.wallet)))
      throw new MarketInputError('This wallet has no mailbox on chain to close.');
    return finish(c, {
      title: 'Start closing your mailbox?',
      summary:
        'The mailbox can be closed 7 days from now; mail sent to it meanwhile still lands, and you can cancel until you close it.',
      rows: [
        await rentRow(
          c,
          'Pending-close record rent (returned on cancel or close)',
          PENDING_MAILBOX_CLOSE_SIZE,
        ),
      ],
      confirmLabel: 'Confirm and start',
      done: 'The close of your mailbox is started.',
      instructions: [requestMailboxCloseInstruction(p)],
    });
  }
  if (!pending) throw new MarketInputError('No close of your mailbox is pending.');
  const recordLamports = BigInt(await c.conn.getBalance(pendingCloseAddress(c.programId, c.wallet)[0]));
  if (step === 'cancel')
    return finish(c, {
      title: 'Cancel the close of your mailbox?',
      summary: 'Your mailbox stays open.',
      rows: [back('Pending-close record rent', recordLamports)],
      confirmLabel: 'Confirm and cancel the close',
      done: 'The close of your mailbox is cancelled.',
      instructions: [cancelMailboxCloseInstruction(p)],
    });
  const mailboxLamports = BigInt(await c.conn.getBalance(mailboxAddress(c.programId, c.wallet)[0]));
  return finish(c, {
    title: 'Close your mailbox now?',
    summary:
      'The mailbox account closes: no new mail lands for this wallet on chain. Your messages, keys and aliases stay.',
    rows: [back('Mailbox and record rent', recordLamports + mailboxLamports)],
    confirmLabel: 'Confirm and close the mailbox',
    done: 'Your mailbox is closed.',
    instructions: [closeMailboxInstruction(p)],
  });
}

export async function prepareDeactivation(
  c: Ctx,
  p: { domain: string; step: 'request' | 'cancel' | 'finish' },
): Promise<PreparedAction> {
  let domain: string;
  try {
    domain = normalizeDomain(p.domain.trim());
  } catch {
    throw new MarketInputError(`"${p.domain.trim()}" is not a domain name.`);
  }
  const record = await getDomain(c.conn, c.programId, domain);
  if (!record) throw new MarketInputError(`${domain} is not a mail domain on chain.`);
  const ref = { programId: c.programId, domain, authority: c.wallet };
  if (p.step === 'request')
    return finish(c, {
      title: `Start deactivating ${domain}?`,
      summary: `${domain} can be deactivated 30 days from now (the notice its users get); until then nothing changes, and you can cancel.`,
      rows: [
        await rentRow(
          c,
          'Pending-deactivation record rent (returned on cancel or when it completes)',
          PENDING_DEACTIVATION_SIZE,
        ),
      ],
      confirmLabel: 'Confirm and start',
      done: `The deactivation of ${domain} is started.`,
      instructions: [requestDeactivationInstruction(ref)],
    });
  if (!(await getPendingDeactivation(c.conn, c.programId, domain)))
    throw new MarketInputError(`No deactivation of ${domain} is pending.`);
  const recordLamports = BigInt(
    await c.conn.getBalance(
      pendingDeactivationAddress(c.programId, domainAddress(c.programId, domain)[0])[0],
    ),
  );
  const toMe = record.authority.equals(c.wallet);
  const returned: CostRow[] = toMe ? [back('Pending-deactivation record rent', recordLamports)] : [];
  if (p.step === 'cancel')
    return finish(c, {
      title: `Cancel the deactivation of ${domain}?`,
      summary: `${domain} stays active.`,
      rows: returned,
      confirmLabel: 'Confirm and cancel the deactivation',
      done: `The deactivation of ${domain} is cancelled.`,
      instructions: [cancelDeactivationInstruction(ref)],
    });
  return finish(c, {
    title: `Finish deactivating ${domain}?`,
    summary: `${domain} becomes inactive: it takes no relayed mail and no new mailboxes. No instruction reactivates it.`,
    rows: returned,
    confirmLabel: 'Confirm and deactivate',
    done: `${domain} is deactivated.`,
    instructions: [
      settleDomainTimelockInstruction({
        programId: c.programId,
        domain,
        record: 'deactivation',
        rentTo: record.authority,
      }),
    ],
  });
}
