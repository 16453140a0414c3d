// The webmail's Market and Timelocks views in server mode, in headless
// Chromium against its own `sealpost dev` stack: one wallet lists aliases
// (fixed price and a short auction), others buy, bid and settle, an offer is
// accepted, a listing without bids is cancelled; each confirmation sheet's
// "Balance afterwards" is the balance the chain then holds, Cancel spends
// nothing, and a bid below the high bid shows the program's refusal in words
// and moves nothing. A mailbox close is started and cancelled with its window
// shown. Trustless mode has no Market.
import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { getAlias, getDomain, getMailbox } from '../../chain/client/client.ts';
import { createAliasInstruction } from '../../chain/client/instructions.ts';
import { getListing } from '../../chain/client/market-client.ts';
import { getPendingMailboxClose } from '../../chain/client/timelock-client.ts';
import { readKeypairFile } from '../../src/core/keys/keypair-file.ts';
import { DEV_DOMAIN } from '../../src/run/dev/dev-stack.ts';
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

// The devnet's clock: the timelock test moves it past the windows.
let skew = 0;
const suite = webmailSuite({ clock: () => Date.now() / 1000 + skew });

const balance = (kp: Keypair) => balanceOf(suite.stack.connection, kp);

describe('webmail Market and Timelocks (headless Chromium, dev stack)', () => {
  it('lists, buys, bids, refuses a low bid, settles, hands over by offer, cancels; balances move as shown', async () => {
    const alice = await suite.stack.newMailbox();
    const [bob, carol] = [await suite.stack.newMailbox(), await suite.stack.newMailbox()];
    for (const name of ['shop', 'auc', 'gift', 'spare'])
      await suite.stack.send(
        [createAliasInstruction({ programId: suite.stack.programId, owner: alice.publicKey, name })],
        [alice],
      );
    const p = suite.stack.programId;

    const a = await suite.kit.serverLogIn(alice);
    await openView(a, 'Market');
    await a.getByTestId('no-listings').waitFor();

    // Cancel on the sheet spends nothing.
    await a.getByLabel('Alias to sell').fill('shop');
    await a.getByLabel('Price (SOL)').fill('1.5');
    await a.getByRole('button', { name: 'Review listing' }).click();
    const sheet = a.getByTestId('action-confirm');
    await sheet.waitFor();
    expect(await sheet.getByTestId('cost-fee').textContent()).toBe('0.000005 SOL');
    const before = await balance(alice);
    await sheet.getByRole('button', { name: 'Cancel' }).click();
    await sheet.waitFor({ state: 'detached' });
    expect(await balance(alice)).toBe(before);
    expect(await getListing(suite.stack.connection, p, { alias: 'shop' })).toBeNull();

    // Fixed price, confirmed: the balance afterwards is what the chain holds.
    await a.getByRole('button', { name: 'Review listing' }).click();
    const listedAfter = await confirmSheet(a, 'Confirm and list');
    await notice(a, /shop is listed/);
    expect(shownSol(await balance(alice))).toBe(listedAfter);
    await a.getByTestId('listing-shop').waitFor();

    // An auction of 40 s without anti-snipe.
    await a.getByLabel('Alias to sell').fill('auc');
    await a.getByLabel('Auction').check();
    await a.getByLabel('Reserve, the lowest first bid (SOL)').fill('1');
    await a.getByLabel('Ends in (hours)').fill('0.011');
    await a.getByLabel('Anti-snipe window (minutes)').fill('0');
    await a.getByRole('button', { name: 'Review listing' }).click();
    await confirmSheet(a, 'Confirm and list');
    await notice(a, /auc is listed/);
    await suite.kit.shot(a, 'market-listed');

    // Bob buys shop: the price and the fee leave his wallet, the alias is his.
    const b = await suite.kit.serverLogIn(bob);
    await openView(b, 'Market');
    await b.getByTestId('listing-shop').waitFor();
    await b.getByRole('button', { name: 'Buy shop' }).click();
    expect(await b.getByTestId('action-confirm').getByTestId('cost-price').textContent()).toBe('1.5 SOL');
    const aliceBeforeSale = await balance(alice);
    const bobBought = await confirmSheet(b, 'Confirm and buy');
    await notice(b, /shop is yours/);
    expect(shownSol(await balance(bob))).toBe(bobBought);
    expect(await balance(alice)).toBe(aliceBeforeSale + 1_500_000_000n + (await rentOf(139)));
    expect((await getAlias(suite.stack.connection, p, 'shop'))?.owner.toBase58()).toBe(
      bob.publicKey.toBase58(),
    );
    await b.getByTestId('listing-shop').waitFor({ state: 'detached' });

    // Bob bids the reserve: the card names the minimum, the end and (here) no anti-snipe.
    const auc = b.getByTestId('listing-auc');
    expect(await auc.textContent()).toMatch(/Minimum next bid 1 SOL/);
    expect(await auc.getByTestId('listing-ends').textContent()).toMatch(/\(in \d+ s\)|\(in 0 min/);
    await b.getByLabel('Your bid on auc (SOL)').fill('1');
    await b.getByRole('button', { name: 'Review bid' }).click();
    const bobBid = await confirmSheet(b, 'Confirm and bid');
    await notice(b, /Your bid of 1 SOL on auc is in/);
    expect(shownSol(await balance(bob))).toBe(bobBid);
    await expect.poll(() => auc.getByTestId('listing-high-bid').textContent(), UI).toMatch(/1 SOL by you/);
    expect(await auc.textContent()).toMatch(/Minimum next bid 1\.05 SOL/);

    // Carol bids below the high bid: the program's refusal in words, nothing moves.
    const c = await suite.kit.serverLogIn(carol);
    await openView(c, 'Market');
    await c.getByLabel('Your bid on auc (SOL)').fill('0.5');
    await c.getByRole('button', { name: 'Review bid' }).click();
    const carolBefore = await balance(carol);
    const bobBefore = await balance(bob);
    await confirmSheet(c, 'Confirm and bid');
    const refusal = c.getByTestId('action-confirm').getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/Your bid is too low/);
    await suite.kit.shot(c, 'market-bid-refused');
    expect(await balance(carol)).toBe(carolBefore);
    expect(await balance(bob)).toBe(bobBefore);
    const still = await getListing(suite.stack.connection, p, { alias: 'auc' });
    expect(still?.highBidder.toBase58()).toBe(bob.publicKey.toBase58());
    await c.getByTestId('action-confirm').getByRole('button', { name: 'Close' }).click();

    // An offer to Bob for 0.1 SOL, accepted in his page.
    await a.getByLabel('Alias to offer').fill('gift');
    await a.getByLabel('To wallet').fill(bob.publicKey.toBase58());
    await a.getByLabel('Fee the wallet pays you (SOL)').fill('0.1');
    await a.getByRole('button', { name: 'Review offer' }).click();
    await confirmSheet(a, 'Confirm and offer');
    await notice(a, /gift is offered/);
    await b.getByRole('button', { name: 'Refresh' }).click();
    await b.getByRole('button', { name: 'Accept gift' }).click();
    expect(await b.getByTestId('action-confirm').getByTestId('cost-price').textContent()).toBe('0.1 SOL');
    const bobAccepted = await confirmSheet(b, 'Confirm and accept');
    await notice(b, /gift is yours/);
    expect(shownSol(await balance(bob))).toBe(bobAccepted);
    expect((await getAlias(suite.stack.connection, p, 'gift'))?.owner.toBase58()).toBe(
      bob.publicKey.toBase58(),
    );

    // A listing without bids is cancelled; the rent comes back as shown.
    await a.getByLabel('Alias to sell').fill('spare');
    await a.getByLabel('Fixed price').check();
    await a.getByLabel('Price (SOL)').fill('2');
    await a.getByRole('button', { name: 'Review listing' }).click();
    await confirmSheet(a, 'Confirm and list');
    await notice(a, /spare is listed/);
    await a.getByTestId('listing-spare').getByRole('button', { name: 'Cancel listing' }).click();
    expect(await a.getByTestId('action-confirm').getByTestId('cost-returned').textContent()).toMatch(
      /SOL back$/,
    );
    const cancelled = await confirmSheet(a, 'Confirm and cancel the listing');
    await notice(a, /listing of spare is cancelled/);
    expect(shownSol(await balance(alice))).toBe(cancelled);
    await a.getByTestId('listing-spare').waitFor({ state: 'detached' });
    expect((await getAlias(suite.stack.connection, p, 'spare'))?.owner.toBase58()).toBe(
      alice.publicKey.toBase58(),
    );

    // The auction ends; Carol (anyone) settles it and Bob gets the alias, Alice the bid.
    const ends = Number((await getListing(suite.stack.connection, p, { alias: 'auc' }))?.expiresAt ?? 0);
    await expect
      .poll(
        async () => (await suite.stack.connection.getBlockTime(await suite.stack.connection.getSlot())) ?? 0,
        {
          timeout: 60_000,
          interval: 500,
        },
      )
      .toBeGreaterThanOrEqual(ends);
    await c.getByRole('button', { name: 'Refresh' }).click();
    await c.getByTestId('listing-auc').getByRole('button', { name: 'Settle' }).click();
    const aliceBeforeSettle = await balance(alice);
    const carolSettled = await confirmSheet(c, 'Confirm and settle');
    await notice(c, /auction of auc is settled/);
    expect(shownSol(await balance(carol))).toBe(carolSettled);
    expect(await balance(alice)).toBe(aliceBeforeSettle + 1_000_000_000n + (await rentOf(139)));
    expect((await getAlias(suite.stack.connection, p, 'auc'))?.owner.toBase58()).toBe(
      bob.publicKey.toBase58(),
    );
    await c.getByTestId('no-listings').waitFor();
  }, 300_000);

  it('starts, cancels and completes a mailbox close and a domain deactivation with their windows shown; trustless mode has no Market', async () => {
    const owner = await suite.stack.newMailbox();
    const page = await suite.kit.serverLogIn(owner);
    await openView(page, 'Timelocks');
    await page.getByTestId('no-timelocks').waitFor();
    await page.getByRole('button', { name: 'Start closing my mailbox' }).click();
    const started = await confirmSheet(page, 'Confirm and start');
    await expect
      .poll(() => page.getByTestId('timelocks-notice').textContent(), UI)
      .toMatch(/close of your mailbox is started/);
    expect(shownSol(await balance(owner))).toBe(started);
    const pending = await getPendingMailboxClose(
      suite.stack.connection,
      suite.stack.programId,
      owner.publicKey,
    );
    expect(pending).not.toBeNull();
    const ends = page.getByTestId('timelock-mailbox_close').getByTestId('timelock-ends');
    await expect.poll(() => ends.textContent(), UI).toMatch(/\(in [67] d \d+ h\)/);
    const endsIso = await ends.locator('span').getAttribute('title');
    expect(Date.parse(endsIso ?? '') / 1000).toBe(Number((pending?.requestedAt ?? 0n) + 7n * 86_400n));
    expect(await page.getByRole('button', { name: 'Close the mailbox' }).isDisabled()).toBe(true);
    await suite.kit.shot(page, 'timelocks-pending');
    await page.getByRole('button', { name: 'Cancel the close' }).click();
    const cancelled = await confirmSheet(page, 'Confirm and cancel the close');
    await page.getByTestId('no-timelocks').waitFor();
    expect(shownSol(await balance(owner))).toBe(cancelled);
    expect(
      await getPendingMailboxClose(suite.stack.connection, suite.stack.programId, owner.publicKey),
    ).toBeNull();

    // Narrow screens: both views wrap instead of widening the page, one h1 each.
    await page.setViewportSize({ width: 390, height: 800 });
    for (const view of ['Timelocks', 'Market']) {
      await openView(page, view);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(await page.locator('h1').count()).toBe(1);
    }

    // Started again and completed once the devnet's clock is past the window.
    await openView(page, 'Timelocks');
    await page.getByRole('button', { name: 'Start closing my mailbox' }).click();
    await confirmSheet(page, 'Confirm and start');
    await page.getByTestId('timelock-mailbox_close').waitFor();
    skew += 8 * 86_400;
    await chainTimePast(suite.stack.connection, Date.now() / 1000 + skew - 5);
    await openView(page, 'Market');
    await openView(page, 'Timelocks');
    await expect
      .poll(() => page.getByTestId('timelock-ends').textContent(), UI)
      .toMatch(/over: it can be completed/);
    await page.getByRole('button', { name: 'Close the mailbox' }).click();
    expect(await page.getByTestId('action-confirm').getByTestId('cost-returned').textContent()).toMatch(
      /SOL back$/,
    );
    const closed = await confirmSheet(page, 'Confirm and close the mailbox');
    await page.getByTestId('no-timelocks').waitFor();
    expect(shownSol(await balance(owner))).toBe(closed);
    expect(await getMailbox(suite.stack.connection, suite.stack.programId, owner.publicKey)).toBeNull();

    // The dev domain's authority starts a deactivation (30 days): Finish stays disabled until the window is over.
    const authority = Keypair.fromSecretKey(readKeypairFile(suite.stack.summary.keys.authority).secretKey);
    const airdrop = await suite.stack.connection.requestAirdrop(authority.publicKey, 2_000_000_000);
    await suite.stack.connection.confirmTransaction(
      { signature: airdrop, ...(await suite.stack.connection.getLatestBlockhash('confirmed')) },
      'confirmed',
    );
    const auth = await suite.kit.serverLogIn(authority);
    await openView(auth, 'Timelocks');
    await auth.getByLabel('Domain (you are its authority)').fill(DEV_DOMAIN);
    await auth.getByRole('button', { name: 'Review deactivation' }).click();
    await confirmSheet(auth, 'Confirm and start');
    const card = auth.getByTestId('timelock-domain_deactivation');
    await card.waitFor();
    expect(await card.textContent()).toContain(`Domain deactivation of ${DEV_DOMAIN}`);
    await expect
      .poll(() => card.getByTestId('timelock-ends').textContent(), UI)
      .toMatch(/\(in (29|30) d \d+ h\)/);
    expect(await card.getByRole('button', { name: 'Finish deactivation' }).isDisabled()).toBe(true);
    skew += 31 * 86_400;
    await chainTimePast(suite.stack.connection, Date.now() / 1000 + skew - 5);
    await openView(auth, 'Market');
    await openView(auth, 'Timelocks');
    await card.getByRole('button', { name: 'Finish deactivation' }).click();
    const finished = await confirmSheet(auth, 'Confirm and deactivate');
    await auth.getByTestId('no-timelocks').waitFor();
    expect(shownSol(await balance(authority))).toBe(finished);
    expect((await getDomain(suite.stack.connection, suite.stack.programId, DEV_DOMAIN))?.isActive).toBe(
      false,
    );

    const trustless = await suite.kit.newPage();
    await suite.kit.goTrustless(trustless);
    await suite.kit.importKey(trustless, owner);
    const nav = trustless.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: 'Inbox' }).waitFor();
    expect(await nav.getByRole('button', { name: 'Market' }).count()).toBe(0);
    expect(await nav.getByRole('button', { name: 'Timelocks' }).count()).toBe(0);
  }, 180_000);
});

async function rentOf(size: number): Promise<bigint> {
  return BigInt(await suite.stack.connection.getMinimumBalanceForRentExemption(size));
}
