// The real mail program against the alias marketplace's rules: fixed-price
// listings, auctions (reserve, minimum raise, anti-snipe, refund of the
// outbid bidder in the same transaction, settlement by anyone), cancel, and
// the escrowed hand-off. Every refusal leaves balances and accounts as they
// were; every completed path moves the alias one way and the payment the
// other, never both to one party.
import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  ALIAS_BID_SIZE,
  ALIAS_ESCROW_SIZE,
  ALIAS_LISTING_SIZE,
  type Alias,
  type AliasListing,
  decodeAlias,
  decodeAliasBid,
  decodeAliasEscrow,
  decodeAliasListing,
} from '../../chain/client/accounts/index.ts';
import {
  acceptAliasInstruction,
  aliasAccountOf,
  bidAliasInstruction,
  buyAliasInstruction,
  cancelListingInstruction,
  createAliasInstruction,
  escrowOf,
  listAliasInstruction,
  listingOf,
  offerAliasInstruction,
  reclaimAliasInstruction,
  settleAuctionInstruction,
} from '../../chain/client/instructions.ts';
import { aliasBidAddress } from '../../chain/client/pda.ts';
import { deltas, expectOk, refused, rent, SOL, swap, World, without } from '../support/program-world.ts';

const NAME = 'shop';
const DAY = 86_400n;

interface Market {
  w: World;
  holder: PublicKey;
  alias: PublicKey;
  listing: PublicKey;
  escrow: PublicKey;
}

function market(seed = 1): Market {
  const w = new World({ seed });
  const holder = w.user();
  expectOk(w.run(createAliasInstruction({ programId: w.programId, owner: holder, name: NAME })));
  const ref = { alias: NAME };
  return {
    w,
    holder,
    alias: aliasAccountOf(w.programId, ref),
    listing: listingOf(w.programId, ref),
    escrow: escrowOf(w.programId, ref),
  };
}

const aliasOf = (m: Market): Alias => decodeAlias(m.w.data(m.alias) as Uint8Array);
const listing = (m: Market): AliasListing => decodeAliasListing(m.w.data(m.listing) as Uint8Array);
const bidAccount = (m: Market, bidder: PublicKey) => aliasBidAddress(m.w.programId, m.listing, bidder)[0];

/** The alias is owned by, and delivers to, `wallet`. */
function ownedBy(m: Market, wallet: PublicKey, delivers: PublicKey = wallet): void {
  const a = aliasOf(m);
  expect(a.owner.toBase58()).toBe(wallet.toBase58());
  expect(a.address.toBase58()).toBe(delivers.toBase58());
}

describe('fixed-price listing', () => {
  it('locks the alias while listed, then the buyer pays the holder and gets the alias in one transaction', () => {
    const m = market();
    const { w, holder } = m;
    const buyer = w.wallet();
    const stranger = w.wallet();
    const price = 3n * SOL;
    const list = () =>
      listAliasInstruction({ programId: w.programId, holder, alias: NAME, priceLamports: price });
    const watch = [holder, buyer, stranger, m.alias, m.listing, m.escrow];

    refused(
      w,
      listAliasInstruction({ programId: w.programId, holder, alias: NAME, priceLamports: 0n }),
      'InvalidArgument',
      watch,
    );
    refused(
      w,
      listAliasInstruction({ programId: w.programId, holder: stranger, alias: NAME, priceLamports: price }),
      'Unauthorized',
      watch,
    );
    refused(w, without(list(), 0, 'isSigner'), 'MissingSigner', watch);
    // A fixed price carries no end or anti-snipe window.
    const withEnd = list();
    withEnd.data[18] = 1;
    refused(w, withEnd, 'InvalidArgument', watch);

    const [h] = deltas(w, list(), [holder]);
    expect(h).toBe(-rent(ALIAS_LISTING_SIZE));
    expect(listing(m)).toMatchObject({
      priceLamports: price,
      mode: 0,
      expiresAt: 0n,
      highBidLamports: 0n,
      createdAt: w.now,
    });
    expect(listing(m).holder.equals(holder)).toBe(true);
    // Custody: the listing owns the alias; mail still goes to the holder.
    ownedBy(m, m.listing, holder);

    // Locked: no second listing, no escrow offer, by the holder or anyone.
    refused(w, list(), 'AliasLocked', watch);
    refused(
      w,
      listAliasInstruction({ programId: w.programId, holder: stranger, alias: NAME, priceLamports: 1n }),
      'AliasLocked',
      watch,
    );
    refused(
      w,
      offerAliasInstruction({
        programId: w.programId,
        holder,
        alias: NAME,
        recipient: buyer,
        feeLamports: 0n,
        expiresAt: w.now + DAY,
      }),
      'AliasLocked',
      watch,
    );
    // Wrong mode, own listing, someone else's cancel, a payer who cannot pay.
    refused(
      w,
      bidAliasInstruction({
        programId: w.programId,
        bidder: buyer,
        alias: NAME,
        amountLamports: price,
        highBidder: null,
      }),
      'WrongListingMode',
      watch,
    );
    refused(
      w,
      settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: null }),
      'WrongListingMode',
      watch,
    );
    refused(
      w,
      buyAliasInstruction({ programId: w.programId, buyer: holder, alias: NAME, holder }),
      'OwnListing',
      watch,
    );
    refused(
      w,
      cancelListingInstruction({ programId: w.programId, holder: stranger, alias: NAME }),
      'Unauthorized',
      watch,
    );
    refused(
      w,
      buyAliasInstruction({ programId: w.programId, buyer, alias: NAME, holder: stranger }),
      'InvalidAccount',
      watch,
    );
    const poor = w.wallet(price - 1n);
    refused(
      w,
      buyAliasInstruction({ programId: w.programId, buyer: poor, alias: NAME, holder }),
      'InsufficientFunds',
      [...watch, poor],
    );

    const [dh, db, dl] = deltas(
      w,
      buyAliasInstruction({ programId: w.programId, buyer, alias: NAME, holder }),
      [holder, buyer, m.listing],
    );
    expect(db).toBe(-price);
    expect(dh).toBe(price + rent(ALIAS_LISTING_SIZE));
    expect(dl).toBe(-rent(ALIAS_LISTING_SIZE));
    expect(w.exists(m.listing)).toBe(false);
    ownedBy(m, buyer);
    // The seller no longer controls it: the buyer does.
    refused(w, list(), 'Unauthorized', watch);
    refused(
      w,
      buyAliasInstruction({ programId: w.programId, buyer: stranger, alias: NAME, holder }),
      'NotFound',
      watch,
    );
  });

  it('cancel returns the alias and the rent to the holder; nobody else pays or gains', () => {
    const m = market(2);
    const { w, holder } = m;
    const before = w.balance(holder);
    expectOk(
      w.run(listAliasInstruction({ programId: w.programId, holder, alias: NAME, priceLamports: SOL })),
    );
    expectOk(w.run(cancelListingInstruction({ programId: w.programId, holder, alias: NAME })));
    expect(w.balance(holder)).toBe(before);
    expect(w.exists(m.listing)).toBe(false);
    ownedBy(m, holder);
    refused(w, cancelListingInstruction({ programId: w.programId, holder, alias: NAME }), 'NotFound', [
      holder,
      m.alias,
    ]);
    // Relisting works once the lock is gone.
    expectOk(
      w.run(listAliasInstruction({ programId: w.programId, holder, alias: NAME, priceLamports: SOL })),
    );
  });
});

describe('auction', () => {
  const RESERVE = 2n * SOL;
  const WINDOW = 300n;

  function auction(seed: number) {
    const m = market(seed);
    const ends = m.w.now + 1_000n;
    expectOk(
      m.w.run(
        listAliasInstruction({
          programId: m.w.programId,
          holder: m.holder,
          alias: NAME,
          auction: { reserveLamports: RESERVE, endsAt: ends, antisnipeSecs: WINDOW },
        }),
      ),
    );
    return { ...m, ends };
  }

  it('refuses bad auction terms', () => {
    const m = market(3);
    const { w, holder } = m;
    const watch = [holder, m.alias, m.listing];
    const terms = (endsAt: bigint, antisnipeSecs: bigint, reserveLamports = RESERVE) =>
      listAliasInstruction({
        programId: w.programId,
        holder,
        alias: NAME,
        auction: { reserveLamports, endsAt, antisnipeSecs },
      });
    refused(w, terms(w.now, 0n), 'InvalidArgument', watch);
    refused(w, terms(w.now + DAY, 86_401n), 'InvalidArgument', watch);
    refused(w, terms(w.now + DAY, -1n), 'InvalidArgument', watch);
    refused(w, terms(w.now + DAY, 0n, 0n), 'InvalidArgument', watch);
    const badMode = terms(w.now + DAY, 0n);
    badMode.data[1] = 2;
    refused(w, badMode, 'InvalidInstruction', watch);
  });

  it('bids: reserve, minimum raise, refund of the outbid bidder in the same transaction, anti-snipe, settle by anyone', () => {
    const m = auction(4);
    const { w, holder } = m;
    const a = w.wallet(20n * SOL);
    const b = w.wallet(20n * SOL);
    const crank = w.wallet();
    const bid = (bidder: PublicKey, amountLamports: bigint, highBidder: PublicKey | null) =>
      bidAliasInstruction({ programId: w.programId, bidder, alias: NAME, amountLamports, highBidder });
    const watch = [holder, a, b, m.alias, m.listing, bidAccount(m, a), bidAccount(m, b)];

    refused(w, bid(a, RESERVE - 1n, null), 'BidTooLow', watch);
    refused(w, bid(holder, RESERVE, null), 'OwnListing', watch);
    refused(
      w,
      buyAliasInstruction({ programId: w.programId, buyer: a, alias: NAME, holder }),
      'WrongListingMode',
      watch,
    );
    refused(
      w,
      settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: null }),
      'AuctionNotEnded',
      watch,
    );

    // First bid at the reserve, early: the end does not move. The bid sits in a's AliasBid account.
    const [da] = deltas(w, bid(a, RESERVE, null), [a]);
    expect(da).toBe(-(RESERVE + rent(ALIAS_BID_SIZE)));
    expect(w.balance(bidAccount(m, a))).toBe(RESERVE + rent(ALIAS_BID_SIZE));
    expect(decodeAliasBid(w.data(bidAccount(m, a)) as Uint8Array)).toMatchObject({
      amountLamports: RESERVE,
      bidAt: w.now,
    });
    expect(listing(m)).toMatchObject({ highBidLamports: RESERVE, expiresAt: m.ends });
    expect(listing(m).highBidder.equals(a)).toBe(true);

    refused(
      w,
      cancelListingInstruction({ programId: w.programId, holder, alias: NAME }),
      'ListingHasBids',
      watch,
    );
    // The minimum raise is max(5 %, 0.001 SOL): 2.1 SOL here.
    refused(w, bid(b, RESERVE + RESERVE / 20n - 1n, a), 'BidTooLow', watch);
    // The previous high bidder's accounts must come along (and be the right ones).
    refused(w, bid(b, 3n * SOL, null), 'InvalidInstruction', watch);
    refused(w, bid(b, 3n * SOL, holder), 'InvalidAccount', watch);

    // b outbids a: a's bid and its rent come back in the very same transaction.
    const tx = bid(b, RESERVE + RESERVE / 20n, a);
    const [ra, rb, rbidA, rbidB, rl] = deltas(w, tx, [a, b, bidAccount(m, a), bidAccount(m, b), m.listing]);
    expect(ra).toBe(RESERVE + rent(ALIAS_BID_SIZE));
    expect(rb).toBe(-(RESERVE + RESERVE / 20n + rent(ALIAS_BID_SIZE)));
    expect(rbidA).toBe(-(RESERVE + rent(ALIAS_BID_SIZE)));
    expect(rbidB).toBe(RESERVE + RESERVE / 20n + rent(ALIAS_BID_SIZE));
    expect(rl).toBe(0n);
    expect(w.exists(bidAccount(m, a))).toBe(false);

    // b raises its own bid: only the difference moves, nobody is refunded.
    const [rb2] = deltas(w, bid(b, 3n * SOL, b), [b]);
    expect(rb2).toBe(-(3n * SOL - (RESERVE + RESERVE / 20n)));
    expect(w.balance(bidAccount(m, b))).toBe(3n * SOL + rent(ALIAS_BID_SIZE));

    // Anti-snipe: a bid 100 s before the end pushes the end to 300 s after that bid.
    w.advance(m.ends - w.now - 100n);
    const t = w.now;
    expectOk(w.run(bid(a, 4n * SOL, b)));
    expect(listing(m).expiresAt).toBe(t + WINDOW);
    // The old end has passed, the auction has not.
    w.advance(200n);
    expect(w.now > m.ends).toBe(true);
    refused(
      w,
      settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: a }),
      'AuctionNotEnded',
      watch,
    );
    w.advance(100n);
    refused(w, bid(b, 9n * SOL, a), 'AuctionEnded', watch);
    // Settle names the real high bidder.
    refused(
      w,
      settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: b }),
      'InvalidAccount',
      watch,
    );
    refused(
      w,
      settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: null }),
      'InvalidInstruction',
      watch,
    );

    // Anyone cranks (the runtime's payer here; `crank` is untouched): the holder gets the bid, a gets the alias.
    const [sh, sa, sc] = deltas(
      w,
      settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: a }),
      [holder, a, crank],
    );
    expect(sh).toBe(4n * SOL + rent(ALIAS_LISTING_SIZE));
    expect(sa).toBe(rent(ALIAS_BID_SIZE));
    expect(sc).toBe(0n);
    expect(w.exists(m.listing) || w.exists(bidAccount(m, a)) || w.exists(bidAccount(m, b))).toBe(false);
    ownedBy(m, a);
  });

  it('settles an auction nobody bid on by returning the alias', () => {
    const m = auction(5);
    const { w, holder } = m;
    const before = w.balance(holder);
    w.advance(1_000n);
    expectOk(
      w.run(settleAuctionInstruction({ programId: w.programId, alias: NAME, holder, highBidder: null })),
    );
    expect(w.balance(holder)).toBe(before + rent(ALIAS_LISTING_SIZE));
    ownedBy(m, holder);
  });
});

describe('escrow hand-off', () => {
  const FEE = SOL / 2n;

  it('the named recipient pays the fee and gets the alias; others cannot accept; it locks the alias meanwhile', () => {
    const m = market(6);
    const { w, holder } = m;
    const r = w.wallet();
    const stranger = w.wallet();
    const offer = (p: { recipient?: PublicKey; expiresAt?: bigint } = {}) =>
      offerAliasInstruction({
        programId: w.programId,
        holder,
        alias: NAME,
        recipient: p.recipient ?? r,
        feeLamports: FEE,
        expiresAt: p.expiresAt ?? w.now + 3n * DAY,
      });
    const watch = [holder, r, stranger, m.alias, m.escrow, m.listing];
    refused(w, offer({ recipient: holder }), 'InvalidArgument', watch);
    refused(w, offer({ expiresAt: w.now }), 'EscrowExpired', watch);

    const [dh] = deltas(w, offer(), [holder]);
    expect(dh).toBe(-rent(ALIAS_ESCROW_SIZE));
    expect(decodeAliasEscrow(w.data(m.escrow) as Uint8Array)).toMatchObject({
      feeLamports: FEE,
      offeredAt: w.now,
      expiresAt: w.now + 3n * DAY,
    });
    ownedBy(m, m.escrow, holder);

    refused(w, offer(), 'AliasLocked', watch);
    refused(
      w,
      listAliasInstruction({ programId: w.programId, holder, alias: NAME, priceLamports: SOL }),
      'AliasLocked',
      watch,
    );
    refused(
      w,
      acceptAliasInstruction({ programId: w.programId, recipient: stranger, alias: NAME, holder }),
      'Unauthorized',
      watch,
    );
    refused(
      w,
      reclaimAliasInstruction({ programId: w.programId, signer: stranger, alias: NAME, holder }),
      'EscrowNotExpired',
      watch,
    );
    refused(
      w,
      acceptAliasInstruction({ programId: w.programId, recipient: r, alias: NAME, holder: stranger }),
      'InvalidAccount',
      watch,
    );

    const [ah, ar, ae] = deltas(
      w,
      acceptAliasInstruction({ programId: w.programId, recipient: r, alias: NAME, holder }),
      [holder, r, m.escrow],
    );
    expect(ar).toBe(-FEE);
    expect(ah).toBe(FEE + rent(ALIAS_ESCROW_SIZE));
    expect(ae).toBe(-rent(ALIAS_ESCROW_SIZE));
    ownedBy(m, r);
  });

  it('an expired offer cannot be accepted; anyone returns it to the holder; the holder may withdraw early', () => {
    const m = market(7);
    const { w, holder } = m;
    const r = w.wallet();
    const crank = w.wallet();
    const offer = () =>
      offerAliasInstruction({
        programId: w.programId,
        holder,
        alias: NAME,
        recipient: r,
        feeLamports: FEE,
        expiresAt: w.now + DAY,
      });
    const start = w.balance(holder);
    expectOk(w.run(offer()));
    w.advance(DAY);
    refused(
      w,
      acceptAliasInstruction({ programId: w.programId, recipient: r, alias: NAME, holder }),
      'EscrowExpired',
      [holder, r, m.alias, m.escrow],
    );
    const [ch, cr, cc] = deltas(
      w,
      reclaimAliasInstruction({ programId: w.programId, signer: crank, alias: NAME, holder }),
      [holder, r, crank],
    );
    expect([ch, cr, cc]).toEqual([rent(ALIAS_ESCROW_SIZE), 0n, 0n]);
    expect(w.balance(holder)).toBe(start);
    ownedBy(m, holder);

    expectOk(w.run(offer()));
    expectOk(w.run(reclaimAliasInstruction({ programId: w.programId, signer: holder, alias: NAME, holder })));
    ownedBy(m, holder);
    expect(w.balance(holder)).toBe(start);
    refused(
      w,
      reclaimAliasInstruction({ programId: w.programId, signer: holder, alias: NAME, holder }),
      'NotFound',
      [holder, m.alias],
    );
    // A record planted at the escrow address by swapping accounts is not accepted as the alias's.
    const other = w.user();
    expectOk(w.run(createAliasInstruction({ programId: w.programId, owner: other, name: 'other' })));
    expectOk(
      w.run(
        offerAliasInstruction({
          programId: w.programId,
          holder: other,
          alias: 'other',
          recipient: r,
          feeLamports: 0n,
          expiresAt: w.now + DAY,
        }),
      ),
    );
    refused(
      w,
      swap(
        acceptAliasInstruction({ programId: w.programId, recipient: r, alias: 'other', holder: other }),
        2,
        m.alias,
      ),
      'InvalidAccount',
      [holder, other, r, m.alias],
    );
  });
});
