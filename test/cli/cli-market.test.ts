// `sealpost market …` as a black box: the real CLI against a real devnet (the
// committed mail program) over JSON-RPC — a fixed-price sale, an auction with
// an outbid refund and a settlement by a third wallet, cancel, the escrowed
// hand-off, refusals as one line with no funds moved — and the MX's chain
// view routing an alias to its new owner once its cache entry is older than
// its TTL.
import { type Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { getAlias } from '../../chain/client/client.ts';
import { createAliasInstruction, createMailboxInstruction } from '../../chain/client/instructions.ts';
import { getEscrow, getListing } from '../../chain/client/market-client.ts';
import { ChainView } from '../../src/mail/chain-view.ts';
import { startTestChain } from '../support/devnet.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI_TEST_MS = 240_000;
const SOL = LAMPORTS_PER_SOL;

describe('sealpost market', () => {
  it(
    'sells, auctions, cancels and hands over aliases; refuses with one line and moves nothing',
    async () => {
      const cwd = tempDir('sealpost-market-');
      // Seconds the chain's clock runs ahead of the wall clock: moved to end the auction.
      let skew = 0;
      const chain = await startTestChain({ clock: () => Date.now() / 1000 + skew });
      const { connection: conn, programId } = chain;
      const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', programId];
      const [alice, bob, carol, dave] = (await Promise.all([1, 2, 3, 4].map(() => chain.funded(10)))) as [
        Keypair,
        Keypair,
        Keypair,
        Keypair,
      ];
      const files = Object.fromEntries(
        Object.entries({ alice, bob, carol, dave }).map(([n, kp]) => [n, keyFile(cwd, `${n}.json`, kp).path]),
      ) as Record<'alice' | 'bob' | 'carol' | 'dave', string>;
      await chain.send([createMailboxInstruction({ programId, owner: alice.publicKey })], [alice]);
      for (const name of ['shop', 'auc', 'gift'])
        await chain.send([createAliasInstruction({ programId, owner: alice.publicKey, name })], [alice]);
      const market = (args: string[], who: keyof typeof files) =>
        sealpost(['market', ...args, '--key', files[who], ...at], cwd);
      const ownerOf = async (name: string) => (await getAlias(conn, programId, name))?.owner.toBase58();
      const bal = (kp: Keypair) => chain.balance(kp.publicKey);

      // The MX's view, with a clock the test moves.
      let clock = 1_000_000;
      const view = new ChainView({ connection: conn, programId, now: () => clock });
      expect(await view.alias('shop')).toBe(alice.publicKey.toBase58());

      // Fixed price.
      const sell = await market(['sell', 'Shop@mail.example', '--price', '1.5'], 'alice');
      expect({ code: sell.code, stderr: sell.stderr }).toEqual({ code: 0, stderr: '' });
      expect(sell.stdout).toMatch(/^listed shop at 1\.5 SOL \(\w+\)\n$/);
      const listed = JSON.parse((await sealpost(['market', 'list', '--json', ...at], cwd)).stdout);
      expect(listed).toMatchObject([
        { mode: 'fixed', price_lamports: '1500000000', holder: alice.publicKey.toBase58() },
      ]);
      expect((await sealpost(['market', 'list', ...at], cwd)).stdout).toMatch(/holder=\w+ price 1\.5 SOL\n$/);

      const aliceBefore = await bal(alice);
      const own = await market(['buy', 'shop'], 'alice');
      expect(own.code).toBe(1);
      expect(own.stderr).toMatch(/BuyAlias refused by the mail program: OwnListing \(44\)/);
      expect(own.stderr.trim().split('\n')).toHaveLength(1);
      expect(await bal(alice)).toBe(aliceBefore); // refused in preflight: not even a fee

      const bobBefore = await bal(bob);
      const bought = await market(['buy', 'shop', '--json'], 'bob');
      expect(bought.code).toBe(0);
      expect(JSON.parse(bought.stdout)).toMatchObject({ price_lamports: '1500000000' });
      expect(await bal(bob)).toBe(bobBefore - 1.5 * SOL - 5_000 - 1); // and the auto priority fee's floor: 1 lamport
      expect(await ownerOf('shop')).toBe(bob.publicKey.toBase58());
      expect(await getListing(conn, programId, { alias: 'shop' })).toBeNull();
      // Mail routing: within the view's TTL the cached owner answers; after it, the new one.
      expect(await view.alias('shop')).toBe(alice.publicKey.toBase58());
      clock += 5_001;
      expect(await view.alias('shop')).toBe(bob.publicKey.toBase58());

      // Usage errors: exit 2, nothing sent.
      for (const args of [
        ['sell', 'gift'],
        ['sell', 'gift', '--price', '1', '--auction'],
        ['sell', 'gift', '--price', 'abc'],
        ['sell', 'gift', '--auction', '--reserve', '1'],
        ['sell', 'gift', '--auction', '--reserve', '1', '--ends', 'tomorrow'],
        // ListAlias refuses an auction past 30 days or already over: the CLI says so before signing.
        [
          'sell',
          'gift',
          '--auction',
          '--reserve',
          '1',
          '--ends',
          new Date(Date.now() + 31 * 86_400_000).toISOString(),
        ],
        ['sell', 'gift', '--auction', '--reserve', '1', '--ends', '2020-01-01T00:00:00Z'],
        ['sell', 'Not An Alias!', '--price', '1'],
        ['offer', 'gift', '--to', 'nobody', '--fee', '0', '--days', '1'],
      ]) {
        const r = await market(args, 'alice');
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
      }

      // Auction: reserve, refund of the outbid bidder, settled by a third wallet after the end.
      // It ends in an hour of the chain's time, so the runs before the end never race it;
      // the chain's clock then moves past the end, and settle polls for a slot that shows it.
      const ends = new Date(Date.now() + 3_600_000).toISOString();
      const auc = await market(
        ['sell', 'auc', '--auction', '--reserve', '1', '--ends', ends, '--antisnipe', '0'],
        'alice',
      );
      expect(auc.code).toBe(0);
      const low = await market(['bid', 'auc', '--amount', '0.5'], 'bob');
      expect(low.stderr).toMatch(/BidAlias refused by the mail program: BidTooLow \(41\)/);
      expect((await market(['bid', 'auc', '--amount', '1'], 'bob')).code).toBe(0);
      const bobBid = await bal(bob);
      expect((await market(['bid', 'auc', '--amount', '1.2'], 'carol')).code).toBe(0);
      expect((await bal(bob)) - bobBid).toBe(SOL + 1_461_600); // the bid and its account's rent
      expect((await market(['cancel', 'auc'], 'alice')).stderr).toMatch(/ListingHasBids \(45\)/);
      expect((await market(['settle', 'auc'], 'dave')).stderr).toMatch(/AuctionNotEnded \(43\)/);
      const aliceAuction = await bal(alice);
      skew += 3_601;
      let settled = await market(['settle', 'auc', '--json'], 'dave');
      while (settled.code !== 0 && /AuctionNotEnded/.test(settled.stderr)) {
        await new Promise((r) => setTimeout(r, 1_000));
        settled = await market(['settle', 'auc', '--json'], 'dave');
      }
      expect(settled.code).toBe(0);
      expect(JSON.parse(settled.stdout)).toMatchObject({
        winner: carol.publicKey.toBase58(),
        price_lamports: '1200000000',
      });
      expect((await bal(alice)) - aliceAuction).toBe(1.2 * SOL + 1_858_320); // the bid and the listing's rent
      expect(await ownerOf('auc')).toBe(carol.publicKey.toBase58());

      // Cancel a fixed listing, then offer the alias to bob.
      expect((await market(['sell', 'gift', '--price', '2'], 'alice')).code).toBe(0);
      expect((await market(['cancel', 'gift'], 'bob')).stderr).toMatch(
        /CancelListing refused by the mail program: Unauthorized \(6\)/,
      );
      expect((await market(['cancel', 'gift'], 'alice')).code).toBe(0);
      expect(await ownerOf('gift')).toBe(alice.publicKey.toBase58());
      const offer = await market(
        ['offer', 'gift', '--to', bob.publicKey.toBase58(), '--fee', '0.25', '--days', '2'],
        'alice',
      );
      expect(offer.code).toBe(0);
      expect(await getEscrow(conn, programId, { alias: 'gift' })).toMatchObject({
        feeLamports: 250_000_000n,
      });
      expect((await market(['sell', 'gift', '--price', '1'], 'alice')).stderr).toMatch(/AliasLocked \(40\)/);
      expect((await market(['accept', 'gift'], 'carol')).stderr).toMatch(/Unauthorized \(6\)/);
      expect((await market(['reclaim', 'gift'], 'carol')).stderr).toMatch(/EscrowNotExpired \(48\)/);
      const accepted = await market(['accept', 'gift'], 'bob');
      expect(accepted.stdout).toMatch(/^accepted gift for 0\.25 SOL/);
      expect(await ownerOf('gift')).toBe(bob.publicKey.toBase58());
      const none = await market(['reclaim', 'gift'], 'alice');
      expect({ code: none.code, stderr: none.stderr.trim() }).toEqual({
        code: 1,
        stderr: 'error: gift has no pending offer',
      });
      expect(JSON.parse((await sealpost(['market', 'list', '--json', ...at], cwd)).stdout)).toEqual([]);
    },
    CLI_TEST_MS,
  );
});
