// The chain inbox as a mail client people would choose (issue 18, part 6):
// unread state kept in the browser, preview snippets, relative dates and
// display names; going back to the inbox asks the chain only for what is
// new; one h1 and a tab title that follow the view; and no screen scrolls
// sideways at a phone's 390 px.
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { DEV_DOMAIN } from '../../src/run/dev/dev-stack.ts';
import { addr, type PageKit, pageKit } from '../support/webmail-page.ts';
import { launchChromium, startWebmailStack, type WebmailStack } from '../support/webmail-stack.ts';

let stack: WebmailStack;
let browser: Browser;
let kit: PageKit;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startWebmailStack(), launchChromium()]);
  kit = pageKit(stack, browser);
}, 120_000);

afterAll(async () => {
  await kit?.closeAll();
  await browser?.close();
  await stack?.close();
}, 60_000);

/** JSON-RPC methods the page calls and IPFS gateway fetches it makes, from now on. */
function watchTraffic(page: Page) {
  const rpc: string[] = [];
  const gateway: string[] = [];
  const onRequest = (r: Request) => {
    if (r.url().startsWith(stack.gatewayUrl)) gateway.push(r.url());
    if (r.url().startsWith(stack.summary.chain.rpc_url) && r.method() === 'POST') {
      try {
        const body = JSON.parse(r.postData() ?? '{}') as { method?: string } | { method?: string }[];
        for (const call of Array.isArray(body) ? body : [body]) rpc.push(String(call.method));
      } catch {
        rpc.push('(unparsable)');
      }
    }
  };
  page.on('request', onRequest);
  return {
    rpc,
    gateway,
    reset() {
      rpc.length = 0;
      gateway.length = 0;
    },
  };
}

async function noSideScroll(page: Page, screen: string): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `${screen} is ${width} px wide at a 390 px viewport`).toBeLessThanOrEqual(390);
  expect(await page.locator('h1').count(), `${screen} has one h1`).toBe(1);
}

describe('the chain inbox in headless Chromium', () => {
  it('shows unread state, snippets, relative dates and names, and fetches only what is new', async () => {
    const holder = await stack.newMailbox();
    const wallet = stack.openWallet.publicKey.toBase58();
    await kit.smtpSend(
      'ann@remote.example',
      addr(holder),
      'Plans for Monday',
      'Hello there,\r\nthe plan is ready.\r\n-- \r\nAnn',
      'Ann Example <ann@remote.example>',
    );
    await kit.smtpSend(addr(stack.openWallet), addr(holder), 'From a wallet', 'No display name here.');
    await kit.waitForInbox(holder.publicKey, 2);

    const page = await kit.newPage();
    await kit.goTrustless(page);
    await kit.importKey(page, holder);
    const rows = page.getByTestId('inbox-row');
    const ann = rows.filter({ hasText: 'Plans for Monday' });
    await ann.waitFor();
    await expect.poll(() => page.getByTestId('inbox-snippet').count()).toBe(2);
    expect(await ann.getAttribute('data-unread')).toBe('true');
    expect(await ann.locator('.row-from').textContent()).toBe('Unread, From Ann Example,');
    expect(await ann.getByTestId('inbox-snippet').textContent()).toBe('Hello there, the plan is ready.');
    expect(await ann.getByTestId('inbox-time').textContent()).toMatch(/^(just now|\d+ min ago)$/);
    const fromWallet = rows.filter({ hasText: 'From a wallet' });
    expect(await fromWallet.locator('.row-from').textContent()).toBe(
      `Unread, From ${wallet.slice(0, 4)}…${wallet.slice(-4)}@${DEV_DOMAIN},`,
    );
    expect(await page.getByTestId('unread-count').textContent()).toBe('2 unread');
    await expect.poll(() => page.title()).toBe('Inbox (2) — Sealpost');
    await kit.shot(page, '02b-inbox-unread');

    const traffic = watchTraffic(page);
    await ann.click();
    await expect.poll(() => page.title()).toBe('Plans for Monday — Sealpost');
    expect(await page.locator('h1').textContent()).toBe('Plans for Monday');
    // The body was opened for the row already: the reader fetches nothing from the gateway.
    expect(traffic.gateway).toEqual([]);
    traffic.reset();
    await page.getByRole('button', { name: 'Inbox', exact: true }).click();
    await expect.poll(() => ann.getAttribute('data-unread')).toBe('false');
    expect(await page.getByTestId('unread-count').textContent()).toBe('1 unread');
    await expect.poll(() => page.title()).toBe('Inbox (1) — Sealpost');
    // Back to the inbox: the mailbox is re-read, no message account or body is fetched again.
    await expect.poll(() => traffic.rpc.includes('getAccountInfo')).toBe(true);
    expect(traffic.rpc.filter((m) => m === 'getMultipleAccounts')).toEqual([]);
    expect(traffic.gateway).toEqual([]);

    // New mail: only its index is read, only its body fetched.
    await kit.smtpSend('cy@remote.example', addr(holder), 'Third one', 'Fresh news.');
    await kit.waitForInbox(holder.publicKey, 3);
    traffic.reset();
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.getByRole('button', { name: 'Inbox', exact: true }).click();
    await rows.filter({ hasText: 'Third one' }).waitFor();
    expect(await rows.count()).toBe(3);
    expect(traffic.rpc.filter((m) => m === 'getMultipleAccounts')).toHaveLength(1);
    expect(traffic.gateway).toHaveLength(1);
    expect(await page.getByTestId('unread-count').textContent()).toBe('2 unread');

    // Read marks live in this browser: they survive a reload and unlock.
    await page.reload();
    await page.getByLabel('Passphrase').fill('correct horse battery');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await expect.poll(() => ann.getAttribute('data-unread')).toBe('false');
    await page.getByRole('button', { name: 'Mark all read' }).click();
    expect(await page.getByTestId('unread-count').textContent()).toBe('');
    expect(await rows.filter({ has: page.locator('[data-unread="true"]') }).count()).toBe(0);
  }, 120_000);

  it('a pin service down after confirming: a plain error in view, the draft kept, nothing spent', async () => {
    const sender = await stack.newMailbox();
    const to = await stack.newMailbox();
    const page = await kit.newPage({ width: 1280, height: 800 });
    await kit.goTrustless(page);
    await kit.importKey(page, sender);
    await page.getByRole('heading', { name: 'Inbox' }).waitFor();
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    await page.getByLabel('IPFS pin service URL').fill('http://127.0.0.1:9/');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await page.reload();
    await page.getByLabel('Passphrase').fill('correct horse battery');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByRole('heading', { name: 'Inbox' }).waitFor();
    const before = await stack.connection.getBalance(sender.publicKey, 'confirmed');
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.locator('input[name=to]').fill(to.publicKey.toBase58());
    await page.getByLabel('Subject').fill('pinned nowhere');
    await page.locator('textarea[name=body]').fill('kept');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm and send' }).click();
    const alert = page.getByRole('alert');
    await expect
      .poll(() => alert.textContent())
      .toMatch(
        /pin service at http:\/\/127\.0\.0\.1:9\/ does not answer.*Nothing was sent or paid; your draft is kept/,
      );
    expect(await alert.isVisible()).toBe(true);
    const box = await alert.boundingBox();
    expect((box?.y ?? 10_000) + (box?.height ?? 0)).toBeLessThanOrEqual(800);
    expect(await page.getByTestId('send-confirm').count()).toBe(0);
    expect(await page.getByLabel('Subject').inputValue()).toBe('pinned nowhere');
    expect(await stack.connection.getBalance(sender.publicKey, 'confirmed')).toBe(before);
    expect(await listInbox(stack.connection, stack.programId, to.publicKey)).toHaveLength(0);
  }, 120_000);

  it('fits a 390 px phone on every trustless screen, with one h1 each', async () => {
    const holder = await stack.newMailbox();
    await kit.smtpSend('long.sender.name@remote.example', addr(holder), 'A'.repeat(120), 'B'.repeat(400));
    await kit.waitForInbox(holder.publicKey, 1);
    const page = await kit.newPage({ width: 390, height: 844 });
    await kit.goTrustless(page);
    await noSideScroll(page, 'setup (import)');
    await page.getByRole('tab', { name: 'Restore a backup' }).click();
    await noSideScroll(page, 'setup (restore)');
    await page.getByRole('tab', { name: 'Import a secret key' }).click();
    await kit.importKey(page, holder);
    await page.getByTestId('inbox-snippet').waitFor();
    await noSideScroll(page, 'inbox');
    await page.getByTestId('inbox-row').first().click();
    await page.getByTestId('mail-text').waitFor();
    await noSideScroll(page, 'reader');
    await page.getByRole('button', { name: 'Reply' }).click();
    await page.getByTestId('recipient-error').waitFor();
    await noSideScroll(page, 'reply to an outside address');

    await kit.navTo(page, 'Compose');
    await page.locator('input[name=to]').fill(stack.postageWallet.publicKey.toBase58());
    await page.getByTestId('recipient-resolved').waitFor();
    await noSideScroll(page, 'compose');
    await page.getByLabel('Subject').fill('first contact');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByTestId('prepay-card').waitFor();
    await kit.shot(page, '08b-held-draft-phone');
    await noSideScroll(page, 'held draft with the prepay card');

    await kit.navTo(page, 'Compose');
    await page.locator('input[name=to]').fill(stack.openWallet.publicKey.toBase58());
    await page.getByLabel('Amount in SOL').fill('0.001');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByTestId('send-confirm').waitFor();
    await kit.shot(page, '05c-send-confirm-phone');
    await noSideScroll(page, 'send confirmation');
    await page.getByRole('button', { name: 'Confirm and send' }).click();
    await page.getByTestId('receipt').waitFor();
    await kit.shot(page, '05d-receipt-phone');
    await noSideScroll(page, 'receipt');

    await kit.navTo(page, 'Balances');
    await page
      .getByLabel('Recipient (wallet address or alias)')
      .fill(stack.postageWallet.publicKey.toBase58());
    await page.getByRole('button', { name: 'Quote' }).click();
    await page.getByTestId('prepay-card').waitFor();
    await kit.shot(page, '11b-balances-phone');
    await noSideScroll(page, 'balances with a quote');
    await kit.navTo(page, 'Keys');
    await page.getByTestId('backup-panel').waitFor();
    await noSideScroll(page, 'keys');
    await kit.navTo(page, 'Settings');
    await noSideScroll(page, 'settings');
  }, 120_000);

  it('fits a 390 px phone on the server-mode screens', async () => {
    const owner = stack.openWallet;
    await kit.smtpSend('dee@remote.example', addr(owner), 'C'.repeat(100), 'D'.repeat(400));
    const page = await kit.newPage({ width: 390, height: 844 });
    await page.goto(stack.url);
    await kit.importKey(page, owner);
    await noSideScroll(page, 'login');
    await page.getByRole('button', { name: 'Log in with my wallet' }).click();
    await page.getByTestId('server-row').first().waitFor({ timeout: 30_000 });
    await noSideScroll(page, 'server mail');
    await page.getByTestId('server-row').first().click();
    await page.getByTestId('mail-subject').waitFor();
    await noSideScroll(page, 'server reader');
    for (const [nav, screen] of [
      ['Account', 'account'],
      ['Pin provider', 'pin provider'],
      ['Chain inbox', 'chain inbox'],
    ] as const) {
      await kit.navTo(page, nav);
      await page.locator('#view h1').waitFor();
      await noSideScroll(page, screen);
    }
  }, 120_000);
});
