// The marketplace index and the timelocks route over a real account API
// (real Redis, SQLite store) reading a real devnet running the committed mail
// program: alias and domain listings (one named for a buyer), a bid, an
// escrow offer and pending timelocks appear as the chain has them; after a
// purchase, an acceptance and a cancel they are gone; the cache serves a snapshot until it is stale or a fresh read is
// asked for; bad input and a dead RPC answer JSON errors naming the problem.
import { Connection, type Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  acceptAliasInstruction,
  bidAliasInstruction,
  buyAliasInstruction,
  buyDomainInstruction,
  cancelDomainListingInstruction,
  cancelListingInstruction,
  createAliasInstruction,
  createDomainInstruction,
  DEACTIVATION_WINDOW_SECS,
  domainListingOf,
  listAliasInstruction,
  listDomainInstruction,
  MAILBOX_CLOSE_WINDOW_SECS,
  offerAliasInstruction,
  requestDeactivationInstruction,
  requestMailboxCloseInstruction,
} from '../../chain/client/instructions.ts';
import { listingOf } from '../../chain/client/market-instructions.ts';
import { domainAddress } from '../../chain/client/pda.ts';
import { marketRoutes } from '../../src/edge/api/routes/market.ts';
import { type ApiRig, startRig } from '../support/api-rig.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';

const SOL = BigInt(LAMPORTS_PER_SOL);
const TEST_MS = 180_000;
const rigs: ApiRig[] = [];

afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close();
});

const asRigWallet = (kp: Keypair) => ({
  secretKey: kp.secretKey,
  publicKey: kp.publicKey.toBytes(),
  address: kp.publicKey.toBase58(),
});

describe('marketplace index and timelocks over the API', () => {
  it(
    'lists, bids and offers as on chain; drops what was bought, accepted or cancelled',
    async () => {
      let skew = 0;
      const chain = await startTestChain({ clock: () => Date.now() / 1000 + skew });
      const { connection, programId } = chain;
      const mail = await prepareMailChain(chain, 'mail.test');
      const alice = await mail.mailbox({ alias: 'shop' });
      for (const name of ['auc', 'gift', 'spare'])
        await chain.send([createAliasInstruction({ programId, owner: alice.publicKey, name })], [alice]);
      const [bob, carol] = [await chain.funded(), await chain.funded()];
      // A long TTL: only fresh=true (or the TTL) rebuilds the snapshot.
      const rig = await startRig('sqlite', {
        plugins: [marketRoutes({ connection, programId, ttlMs: 600_000, minRefreshMs: 0 })],
      });
      rigs.push(rig);
      const get = (path: string, token?: string) => rig.request('GET', path, { token });

      const empty = await get('/v1/market/listings');
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ listings: [], next_cursor: null });
      expect(typeof empty.body.refreshed_at).toBe('number');

      const now = Math.floor(Date.now() / 1000);
      const ends = BigInt(now + 3600);
      await chain.send(
        [
          listAliasInstruction({
            programId,
            holder: alice.publicKey,
            alias: 'shop',
            priceLamports: (3n * SOL) / 2n,
          }),
          listAliasInstruction({
            programId,
            holder: alice.publicKey,
            alias: 'auc',
            auction: { reserveLamports: SOL, endsAt: ends, antisnipeSecs: 600n },
          }),
          offerAliasInstruction({
            programId,
            holder: alice.publicKey,
            alias: 'gift',
            recipient: bob.publicKey,
            feeLamports: SOL / 10n,
            expiresAt: BigInt(now + 86_400),
          }),
        ],
        [alice],
      );

      // Cached: the snapshot from before the listings still answers.
      expect((await get('/v1/market/listings')).body.listings).toEqual([]);
      const fresh = await get('/v1/market/listings?fresh=true');
      expect(fresh.status).toBe(200);
      const byName = Object.fromEntries(
        (fresh.body.listings as { name: string }[]).map((l) => [l.name, l]),
      ) as Record<string, Record<string, unknown>>;
      expect(Object.keys(byName).sort()).toEqual(['auc', 'shop']);
      expect(byName.shop).toMatchObject({
        address: listingOf(programId, { alias: 'shop' }).toBase58(),
        kind: 'alias',
        holder: alice.publicKey.toBase58(),
        mode: 'fixed',
        price_lamports: '1500000000',
        ends_at: null,
        high_bidder: null,
        min_bid_lamports: null,
        ended: false,
      });
      expect(byName.auc).toMatchObject({
        mode: 'auction',
        price_lamports: String(SOL),
        ends_at: Number(ends),
        antisnipe_window_secs: 600,
        high_bid_lamports: '0',
        high_bidder: null,
        min_bid_lamports: String(SOL),
        ended: false,
      });

      // Bob bids the reserve: the listing shows him as high bidder and the next minimum (+5 %).
      await chain.send(
        [
          bidAliasInstruction({
            programId,
            bidder: bob.publicKey,
            alias: 'auc',
            amountLamports: SOL,
            highBidder: null,
          }),
        ],
        [bob],
      );
      const auc = await get(
        `/v1/market/listings/${listingOf(programId, { alias: 'auc' }).toBase58()}?fresh=true`,
      );
      expect(auc.status).toBe(200);
      expect(auc.body.listing).toMatchObject({
        name: 'auc',
        high_bid_lamports: String(SOL),
        high_bidder: bob.publicKey.toBase58(),
        min_bid_lamports: String(SOL + SOL / 20n),
      });

      const bobToken = await rig.login(asRigWallet(bob));
      const aliceToken = await rig.login(asRigWallet(alice));
      const bids = await get('/v1/market/bids', bobToken);
      expect(bids.body.bids).toEqual([
        expect.objectContaining({
          listing: listingOf(programId, { alias: 'auc' }).toBase58(),
          bidder: bob.publicKey.toBase58(),
          amount_lamports: String(SOL),
        }),
      ]);
      expect((await get('/v1/market/bids', aliceToken)).body.bids).toEqual([]);
      const bobOffers = await get('/v1/market/offers', bobToken);
      expect(bobOffers.body.received).toEqual([
        expect.objectContaining({
          name: 'gift',
          holder: alice.publicKey.toBase58(),
          recipient: bob.publicKey.toBase58(),
          fee_lamports: String(SOL / 10n),
          expires_at: now + 86_400,
          expired: false,
        }),
      ]);
      expect(bobOffers.body.made).toEqual([]);
      const aliceOffers = await get('/v1/market/offers', aliceToken);
      expect(aliceOffers.body).toMatchObject({
        received: [],
        made: [expect.objectContaining({ name: 'gift' })],
      });
      expect((await get('/v1/market/offers')).status).toBe(401);

      // Filters and pages.
      expect(
        (await get('/v1/market/listings?mode=fixed')).body.listings.map((l: { name: string }) => l.name),
      ).toEqual(['shop']);
      expect((await get('/v1/market/listings?alias=AUC@mail.test')).body.listings).toHaveLength(1);
      expect((await get(`/v1/market/listings?holder=${bob.publicKey.toBase58()}`)).body.listings).toEqual([]);
      expect((await get('/v1/market/listings?ended=false&kind=alias')).body.listings).toHaveLength(2);
      const first = await get('/v1/market/listings?limit=1');
      expect(first.body.listings).toHaveLength(1);
      expect(first.body.next_cursor).toMatch(/^\d+\.\w+$/);
      const second = await get(`/v1/market/listings?limit=1&cursor=${first.body.next_cursor}`);
      expect(second.body.listings).toHaveLength(1);
      expect(second.body.next_cursor).toBeNull();
      expect(second.body.listings[0].address).not.toBe(first.body.listings[0].address);

      // Bad input: a JSON error naming the problem.
      const bad: [string, number, string, RegExp][] = [
        ['/v1/market/listings?limit=0', 400, 'invalid_request', /limit must be 1–200/],
        ['/v1/market/listings?limit=abc', 400, 'invalid_request', /querystring\.limit/],
        ['/v1/market/listings?cursor=nope', 400, 'invalid_cursor', /cursor/],
        ['/v1/market/listings?holder=not-a-wallet', 400, 'invalid_request', /querystring\.holder/],
        ['/v1/market/listings?alias=Not%20An%20Alias!', 400, 'invalid_alias', /not an alias name/],
        ['/v1/market/listings?kind=planet', 400, 'invalid_request', /querystring\.kind/],
        ['/v1/market/listings?colour=red', 400, 'unknown_field', /querystring\.colour is not a known field/],
        ['/v1/market/listings/xyz', 400, 'invalid_request', /params\.address/],
        [`/v1/market/listings/${bob.publicKey.toBase58()}`, 404, 'listing_not_found', /no open listing/],
      ];
      for (const [path, status, error, message] of bad) {
        const r = await get(path);
        expect({ path, status: r.status, error: r.body.error }).toEqual({ path, status, error });
        expect(r.body.message).toMatch(message);
      }

      // Domains: Carol lists shop.test for anyone and gift.test for Bob only (a gift).
      for (const domain of ['shop.test', 'gift.test'])
        await chain.send(
          [
            createDomainInstruction({
              programId,
              delegate: mail.delegate.publicKey,
              domain,
              authority: carol.publicKey,
            }),
          ],
          [mail.delegate],
        );
      const domainEnds = now + 86_400;
      await chain.send(
        [
          listDomainInstruction({
            programId,
            holder: carol.publicKey,
            domain: 'shop.test',
            priceLamports: 2n * SOL,
            expiresAt: BigInt(domainEnds),
          }),
          listDomainInstruction({
            programId,
            holder: carol.publicKey,
            domain: 'gift.test',
            priceLamports: 0n,
            expiresAt: BigInt(domainEnds),
            buyer: bob.publicKey,
          }),
        ],
        [carol],
      );
      const domains = await get('/v1/market/listings?kind=domain&fresh=true');
      expect(domains.status).toBe(200);
      const byDomain = Object.fromEntries(
        (domains.body.listings as { name: string }[]).map((l) => [l.name, l]),
      ) as Record<string, Record<string, unknown>>;
      expect(Object.keys(byDomain).sort()).toEqual(['gift.test', 'shop.test']);
      expect(byDomain['shop.test']).toEqual({
        address: domainListingOf(programId, { domain: 'shop.test' }).toBase58(),
        kind: 'domain',
        item: domainAddress(programId, 'shop.test')[0].toBase58(),
        name: 'shop.test',
        holder: carol.publicKey.toBase58(),
        buyer: null,
        mode: 'fixed',
        price_lamports: String(2n * SOL),
        created_at: expect.any(Number),
        ends_at: null,
        antisnipe_window_secs: 0,
        high_bid_lamports: '0',
        high_bidder: null,
        min_bid_lamports: null,
        ended: false,
        expires_at: domainEnds,
        expired: false,
      });
      expect(byDomain['gift.test']).toMatchObject({
        buyer: bob.publicKey.toBase58(),
        price_lamports: '0',
        holder: carol.publicKey.toBase58(),
      });
      // Named-buyer listings are marked (buyer), not hidden: the public list has both.
      expect((await get('/v1/market/listings')).body.listings).toHaveLength(4);
      expect(
        (await get(`/v1/market/listings?buyer=${bob.publicKey.toBase58()}`)).body.listings.map(
          (l: { name: string }) => l.name,
        ),
      ).toEqual(['gift.test']);
      expect((await get('/v1/market/listings?domain=SHOP.test.')).body.listings).toHaveLength(1);
      expect(
        (await get(`/v1/market/listings?domain=${domainAddress(programId, 'gift.test')[0].toBase58()}`)).body
          .listings[0].name,
      ).toBe('gift.test');
      expect((await get('/v1/market/listings?kind=alias')).body.listings).toHaveLength(2);
      const one = await get(
        `/v1/market/listings/${domainListingOf(programId, { domain: 'gift.test' }).toBase58()}`,
      );
      expect(one.body.listing).toMatchObject({ kind: 'domain', name: 'gift.test' });
      for (const [path, error, message] of [
        ['/v1/market/listings?domain=not%20a%20domain!', 'invalid_domain', /not a domain name/],
        ['/v1/market/listings?buyer=nobody', 'invalid_request', /querystring\.buyer/],
      ] as const) {
        const r = await get(path);
        expect({ status: r.status, error: r.body.error }).toEqual({ status: 400, error });
        expect(r.body.message).toMatch(message);
      }

      // Alice buys shop.test, Carol cancels gift.test: both leave the index.
      await chain.send(
        [
          buyDomainInstruction({
            programId,
            buyer: alice.publicKey,
            holder: carol.publicKey,
            domain: 'shop.test',
          }),
        ],
        [alice],
      );
      expect(
        (await get('/v1/market/listings?kind=domain&fresh=true')).body.listings.map(
          (l: { name: string }) => l.name,
        ),
      ).toEqual(['gift.test']);
      await chain.send(
        [
          cancelDomainListingInstruction({
            programId,
            signer: carol.publicKey,
            holder: carol.publicKey,
            domain: 'gift.test',
          }),
        ],
        [carol],
      );
      expect((await get('/v1/market/listings?kind=domain&fresh=true')).body.listings).toEqual([]);
      expect(
        (await get(`/v1/market/listings/${domainListingOf(programId, { domain: 'shop.test' }).toBase58()}`))
          .body.error,
      ).toBe('listing_not_found');

      // Carol buys shop, Bob accepts the offer, Alice lists and cancels spare: all gone from the index.
      await chain.send(
        [buyAliasInstruction({ programId, buyer: carol.publicKey, holder: alice.publicKey, alias: 'shop' })],
        [carol],
      );
      await chain.send(
        [
          acceptAliasInstruction({
            programId,
            recipient: bob.publicKey,
            holder: alice.publicKey,
            alias: 'gift',
          }),
        ],
        [bob],
      );
      await chain.send(
        [listAliasInstruction({ programId, holder: alice.publicKey, alias: 'spare', priceLamports: SOL })],
        [alice],
      );
      expect(
        (await get('/v1/market/listings?fresh=true')).body.listings
          .map((l: { name: string }) => l.name)
          .sort(),
      ).toEqual(['auc', 'spare']);
      await chain.send(
        [cancelListingInstruction({ programId, holder: alice.publicKey, alias: 'spare' })],
        [alice],
      );
      const after = await get('/v1/market/listings?fresh=true');
      expect(after.body.listings.map((l: { name: string }) => l.name)).toEqual(['auc']);
      expect(
        (await get(`/v1/market/listings/${listingOf(programId, { alias: 'shop' }).toBase58()}`)).body.error,
      ).toBe('listing_not_found');
      expect((await get('/v1/market/offers?fresh=true', bobToken)).body.received).toEqual([]);

      // The auction past its end reads as ended (to settle).
      skew = 3_700;
      await waitForChainTime(rig, now + 3_650);
      const ended = await get('/v1/market/listings?ended=true&fresh=true');
      expect(ended.body.listings.map((l: { name: string }) => l.name)).toEqual(['auc']);

      // Timelocks: Alice's mailbox close and the domain authority's deactivation, with their windows.
      await chain.send([requestMailboxCloseInstruction({ programId, owner: alice.publicKey })], [alice]);
      await chain.send(
        [
          requestDeactivationInstruction({
            programId,
            authority: mail.authority.publicKey,
            domain: 'mail.test',
          }),
        ],
        [mail.authority],
      );
      const mine = await get('/v1/timelocks', aliceToken);
      expect(mine.status).toBe(200);
      expect(mine.body.timelocks).toEqual([
        expect.objectContaining({
          kind: 'mailbox_close',
          subject: alice.publicKey.toBase58(),
          role: 'owner',
          can_complete: false,
        }),
      ]);
      const close = mine.body.timelocks[0];
      expect(close.ends_at - close.requested_at).toBe(Number(MAILBOX_CLOSE_WINDOW_SECS));
      const authToken = await rig.login(asRigWallet(mail.authority));
      const dom = await get('/v1/timelocks', authToken);
      expect(dom.body.timelocks).toEqual([
        expect.objectContaining({
          kind: 'domain_deactivation',
          domain: 'mail.test',
          role: 'authority',
          can_complete: false,
        }),
      ]);
      expect(dom.body.timelocks[0].ends_at - dom.body.timelocks[0].requested_at).toBe(
        Number(DEACTIVATION_WINDOW_SECS),
      );
      expect((await get('/v1/timelocks', bobToken)).body.timelocks).toEqual([]);
      expect((await get('/v1/timelocks')).status).toBe(401);

      // Past the close window the same record reads as completable.
      skew += Number(MAILBOX_CLOSE_WINDOW_SECS) + 60; // the devnet clock never goes back
      await waitForChainTime(rig, close.ends_at);
      const later = await get('/v1/timelocks', aliceToken);
      expect(later.body.timelocks[0]).toMatchObject({ kind: 'mailbox_close', can_complete: true });

      // The OpenAPI document has the routes.
      const doc = await get('/v1/openapi.json');
      for (const path of [
        '/v1/market/listings',
        '/v1/market/listings/{address}',
        '/v1/market/offers',
        '/v1/market/bids',
        '/v1/timelocks',
      ])
        expect(doc.body.paths[path]).toBeDefined();
      expect(doc.body.paths['/v1/market/offers'].get.security).toEqual([{ sessionToken: [] }]);
      expect(doc.body.paths['/v1/market/listings'].get.security).toEqual([]);
    },
    TEST_MS,
  );

  it('fresh reads share one chain read begun after them, at most one a second; plain reads use the cache', async () => {
    const chain = await startTestChain();
    const rig = await startRig('sqlite', {
      plugins: [
        marketRoutes({ connection: chain.connection, programId: chain.programId, minRefreshMs: 1_000 }),
      ],
    });
    rigs.push(rig);
    const at = async (path: string) => (await rig.request('GET', path)).body.refreshed_at as number;
    const first = await at('/v1/market/listings');
    expect(await at('/v1/market/listings')).toBe(first); // within the 5 s TTL
    const asked = Date.now();
    const together = await Promise.all([1, 2, 3].map(() => at('/v1/market/listings?fresh=true')));
    expect(new Set(together).size).toBe(1);
    expect(together[0]).toBeGreaterThanOrEqual(asked);
    expect(together[0] as number).toBeGreaterThanOrEqual(first + 1_000);
    const next = await at('/v1/market/listings?fresh=true');
    expect(next).toBeGreaterThanOrEqual((together[0] as number) + 1_000);
  });

  it('answers 503 chain_unavailable when the chain RPC does not answer', async () => {
    const dead = new Connection('http://127.0.0.1:9', 'confirmed');
    const rig = await startRig('sqlite', {
      plugins: [marketRoutes({ connection: dead, programId: '11111111111111111111111111111111' })],
    });
    rigs.push(rig);
    const r = await rig.request('GET', '/v1/market/listings');
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('chain_unavailable');
    expect(r.body.message).toMatch(/chain RPC does not answer/);
  });
});

/** Waits until /v1/timelocks-style chain time (read through a listings refresh) reaches `target`. */
async function waitForChainTime(rig: ApiRig, target: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await rig.request('GET', '/v1/market/listings?fresh=true');
    if (r.body.chain_time >= target) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('the devnet clock did not move');
}
