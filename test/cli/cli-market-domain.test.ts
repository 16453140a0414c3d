// `sealpost market domain …` as a black box: the real CLI against a real
// devnet (the committed mail program) over JSON-RPC — a sale to anyone that
// moves the price and the domain's authority in one transaction and tells
// the buyer which DNS record to publish, a cancel, a hand-off to one named
// wallet, refusals as one line with no funds moved, and usage errors.
import { type Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { getDomain } from '../../chain/client/client.ts';
import { domainListingOf } from '../../chain/client/instructions.ts';
import { getDomainListing } from '../../chain/client/market-client.ts';
import { startTestChain } from '../support/devnet.ts';
import { prepareMailChain } from '../support/mail-chain.ts';
import { keyFile, sealpost } from '../support/program-cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI_TEST_MS = 180_000;
const SOL = LAMPORTS_PER_SOL;
const DOMAIN = 'shop.test';
const LISTING_RENT = 1_740_000; // (128 + 122) × 6960

describe('sealpost market domain', () => {
  it(
    'lists, sells, cancels and hands over a domain; refuses with one line and moves nothing',
    async () => {
      const cwd = tempDir('sealpost-market-domain-');
      const chain = await startTestChain();
      const { connection: conn, programId } = chain;
      const at = ['--rpc', chain.devnet.rpcUrl, '--program-id', programId];
      const mail = await prepareMailChain(chain, DOMAIN);
      const [bob, carol] = (await Promise.all([chain.funded(10), chain.funded(10)])) as [Keypair, Keypair];
      const people = { alice: mail.authority, bob, carol };
      const files = Object.fromEntries(
        Object.entries(people).map(([n, kp]) => [n, keyFile(cwd, `${n}.json`, kp).path]),
      ) as Record<keyof typeof people, string>;
      const market = (args: string[], who: keyof typeof files) =>
        sealpost(['market', 'domain', ...args, '--key', files[who], ...at], cwd);
      const authorityOf = async () => (await getDomain(conn, programId, DOMAIN))?.authority.toBase58();
      const bal = (kp: Keypair) => chain.balance(kp.publicKey);
      const listing = domainListingOf(programId, { domain: DOMAIN }).toBase58();

      // Usage errors: exit 2, nothing sent.
      for (const args of [
        ['sell', DOMAIN, '--days', '1'],
        ['sell', DOMAIN, '--price', '1', '--days', '8'],
        ['sell', DOMAIN, '--price', '0', '--days', '1'],
        ['sell', 'not a domain!', '--price', '1', '--days', '1'],
        ['sell', DOMAIN, '--price', '1', '--days', '1', '--to', 'nobody'],
      ]) {
        const r = await market(args, 'alice');
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
      }

      // A stranger cannot list it; the authority can, and the listing holds the authority.
      const stranger = await market(['sell', DOMAIN, '--price', '1', '--days', '1'], 'bob');
      expect(stranger.stderr).toMatch(
        /^error: ListDomain refused by the mail program: Unauthorized \(6\)\n$/,
      );
      const sell = await market(['sell', 'Shop.Test.', '--price', '2.5', '--days', '3'], 'alice');
      expect({ code: sell.code, stderr: sell.stderr }).toEqual({ code: 0, stderr: '' });
      expect(sell.stdout).toMatch(/^listed shop\.test at 2\.5 SOL until \S+; relayed mail for it waits/);
      expect(await authorityOf()).toBe(listing);
      const listed = JSON.parse((await sealpost(['market', 'domain', 'list', '--json', ...at], cwd)).stdout);
      expect(listed).toMatchObject([
        {
          listing,
          domain: DOMAIN,
          holder: mail.authority.publicKey.toBase58(),
          buyer: null,
          price_lamports: '2500000000',
        },
      ]);
      expect((await sealpost(['market', 'domain', 'list', ...at], cwd)).stdout).toMatch(
        /^shop\.test holder=\w+ price 2\.5 SOL until \S+\n$/,
      );
      expect((await market(['sell', DOMAIN, '--price', '1', '--days', '1'], 'alice')).stderr).toMatch(
        /DomainLocked \(49\)/,
      );

      // The holder cannot buy its own; the buyer pays the holder and becomes the authority.
      const aliceBefore = await bal(mail.authority);
      const own = await market(['buy', DOMAIN], 'alice');
      expect(own.stderr).toMatch(/^error: BuyDomain refused by the mail program: OwnListing \(44\)\n$/);
      expect(await bal(mail.authority)).toBe(aliceBefore); // refused in preflight: not even a fee
      const bobBefore = await bal(bob);
      const bought = await market(['buy', DOMAIN, '--json'], 'bob');
      expect(bought.code).toBe(0);
      expect(JSON.parse(bought.stdout)).toMatchObject({
        price_lamports: '2500000000',
        authority: bob.publicKey.toBase58(),
        dns_record: { name: `_solana.authority.${DOMAIN}`, type: 'TXT', value: bob.publicKey.toBase58() },
      });
      expect(await bal(bob)).toBe(bobBefore - 2.5 * SOL - 5_000 - 1); // and the auto priority fee's floor: 1 lamport
      expect(await bal(mail.authority)).toBe(aliceBefore + 2.5 * SOL + LISTING_RENT);
      expect(await authorityOf()).toBe(bob.publicKey.toBase58());
      expect(await getDomainListing(conn, programId, { domain: DOMAIN })).toBeNull();

      // Bob lists it and cancels; then hands it to carol as a gift.
      expect((await market(['sell', DOMAIN, '--price', '1', '--days', '2'], 'bob')).code).toBe(0);
      expect((await market(['cancel', DOMAIN], 'carol')).stderr).toMatch(
        /CancelDomainListing refused by the mail program: ListingNotExpired \(51\)/,
      );
      const cancelled = await market(['cancel', DOMAIN], 'bob');
      expect(cancelled.stdout).toMatch(new RegExp(`^returned shop\\.test to ${bob.publicKey.toBase58()} `));
      expect(await authorityOf()).toBe(bob.publicKey.toBase58());
      const gift = await market(
        ['sell', DOMAIN, '--price', '0', '--to', carol.publicKey.toBase58(), '--days', '1'],
        'bob',
      );
      expect(gift.code).toBe(0);
      const offered = JSON.parse(
        (
          await sealpost(
            ['market', 'domain', 'list', '--json', '--buyer', carol.publicKey.toBase58(), ...at],
            cwd,
          )
        ).stdout,
      );
      expect(offered).toMatchObject([
        { domain: DOMAIN, buyer: carol.publicKey.toBase58(), price_lamports: '0' },
      ]);
      const byHolder = async (who: Keypair) =>
        JSON.parse(
          (
            await sealpost(
              ['market', 'domain', 'list', '--json', '--holder', who.publicKey.toBase58(), ...at],
              cwd,
            )
          ).stdout,
        );
      expect(await byHolder(bob)).toHaveLength(1);
      expect(await byHolder(mail.authority)).toEqual([]);
      const aliceNow = await bal(mail.authority);
      expect((await market(['buy', DOMAIN], 'alice')).stderr).toMatch(/Unauthorized \(6\)/);
      expect(await bal(mail.authority)).toBe(aliceNow);
      expect((await market(['buy', DOMAIN], 'carol')).stdout).toMatch(
        /^bought shop\.test for 0 SOL; publish TXT _solana\.authority\.shop\.test = /,
      );
      expect(await authorityOf()).toBe(carol.publicKey.toBase58());
      const none = await market(['cancel', DOMAIN], 'carol');
      expect({ code: none.code, stderr: none.stderr.trim() }).toEqual({
        code: 1,
        stderr: 'error: shop.test is not listed',
      });
      expect(JSON.parse((await sealpost(['market', 'domain', 'list', '--json', ...at], cwd)).stdout)).toEqual(
        [],
      );
    },
    CLI_TEST_MS,
  );
});
