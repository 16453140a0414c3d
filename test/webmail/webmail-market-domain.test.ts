// The webmail's domain marketplace in server mode, in headless Chromium
// against its own `sealpost dev` stack: Alice lists a domain she is the
// authority of, Bob buys it (the sheet's price, rent, fee and "Balance
// afterwards" are what the chain then holds, and the notice names the
// `_solana.authority.<domain>` TXT record to publish); buying one's own
// listing and buying an expired one show the program's refusal in words and
// move nothing; a listing named for one wallet is offered to it and shown as
// reserved to others; an expired listing is returned by a third wallet and a
// listing is cancelled by its holder.
import { Keypair } from '@solana/web3.js';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DOMAIN_LISTING_SIZE } from '../../chain/client/accounts/index.ts';
import { getDomain } from '../../chain/client/client.ts';
import { createDomainInstruction, domainListingOf } from '../../chain/client/instructions.ts';
import { getDomainListing } from '../../chain/client/market-client.ts';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { formatSol } from '../../src/mail/trustless/send.ts';
import {
  balanceOf,
  chainTimePast,
  confirmSheet,
  notice,
  openView,
  shownSol,
  UI,
} from '../support/webmail-market-page.ts';
import { webmailSuite } from '../support/webmail-page.ts';

// The devnet's clock: moved past a listing's expiry.
let skew = 0;
const suite = webmailSuite({ clock: () => Date.now() / 1000 + skew });
const DOMAIN = 'trade.test';

const balance = (kp: Keypair) => balanceOf(suite.stack.connection, kp);

/** Confirms the open sheet and waits for the program's refusal; returns its text and closes the sheet. */
async function refused(page: Page, button: string): Promise<string> {
  await confirmSheet(page, button);
  const sheet = page.getByTestId('action-confirm');
  const alert = sheet.getByRole('alert');
  await alert.waitFor({ timeout: 30_000 });
  const text = (await alert.textContent()) ?? '';
  await sheet.getByRole('button', { name: 'Close' }).click();
  await sheet.waitFor({ state: 'detached' });
  return text;
}

async function listDomain(page: Page, p: { price: string; buyer?: string; days: string }): Promise<string> {
  await page.getByLabel('Domain to sell (you are its authority)').fill(DOMAIN);
  await page.getByLabel('Asking price for the domain (SOL)').fill(p.price);
  await page.getByLabel('Only this wallet may buy (optional)').fill(p.buyer ?? '');
  await page.getByLabel('Listed for (days, at most 7)').fill(p.days);
  await page.getByRole('button', { name: 'Review domain listing' }).click();
  return confirmSheet(page, 'Confirm and list');
}

describe('webmail domain marketplace (headless Chromium, dev stack)', () => {
  it('lists, sells, refuses own and expired purchases, hands over to a named wallet, returns and cancels', async () => {
    const { connection: conn, programId: p } = suite.stack;
    const [alice, bob, carol] = [
      await suite.stack.newMailbox(),
      await suite.stack.newMailbox(),
      await suite.stack.newMailbox(),
    ];
    const delegate = Keypair.fromSecretKey(readKeypairFile(suite.stack.summary.keys.delegate).secretKey);
    await suite.stack.send(
      [
        createDomainInstruction({
          programId: p,
          delegate: delegate.publicKey,
          domain: DOMAIN,
          authority: alice.publicKey,
        }),
      ],
      [delegate],
    );
    const listingRent = BigInt(await conn.getMinimumBalanceForRentExemption(DOMAIN_LISTING_SIZE));
    const authority = async () => (await getDomain(conn, p, DOMAIN))?.authority.toBase58();

    // Alice lists the domain for anyone: the sheet itemizes the listing's rent and the fee.
    const a = await suite.kit.serverLogIn(alice);
    await openView(a, 'Market');
    await a.getByTestId('no-listings').waitFor();
    await a.getByLabel('Domain to sell (you are its authority)').fill(DOMAIN);
    await a.getByLabel('Asking price for the domain (SOL)').fill('2');
    await a.getByLabel('Listed for (days, at most 7)').fill('9');
    await a.getByRole('button', { name: 'Review domain listing' }).click();
    expect(await a.getByRole('alert').first().textContent()).toMatch(/at most 7/);
    await a.getByLabel('Listed for (days, at most 7)').fill('1');
    await a.getByRole('button', { name: 'Review domain listing' }).click();
    const sheet = a.getByTestId('action-confirm');
    await sheet.waitFor();
    expect(await sheet.getByTestId('cost-rent').textContent()).toBe(shownSol(listingRent));
    expect(await sheet.getByTestId('cost-fee').textContent()).toBe('0.000005 SOL');
    const listed = await confirmSheet(a, 'Confirm and list');
    await notice(a, new RegExp(`${DOMAIN} is listed`));
    expect(shownSol(await balance(alice))).toBe(listed);
    expect(await authority()).toBe(domainListingOf(p, { domain: DOMAIN }).toBase58());
    const card = a.getByTestId(`listing-${DOMAIN}`);
    await card.waitFor();
    expect(await card.getByTestId('listing-buyer').textContent()).toBe('anyone');
    await suite.kit.shot(a, 'market-domain-listed');

    // Alice buying her own listing (by name): the program refuses in words; nothing moves.
    await a.getByLabel('Domain to buy').fill(DOMAIN);
    await a.getByRole('button', { name: 'Review purchase' }).click();
    const aliceBefore = await balance(alice);
    expect(await refused(a, 'Confirm and buy')).toMatch(/cannot buy or bid on your own listing/);
    expect(await balance(alice)).toBe(aliceBefore);
    expect((await getDomainListing(conn, p, { domain: DOMAIN }))?.holder.toBase58()).toBe(
      alice.publicKey.toBase58(),
    );

    // Bob buys it: price, no rent, the fee; the balances are the sheet's; the notice names the DNS record.
    const b = await suite.kit.serverLogIn(bob);
    await openView(b, 'Market');
    await b.getByRole('button', { name: `Buy ${DOMAIN}`, exact: true }).click();
    const buySheet = b.getByTestId('action-confirm');
    await buySheet.waitFor();
    expect(await buySheet.getByTestId('cost-price').textContent()).toBe('2 SOL');
    expect(await buySheet.getByTestId('cost-rent').textContent()).toBe('0 SOL');
    expect(await buySheet.getByTestId('cost-fee').textContent()).toBe('0.000005 SOL');
    // The priority fee at the auto floor on a devnet without recent fees: 1 lamport.
    expect(await buySheet.getByTestId('cost-priority').textContent()).toBe('0.000000001 SOL');
    expect(await buySheet.getByTestId('cost-total').textContent()).toBe('2.000005001 SOL');
    const aliceBeforeSale = await balance(alice);
    const bobBought = await confirmSheet(b, 'Confirm and buy');
    await notice(
      b,
      new RegExp(
        `${DOMAIN} is yours\\. Publish the DNS TXT record _solana\\.authority\\.${DOMAIN.replace('.', '\\.')} with the value ${bob.publicKey.toBase58()}`,
      ),
    );
    await suite.kit.shot(b, 'market-domain-bought');
    expect(shownSol(await balance(bob))).toBe(bobBought);
    expect(await balance(alice)).toBe(aliceBeforeSale + 2_000_000_000n + listingRent);
    expect(await authority()).toBe(bob.publicKey.toBase58());
    await b.getByTestId(`listing-${DOMAIN}`).waitFor({ state: 'detached' });

    // Bob hands it to Carol only, for 1 SOL: offered to her, reserved to Alice (no Buy).
    await listDomain(b, { price: '1', buyer: carol.publicKey.toBase58(), days: '1' });
    await notice(b, new RegExp(`${DOMAIN} is listed`));
    const c = await suite.kit.serverLogIn(carol);
    await openView(c, 'Market');
    const carolCard = c.getByTestId(`listing-${DOMAIN}`);
    expect(await carolCard.getByTestId('listing-buyer').textContent()).toBe('you (offered to you)');
    await a.getByRole('button', { name: 'Refresh' }).click();
    await expect
      .poll(() => a.getByTestId(`listing-${DOMAIN}`).getByTestId('listing-buyer').textContent(), UI)
      .toBe('reserved for another wallet');
    expect(await a.getByRole('button', { name: `Buy ${DOMAIN}`, exact: true }).count()).toBe(0);

    // The listing expires while Carol's page still offers it: buying shows the refusal, nothing moves.
    skew += 2 * 86_400;
    await chainTimePast(conn, Date.now() / 1000 + skew - 5);
    await carolCard.getByRole('button', { name: `Buy ${DOMAIN}`, exact: true }).click();
    const [carolBefore, bobBefore] = [await balance(carol), await balance(bob)];
    expect(await refused(c, 'Confirm and buy')).toMatch(/listing has expired/);
    expect(await balance(carol)).toBe(carolBefore);
    expect(await balance(bob)).toBe(bobBefore);
    expect(await authority()).toBe(domainListingOf(p, { domain: DOMAIN }).toBase58());

    // Alice (anyone) returns the expired listing: she pays the fee, Bob gets the domain and the rent.
    await a.getByRole('button', { name: 'Refresh' }).click();
    await a.getByRole('button', { name: `Return ${DOMAIN} to its holder` }).click();
    expect(await a.getByTestId('action-confirm').getByTestId('cost-rent').textContent()).toBe('0 SOL');
    const bobBeforeReturn = await balance(bob);
    const returned = await confirmSheet(a, 'Confirm and return');
    await notice(a, new RegExp(`${DOMAIN} is back with its holder`));
    expect(shownSol(await balance(alice))).toBe(returned);
    expect(await balance(bob)).toBe(bobBeforeReturn + listingRent);
    expect(await authority()).toBe(bob.publicKey.toBase58());

    // Bob lists it again and cancels: the rent comes back as shown.
    await b.getByRole('button', { name: 'Refresh' }).click();
    await listDomain(b, { price: '3', days: '7' });
    await notice(b, new RegExp(`${DOMAIN} is listed`));
    const term = await getDomainListing(conn, p, { domain: DOMAIN });
    expect(Number((term?.expiresAt ?? 0n) - (term?.createdAt ?? 0n))).toBeLessThanOrEqual(7 * 86_400);
    await b.getByTestId(`listing-${DOMAIN}`).getByRole('button', { name: 'Cancel listing' }).click();
    expect(await b.getByTestId('action-confirm').getByTestId('cost-returned').textContent()).toBe(
      `${formatSol(listingRent)} SOL back`,
    );
    const cancelled = await confirmSheet(b, 'Confirm and cancel the listing');
    await notice(b, new RegExp(`listing of ${DOMAIN} is cancelled`));
    expect(shownSol(await balance(bob))).toBe(cancelled);
    expect(await authority()).toBe(bob.publicKey.toBase58());
    await b.getByTestId('no-listings').waitFor();
  }, 300_000);
});
