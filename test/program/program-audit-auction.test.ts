import type { PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  ALIAS_LISTING_SIZE,
  type AliasListing,
  decodeAliasListing,
} from '../../chain/client/accounts/index.ts';
import { I64_MAX } from '../../chain/client/bytes.ts';
import {
  aliasAccountOf,
  bidAliasInstruction,
  createAliasInstruction,
  listAliasInstruction,
  listingOf,
  settleAuctionInstruction,
} from '../../chain/client/instructions.ts';
import { aliasBidAddress } from '../../chain/client/pda.ts';
import { expectOk, refusedUnchanged, rent, SOL, World } from '../support/program-world.ts';

const NAME = 'shop';
const DAY = 86_400n;
const MAX_AUCTION = 30n * DAY;
const MAX_WINDOW = DAY;
const RESERVE = SOL / 100n;

function market(seed: number) {
  const w = new World({ seed });
  const holder = w.user();
  expectOk(w.run(createAliasInstruction({ programId: w.programId, owner: holder, name: NAME })));
  const ref = { alias: NAME };
  const alias = aliasAccountOf(w.programId, ref);
  const listing = listingOf(w.programId, ref);
  const list = (endsAt: bigint, antisnipeSecs: bigint) =>
    listAliasInstruction({
      programId: w.programId,
      holder,
      alias: NAME,
      auction: { reserveLamports: RESERVE, endsAt, antisnipeSecs },
    });
  const bid = (bidder: PublicKey, amountLamports: bigint, highBidder: PublicKey | null) =>
    bidAliasInstruction({ programId: w.programId, bidder, alias: NAME, amountLamports, highBidder });
  const read = (): AliasListing => decodeAliasListing(w.data(listing) as Uint8Array);
  const bidOf = (bidder: PublicKey) => aliasBidAddress(w.programId, listing, bidder)[0];
  return { w, holder, alias, listing, list, bid, read, bidOf };
}

describe('finding 7: auctions without bound', () => {
  it('ListAlias refuses an auction ending more than 30 days out; exactly 30 days is allowed', () => {
    const m = market(1);
    const { w } = m;
    const watch = [m.holder, m.alias, m.listing];
    // The audited binary listed all three, the last one ending in the year 292,277,026,596.
    refusedUnchanged(w, m.list(I64_MAX, 0n), 'InvalidArgument', watch);
    refusedUnchanged(w, m.list(w.now + MAX_AUCTION + 1n, 0n), 'InvalidArgument', watch);
    refusedUnchanged(w, m.list(w.now + 365n * DAY, MAX_WINDOW), 'InvalidArgument', watch);
    expect(w.exists(m.listing)).toBe(false);
    expectOk(w.run(m.list(w.now + MAX_AUCTION, MAX_WINDOW)));
    expect(m.read()).toMatchObject({ expiresAt: w.now + MAX_AUCTION, createdAt: w.now, mode: 1 });
  });

  it("the leader's own raise inside the anti-snipe window does not move the end; another bidder's bid does", () => {
    const m = market(2);
    const { w } = m;
    const a = w.wallet(20n * SOL);
    const b = w.wallet(20n * SOL);
    const ends = w.now + 1_000n;
    const window = 300n;
    expectOk(w.run(m.list(ends, window)));
    expectOk(w.run(m.bid(a, RESERVE, null)));
    w.advance(ends - w.now - 100n);
    // The attack: the leader raises its own bid 100 s before the end. The
    // audited binary moved the end to now + 300 s on each such raise, so the
    // leader alone could keep the auction open as long as it liked.
    expectOk(w.run(m.bid(a, RESERVE + SOL / 10n, a)));
    expect(m.read()).toMatchObject({ expiresAt: ends, highBidLamports: RESERVE + SOL / 10n });
    w.advance(50n);
    expectOk(w.run(m.bid(a, RESERVE + SOL / 5n, a)));
    expect(m.read().expiresAt).toBe(ends);

    // Another wallet outbidding inside the window does extend it, to now + window.
    w.advance(10n);
    const t = w.now;
    expectOk(w.run(m.bid(b, SOL, a)));
    expect(m.read()).toMatchObject({ expiresAt: t + window, highBidLamports: SOL });
    expect(m.read().highBidder.equals(b)).toBe(true);

    // The old end has passed, the auction has not; it ends at the new one.
    w.advance(t + window - w.now);
    const watch = [m.holder, a, b, m.alias, m.bidOf(a), m.bidOf(b)];
    refusedUnchanged(w, m.bid(a, 2n * SOL, b), 'AuctionEnded', watch);
    expectOk(
      w.run(
        settleAuctionInstruction({ programId: w.programId, alias: NAME, holder: m.holder, highBidder: b }),
      ),
    );
    expect(w.exists(m.listing)).toBe(false);
  });

  it('late outbids taking turns never move the end past created_at + 30 days + 86,400 s', () => {
    const m = market(3);
    const { w } = m;
    const a = w.wallet(50n * SOL);
    const b = w.wallet(50n * SOL);
    const created = w.now;
    const limit = created + MAX_AUCTION + MAX_WINDOW;
    expectOk(w.run(m.list(created + MAX_AUCTION, MAX_WINDOW)));
    expectOk(w.run(m.bid(a, RESERVE, null)));

    // Near the end of the 30 days, b outbids: the end moves a window past the bid.
    w.rt.setClock({ unixTimestamp: created + MAX_AUCTION - 10n });
    let amount = SOL;
    expectOk(w.run(m.bid(b, amount, a)));
    expect(m.read().expiresAt).toBe(created + MAX_AUCTION - 10n + MAX_WINDOW);

    // Each later outbid, just before the end, could ask for another window.
    // The audited binary granted it every time (the auction never ended while
    // the two kept bidding); now the end stops at the limit.
    const bidders = [a, b];
    for (let i = 0; i < 4; i++) {
      const ends = m.read().expiresAt;
      w.rt.setClock({ unixTimestamp: ends - 5n });
      const [bidder, leader] = [bidders[i % 2] as PublicKey, bidders[(i + 1) % 2] as PublicKey];
      amount += SOL;
      expectOk(w.run(m.bid(bidder, amount, leader)));
      const next = m.read().expiresAt;
      expect(next).toBe(limit);
      expect(next >= ends).toBe(true);
    }
    expect(m.read().expiresAt).toBe(limit);

    // At the limit the auction is over: bids are refused and anyone settles it.
    w.rt.setClock({ unixTimestamp: limit });
    const [high, other] = m.read().highBidder.equals(a) ? [a, b] : [b, a];
    const watch = [m.holder, a, b, m.alias, m.bidOf(a), m.bidOf(b)];
    refusedUnchanged(w, m.bid(other, amount + SOL, high), 'AuctionEnded', watch);
    const h0 = w.balance(m.holder);
    expectOk(
      w.run(
        settleAuctionInstruction({ programId: w.programId, alias: NAME, holder: m.holder, highBidder: high }),
      ),
    );
    expect(w.balance(m.holder)).toBe(h0 + amount + rent(ALIAS_LISTING_SIZE));
    expect(w.exists(m.listing)).toBe(false);
  });
});
