// Held drafts never spend toward a recipient other than the one their prepay
// card quoted, in headless Chromium against its own `sealpost dev` stack.
// Every check that matters is made on chain: the sender's balance, its
// Frombox accounts (a bought stamp creates one) and the recipients' Email
// accounts. Scenarios: To edited under an open card toward an open mailbox
// (asks again, buys nothing — the page used to buy the first recipient's
// stamp and send to the second unasked, which this test caught) and toward
// another postage-charging one (a new card for it, the first never funded);
// the bounty edited and Buy pressed as a double click and once more as the
// new quote shows (one re-quote, nothing spent; then one purchase at the
// card's "Balance afterwards", a fractional claim window, a receipt saying
// what happened, and the recipient's Claim); a reprice re-quoted in place;
// an alias that moves to another wallet while its card is open; and the
// small refusals (key import, open mailbox in Balances) in words, without
// console errors.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair, PublicKey } from '@solana/web3.js';
import type { ConsoleMessage, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  createAliasInstruction,
  fromHash,
  getEmailAt,
  getFrombox,
  listInbox,
  setMailboxFlagsInstruction,
} from '../../chain/client/index.ts';
import { acceptAliasInstruction, offerAliasInstruction } from '../../chain/client/market-instructions.ts';
import { DEV_DOMAIN } from '../../src/run/dev/dev-stack.ts';
import { webmailSuite } from '../support/webmail-page.ts';

const suite = webmailSuite();
const POSTAGE = 100_000n;

const balanceOf = async (k: PublicKey) => BigInt(await suite.stack.connection.getBalance(k, 'confirmed'));
const fromboxOf = (sender: Keypair, recipient: Keypair) =>
  getFrombox(suite.stack.connection, suite.stack.programId, fromHash(sender.publicKey), recipient.publicKey);
const inboxSize = async (owner: Keypair) =>
  (await listInbox(suite.stack.connection, suite.stack.programId, owner.publicKey)).length;

/** "0.0001 SOL" → lamports. */
function lamportsOf(text: string | null): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,9}))? SOL$/.exec((text ?? '').trim());
  if (!m) throw new Error(`not an amount: ${text}`);
  const v = BigInt(m[2] as string) * 1_000_000_000n + BigInt((m[3] ?? '').padEnd(9, '0'));
  return m[1] ? -v : v;
}

/** A page in trustless mode with the sender's wallet unlocked, its console errors collected. */
async function senderPage(sender: Keypair): Promise<{ page: Page; consoleErrors: string[] }> {
  const page = await suite.kit.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await suite.kit.goTrustless(page);
  await suite.kit.importKey(page, sender);
  await page.getByRole('button', { name: 'Compose' }).click();
  return { page, consoleErrors };
}

/** Fills a draft toward `to` and presses Send; waits for the held draft's prepay card. */
async function holdDraft(page: Page, to: string, subject: string): Promise<Locator> {
  await page.locator('input[name=to]').fill(to);
  await page.getByLabel('Subject').fill(subject);
  await page.locator('textarea[name=body]').fill(`Body of ${subject}`);
  await page.getByRole('button', { name: 'Send' }).click();
  const card = page.getByTestId('prepay-card');
  await card.waitFor();
  return card;
}

const buyButton = (card: Locator) => card.getByRole('button', { name: /^Buy 1 stamp and send$/ });

/** The wallet the visible prepay card names (its full address is the title). */
const cardWallet = (page: Page) => page.getByTestId('prepay-wallet').getAttribute('title');

/** Waits until the page shows one of the outcomes of pressing Buy (so a regression fails on chain facts, not a timeout). */
async function settled(page: Page, ...testIds: string[]): Promise<void> {
  let any = page.getByTestId(testIds[0] as string);
  for (const id of testIds.slice(1)) any = any.or(page.getByTestId(id));
  await any.first().waitFor({ timeout: 60_000 });
  // Nothing under way any more (a purchase and its send would show "Checking and buying…", "Sending…")…
  await expect
    .poll(() => page.getByRole('button', { name: /Checking and buying|Sending…|Buying the stamp/ }).count(), {
      timeout: 60_000,
    })
    .toBe(0);
  // …and a transaction already sent lands within a few slots: give it the time to show on chain.
  await sleep(3000);
}

describe('held drafts spend only toward the recipient their card quoted', () => {
  it('To edited under an open card: toward an open mailbox it asks again and buys nothing; toward another that asks postage, a new card', async () => {
    const { stack } = suite;
    const sender = await stack.funded(5);
    const [gated, open, other] = [
      await stack.newMailbox({ postage: POSTAGE }),
      await stack.newMailbox(),
      await stack.newMailbox({ postage: POSTAGE * 2n }),
    ];
    const { page, consoleErrors } = await senderPage(sender);
    const card = await holdDraft(page, gated.publicKey.toBase58(), `First contact ${Date.now()}`);
    expect(await cardWallet(page)).toBe(gated.publicKey.toBase58());

    // To now names an open mailbox; Buy must not buy the first recipient's stamp.
    await page.locator('input[name=to]').fill(open.publicKey.toBase58());
    const before = await balanceOf(sender.publicKey);
    await buyButton(card).click();
    await settled(page, 'send-confirm', 'receipt');
    expect(await fromboxOf(sender, gated)).toBeNull();
    expect(await inboxSize(open)).toBe(0);
    expect(await balanceOf(sender.publicKey)).toBe(before);
    // It asks again, for the send as the draft stands now, and says why.
    const sheet = page.getByTestId('send-confirm');
    await sheet.waitFor();
    expect(await sheet.textContent()).toContain(open.publicKey.toBase58());
    expect(await sheet.getByTestId('requote-notice').textContent()).toMatch(
      /draft changed after the postage quote.*To.*Nothing was bought/,
    );
    const after = lamportsOf(await sheet.getByTestId('cost-after').textContent());
    await suite.kit.confirmSend(page);
    const receipt = page.getByTestId('receipt');
    await receipt.waitFor({ timeout: 60_000 });
    expect(await receipt.getByTestId('receipt-recipient').textContent()).toContain(open.publicKey.toBase58());
    expect(await receipt.getByTestId('receipt-stamp').textContent()).toMatch(/No stamp bought/);
    const sent = await getEmailAt(
      stack.connection,
      stack.programId,
      (await receipt.getByTestId('receipt-email').textContent()) ?? '',
    );
    expect(sent?.recipient.toBase58()).toBe(open.publicKey.toBase58());
    expect(await balanceOf(sender.publicKey)).toBe(after);
    expect(await fromboxOf(sender, gated)).toBeNull();

    // Again toward the first, then To names a second mailbox that asks postage too.
    await receipt.getByRole('button', { name: 'New message' }).click();
    const card2 = await holdDraft(page, gated.publicKey.toBase58(), `Second try ${Date.now()}`);
    await page.locator('input[name=to]').fill(other.publicKey.toBase58());
    await buyButton(card2).click();
    await settled(page, 'requote-notice', 'receipt');
    expect(await fromboxOf(sender, gated)).toBeNull();
    expect(await fromboxOf(sender, other)).toBeNull();
    expect(await cardWallet(page)).toBe(other.publicKey.toBase58());
    expect(await page.getByTestId('quote-postage').textContent()).toBe('0.0002 SOL');
    expect(await card2.getByTestId('requote-notice').textContent()).toMatch(/Nothing was bought/);
    await suite.kit.shot(page, '40-held-requoted-card');

    // The new card's own Buy buys toward the second, and the message goes to it.
    const after2 = lamportsOf(await card2.getByTestId('quote-after').textContent());
    await buyButton(card2).click();
    await receipt.waitFor({ timeout: 60_000 });
    expect(await receipt.getByTestId('receipt-recipient').textContent()).toContain(
      other.publicKey.toBase58(),
    );
    expect(await receipt.getByTestId('receipt-stamp').textContent()).toMatch(/1 stamp bought/);
    // The purchase's progress toast gives way to the receipt.
    expect(await page.getByText('Stamps bought. Sending').count()).toBe(0);
    expect(await inboxSize(other)).toBe(1);
    expect((await fromboxOf(sender, other))?.stamps).toBe(0n);
    expect(await fromboxOf(sender, gated)).toBeNull();
    expect(await inboxSize(gated)).toBe(0);
    // Stamps, purchase fees and the send, less the surcharge the spent stamp gives back: as the card said.
    expect(await balanceOf(sender.publicKey)).toBe(after2);
    // None of the refusals above is a console error.
    expect(consoleErrors.filter((e) => /Nothing was bought/.test(e))).toEqual([]);
  }, 180_000);

  it('the bounty edited and Buy pressed twice quickly: one re-quote, nothing spent; then one purchase, a fractional claim window, a receipt that says what happened, and the recipient claims', async () => {
    const { stack } = suite;
    const sender = await stack.funded(5);
    const gated = await stack.newMailbox({ postage: POSTAGE });
    const { page } = await senderPage(sender);
    const subject = `With a bounty ${Date.now()}`;
    const card = await holdDraft(page, gated.publicKey.toBase58(), subject);
    expect(await card.getByTestId('cost-bounty').count()).toBe(0);

    await page.getByLabel('Amount in SOL').fill('0.01');
    await page.getByLabel('Claim window (days)').fill('0.5');
    const before = await balanceOf(sender.publicKey);
    // Two presses as one double click, faster than any re-render: the second must not buy.
    await expect.poll(() => buyButton(card).isEnabled(), { timeout: 15_000 }).toBe(true);
    await buyButton(card).scrollIntoViewIfNeeded();
    const box = await buyButton(card).boundingBox();
    if (!box) throw new Error('the Buy button is not laid out');
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    // A late second press, just as the new quote shows, lands on a Buy that is not armed yet.
    await card.getByTestId('requote-notice').waitFor();
    await buyButton(card).scrollIntoViewIfNeeded();
    const again = await buyButton(card).boundingBox();
    if (!again) throw new Error('the Buy button is not laid out');
    await page.mouse.click(again.x + again.width / 2, again.y + again.height / 2);
    await settled(page, 'requote-notice', 'receipt');
    expect(await fromboxOf(sender, gated)).toBeNull();
    expect(await balanceOf(sender.publicKey)).toBe(before);
    expect(await card.getByTestId('requote-notice').textContent()).toMatch(/bounty.*Nothing was bought/);
    expect(await card.getByTestId('cost-bounty').textContent()).toBe('0.01 SOL');
    expect(await cardWallet(page)).toBe(gated.publicKey.toBase58());

    const after = lamportsOf(await card.getByTestId('quote-after').textContent());
    await buyButton(card).click();
    const receipt = page.getByTestId('receipt');
    await receipt.waitFor({ timeout: 60_000 });
    expect(await balanceOf(sender.publicKey)).toBe(after);
    const email = (await receipt.getByTestId('receipt-email').textContent()) ?? '';
    const sent = await getEmailAt(stack.connection, stack.programId, email);
    expect(sent?.recipient.toBase58()).toBe(gated.publicKey.toBase58());
    expect(sent?.bountyLamports).toBe(10_000_000n);
    // Half a day: 12 hours from the chain's clock.
    const now = BigInt(Math.floor(Date.now() / 1000));
    expect(sent?.expiresAt).toBeGreaterThan(now + 43_200n - 120n);
    expect(sent?.expiresAt).toBeLessThan(now + 43_200n + 120n);
    expect(await receipt.getByTestId('receipt-stamp').textContent()).toMatch(/1 stamp bought/);
    expect(await receipt.getByTestId('receipt-bounty').textContent()).toMatch(/0\.01 SOL.*until/);
    await suite.kit.shot(page, '41-held-receipt');
    expect(await receipt.getByTestId('receipt-recipient').textContent()).toContain(
      gated.publicKey.toBase58(),
    );
    const frombox = await fromboxOf(sender, gated);
    expect(frombox?.stamps).toBe(0n);

    // The recipient claims the bounty; the Claim button goes once it is claimed.
    const reader = await suite.kit.newPage();
    await suite.kit.goTrustless(reader);
    await suite.kit.importKey(reader, gated);
    await suite.kit.openMessage(reader, subject);
    const claim = reader.getByRole('button', { name: /^Claim bounty/ });
    const held = await balanceOf(gated.publicKey);
    await claim.click();
    await reader.getByText('Bounty claimed.').waitFor();
    expect(await claim.count()).toBe(0);
    expect(await balanceOf(gated.publicKey)).toBeGreaterThan(held + 9_000_000n);
  }, 180_000);

  it('a reprice refusal re-quotes in place: the card shows the new price and asks again; the next Buy pays it', async () => {
    const { stack } = suite;
    const sender = await stack.funded(5);
    const gated = await stack.newMailbox({ postage: POSTAGE });
    const { page, consoleErrors } = await senderPage(sender);
    const card = await holdDraft(page, gated.publicKey.toBase58(), `Repriced ${Date.now()}`);
    expect(await page.getByTestId('quote-postage').textContent()).toBe('0.0001 SOL');
    await stack.send(
      [
        setMailboxFlagsInstruction({
          programId: stack.programId,
          owner: gated.publicKey,
          defaultPostage: POSTAGE * 3n,
        }),
      ],
      [gated],
    );
    const before = await balanceOf(sender.publicKey);
    await buyButton(card).click();
    await expect
      .poll(() => card.getByTestId('requote-notice').textContent(), { timeout: 30_000 })
      .toMatch(/price changed to .* SOL per stamp.*Nothing was bought/);
    // The same card, quoted again: the new postage, a Buy that asks for it.
    await expect
      .poll(() => page.getByTestId('quote-postage').textContent(), { timeout: 15_000 })
      .toBe('0.0003 SOL');
    expect(await fromboxOf(sender, gated)).toBeNull();
    expect(await balanceOf(sender.publicKey)).toBe(before);
    const after = lamportsOf(await card.getByTestId('quote-after').textContent());
    await buyButton(card).click();
    await page.getByTestId('receipt').waitFor({ timeout: 60_000 });
    expect(await balanceOf(sender.publicKey)).toBe(after);
    expect(await inboxSize(gated)).toBe(1);
    expect(consoleErrors.filter((e) => /price changed/.test(e))).toEqual([]);
  }, 150_000);

  it('an alias that moves to another wallet under an open card: nothing is bought toward either, a card for the new holder', async () => {
    const { stack } = suite;
    const sender = await stack.funded(5);
    const [first, second] = [
      await stack.newMailbox({ postage: POSTAGE }),
      await stack.newMailbox({ postage: POSTAGE }),
    ];
    const alias = `moving${Date.now().toString(36)}`;
    await stack.send(
      [createAliasInstruction({ programId: stack.programId, owner: first.publicKey, name: alias })],
      [first],
    );
    const { page } = await senderPage(sender);
    const card = await holdDraft(page, `${alias}@${DEV_DOMAIN}`, `Alias ${Date.now()}`);
    expect(await cardWallet(page)).toBe(first.publicKey.toBase58());

    // The alias is given to the second wallet while the card is open.
    const expiresAt = BigInt(Math.floor(Date.now() / 1000) + 3600);
    await stack.send(
      [
        offerAliasInstruction({
          programId: stack.programId,
          alias,
          holder: first.publicKey,
          recipient: second.publicKey,
          feeLamports: 0n,
          expiresAt,
        }),
      ],
      [first],
    );
    await stack.send(
      [
        acceptAliasInstruction({
          programId: stack.programId,
          alias,
          recipient: second.publicKey,
          holder: first.publicKey,
        }),
      ],
      [second],
    );
    await buyButton(card).click();
    await settled(page, 'requote-notice', 'receipt');
    expect(await fromboxOf(sender, first)).toBeNull();
    expect(await fromboxOf(sender, second)).toBeNull();
    expect(await card.getByTestId('requote-notice').textContent()).toMatch(
      /now resolves to wallet .*Nothing was bought/,
    );
    expect(await cardWallet(page)).toBe(second.publicKey.toBase58());
    expect(await inboxSize(first)).toBe(0);
  }, 150_000);
});

describe('refusals and descriptions in words', () => {
  it('a bad key file, an open mailbox in Balances: plain sentences, no console error', async () => {
    const { stack } = suite;
    const sender = await stack.funded(2);
    const open = await stack.newMailbox();
    const { page, consoleErrors } = await senderPage(sender);

    await page.getByRole('button', { name: 'Keys' }).click();
    await page.getByLabel('Mailbox key file (JSON array)').fill('not a key');
    await page.getByRole('button', { name: 'Import' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'The pasted text is not a mailbox key file: not JSON; expected an array of 64 numbers.',
    );

    await page.getByRole('button', { name: 'Balances' }).click();
    await page.getByLabel('Recipient (wallet address or alias)').fill(open.publicKey.toBase58());
    await page.getByRole('button', { name: 'Quote' }).click();
    const card = page.getByTestId('prepay-card');
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    expect(text).not.toContain('asks first-contact senders for postage');
    expect(text).toMatch(/asks no postage/);
    expect(consoleErrors.filter((e) => /mailbox key file/.test(e))).toEqual([]);
  }, 90_000);
});
