// Server mode at par, in headless Chromium against its own `sealpost dev`
// stack (random ports, random Redis prefix): the Sent folder the server
// fills (seen in the webmail and over IMAP), replies through the server with
// In-Reply-To and References, a 402 answered per recipient with the prepay
// card while the others still get the message, and each Account form
// answering beside itself.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair, PublicKey } from '@solana/web3.js';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { AccountsRepo, FoldersRepo, MessagesRepo, type StoredMessage } from '../../src/core/store/index.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { DEV_DOMAIN } from '../../src/run/dev/dev-stack.ts';
import { launchChromium, startWebmailStack, type WebmailStack } from '../support/webmail-stack.ts';

const SHOTS = resolve(import.meta.dirname, '../../test-artifacts/webmail');
const PASS = 'correct horse battery';
const MAIL_PASSWORD = 'a mail password for IMAP';

let stack: WebmailStack;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  [stack, browser] = await Promise.all([startWebmailStack(), launchChromium()]);
}, 120_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await stack?.close();
}, 60_000);

const addr = (kp: Keypair) => `${kp.publicKey.toBase58()}@${DEV_DOMAIN}`;

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('pageerror', (e) => console.error('page error:', e.message));
  return page;
}

/** Imports the wallet into the page's vault, logs in to the server and creates the account. */
async function logIn(kp: Keypair): Promise<Page> {
  const page = await newPage();
  await page.goto(stack.url);
  await page
    .getByLabel('Secret key (Solana CLI keypair JSON or base58)')
    .fill(JSON.stringify(Array.from(kp.secretKey)));
  await page.getByLabel('New passphrase').fill(PASS);
  await page.getByLabel('Passphrase again').fill(PASS);
  await page.getByRole('button', { name: 'Import and unlock' }).click();
  await page.getByRole('button', { name: 'Log in with my wallet' }).click();
  await page.getByRole('button', { name: 'Create my account' }).click();
  await expect.poll(() => page.getByTestId('mode').textContent()).toBe('server');
  return page;
}

async function compose(page: Page, to: string, subject: string, body: string): Promise<void> {
  await page.getByRole('button', { name: 'Compose' }).click();
  await page.getByLabel('through the server').check();
  await page.locator('input[name=to]').fill(to);
  await page.getByLabel('Subject').fill(subject);
  await page.locator('textarea[name=body]').fill(body);
  await page.getByRole('button', { name: 'Send' }).click();
}

async function inboxCount(owner: PublicKey): Promise<number> {
  return (await listInbox(stack.connection, stack.programId, owner)).length;
}

async function waitForInbox(owner: PublicKey, count: number): Promise<void> {
  await expect.poll(() => inboxCount(owner), { timeout: 60_000, interval: 250 }).toBe(count);
}

/** The wallet's copies in its Sent folder, oldest first. */
async function sentCopies(kp: Keypair): Promise<StoredMessage[]> {
  const wallet = kp.publicKey.toBase58();
  const box = await new FoldersRepo(stack.store.db).getMailbox(wallet, 'Sent');
  if (!box) return [];
  return (await new MessagesRepo(stack.store.db).listForWallet(wallet)).filter((m) => m.mailboxId === box.id);
}

/** Opens a stored copy with the wallet's own key, as the page does. */
async function openCopy(kp: Keypair, m: StoredMessage): Promise<string> {
  const sealed = await new BlobStore(join(stack.config.store.data_dir, 'blobs')).read(m.blobKey);
  const opened = await openSealed(new Uint8Array(sealed), walletEncryptionKeypair(kp.secretKey));
  return new TextDecoder().decode(opened.raw);
}

function imapPort(): number {
  const c = stack.summary.components.find((x) => x.name === 'imap (imaps)');
  if (!c) throw new Error('the dev stack runs no IMAP listener');
  return Number(new URL(c.url).port);
}

describe('webmail server mode at par (headless Chromium, dev stack)', () => {
  it('Account forms answer beside themselves; mail sent through the server is in Sent, in the page and over IMAP', async () => {
    const owner = await stack.newMailbox();
    const bob = await stack.newMailbox();
    const page = await logIn(owner);

    // Account: each form's answer sits under that form, and only there.
    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const settings = page.getByTestId('settings-status');
    await settings.getByRole('alert').waitFor();
    expect(await settings.textContent()).toMatch(/time ?zone/i);
    // A password the server would refuse is refused before the wallet is asked for a step-up.
    const stepUps: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/auth/step-up') stepUps.push(r.method());
    });
    const password = page.getByTestId('password-status');
    await page.getByLabel('New mail password').fill('too short');
    await page.getByRole('button', { name: 'Set mail password' }).click();
    await password.getByRole('alert').waitFor();
    expect(await password.getByRole('alert').textContent()).toBe(
      'The mail password must be at least 10 characters (this one has 9). Nothing was signed or changed.',
    );
    expect(stepUps).toEqual([]);
    await page.getByLabel('New mail password').fill(MAIL_PASSWORD);
    await page.getByRole('button', { name: 'Set mail password' }).click();
    await password.getByText('Mail password set.', { exact: false }).waitFor();
    expect(stepUps.length).toBeGreaterThan(0);
    // The settings error stays with its form; the password's notice does not leak into it.
    expect(await settings.getByRole('alert').count()).toBe(1);
    expect(await password.getByRole('alert').count()).toBe(0);
    expect(await settings.textContent()).not.toContain('Mail password set');
    // Each status lies inside (or right after) its own form, not at the top of the page.
    expect(
      await page.evaluate(() => {
        const byId = (id: string) => document.querySelector(`[data-testid="${id}"]`);
        const form = (name: string) => document.querySelector(`form input[name="${name}"]`)?.closest('form');
        return [
          form('timezone')?.contains(byId('settings-status')),
          document
            .querySelector('input[autocomplete="new-password"]')
            ?.closest('form')
            ?.contains(byId('password-status')),
        ];
      }),
    ).toEqual([true, true]);
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    // POP3 delete-after-download keeps the chain record unless the holder says otherwise.
    const popCloses = page.locator('input[name="pop3-closes"]');
    expect(await popCloses.isChecked()).toBe(false);
    // Its sentence ends before the form's button starts: the button sits on a line of its own.
    const popLabel = await page.locator('label', { has: popCloses }).boundingBox();
    const saveButton = await page.getByRole('button', { name: 'Save settings' }).boundingBox();
    expect(saveButton?.y).toBeGreaterThanOrEqual((popLabel?.y ?? 0) + (popLabel?.height ?? 0));
    await popCloses.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByText('Settings saved.').waitFor();
    const account = await new AccountsRepo(stack.store.db).get(owner.publicKey.toBase58());
    expect(account?.pop3DeleClosesOnChain).toBe(true);
    expect(await settings.getByRole('alert').count()).toBe(0);
    await page.getByRole('button', { name: 'Prepare export' }).click();
    await page.getByTestId('export-status').getByText('Export ready.').waitFor();
    expect(await settings.textContent()).toContain('Settings saved.');
    await page.screenshot({ path: join(SHOTS, '30-account-form-status.png'), fullPage: true });

    // Compose through the server: the receipt names the recipient; Sent holds the copy.
    const before = await inboxCount(bob.publicKey);
    await compose(page, addr(bob), 'Kept in Sent', 'The server files a copy.');
    await page.getByTestId('server-receipt').waitFor();
    expect(await page.getByTestId('sent-to').textContent()).toBe(addr(bob));
    await waitForInbox(bob.publicKey, before + 1);
    const copies = await sentCopies(owner);
    expect(copies).toHaveLength(1);
    expect(copies[0]?.flags).toEqual(['\\Seen']);

    await page.getByRole('button', { name: 'Back to mail' }).click();
    await page.getByRole('navigation', { name: 'Folders' }).getByRole('button', { name: /^Sent/ }).click();
    const row = page.getByTestId('server-row').filter({ hasText: 'Kept in Sent' });
    await row.waitFor();
    expect(await row.textContent()).toContain(`To: ${addr(bob)}`);
    await page.screenshot({ path: join(SHOTS, '31-sent-folder.png'), fullPage: true });
    await row.click();
    await expect.poll(() => page.getByTestId('mail-subject').textContent()).toBe('Kept in Sent');

    // Over IMAP with the mail password: Sent is the \Sent folder and holds the same message.
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: imapPort(),
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user: addr(owner), pass: MAIL_PASSWORD },
      logger: false,
      disableAutoIdle: true,
    });
    await client.connect();
    try {
      const sent = (await client.list()).find((b) => b.path === 'Sent');
      expect(sent?.specialUse).toBe('\\Sent');
      await client.mailboxOpen('Sent');
      const messages = [];
      for await (const m of client.fetch('1:*', { uid: true, flags: true, source: true })) messages.push(m);
      expect(messages).toHaveLength(1);
      const source = messages[0]?.source?.toString('utf8') ?? '';
      expect(source).toContain('Subject: Kept in Sent');
      expect(source).toContain(`To: ${addr(bob)}`);
      expect(source).toContain('The server files a copy.');
      expect([...(messages[0]?.flags ?? [])]).toContain('\\Seen');
    } finally {
      await client.logout().catch(() => client.close());
    }
  }, 180_000);

  it('a reply through the server is titled Reply, says Re: once, and carries In-Reply-To and References', async () => {
    const owner = await stack.newMailbox();
    const page = await logIn(owner);
    // A message from outside the chain, itself part of a thread.
    const parentId = `parent.${Date.now()}@remote.example`;
    const raw =
      `From: Carol <carol@remote.example>\r\nTo: ${addr(owner)}\r\nSubject: Re: Stamps for the newsletter\r\n` +
      `Message-ID: <${parentId}>\r\nReferences: <root.1@remote.example>\r\nIn-Reply-To: <root.1@remote.example>\r\n` +
      'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHow many do you need?\r\n';
    // The envelope comes from a wallet here (no SPF lookup for an outside domain); the header From is outside.
    const relay = await stack.newMailbox();
    const stored = new MessagesRepo(stack.store.db);
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: stack.mxPort, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: addr(relay), to: [addr(owner)] }, raw });
    await expect
      .poll(async () => (await stored.listForWallet(owner.publicKey.toBase58())).length, { timeout: 60_000 })
      .toBe(1);
    // Away and back: the Mail view lists folders when it opens.
    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Mail', exact: true }).click();
    const row = page.getByTestId('server-row').filter({ hasText: 'Stamps for the newsletter' });
    await row.waitFor();
    await row.click();
    await page.getByRole('button', { name: 'Reply' }).click();
    await expect.poll(() => page.locator('#compose-title').textContent()).toBe('Reply');
    expect(await page.getByLabel('Subject').inputValue()).toBe('Re: Stamps for the newsletter');
    expect(await page.locator('input[name=to]').inputValue()).toBe('carol@remote.example');
    expect(await page.getByLabel('through the server').isChecked()).toBe(true);
    await page.locator('textarea[name=body]').fill('Ten, please.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('server-receipt').waitFor();

    // The message as it left, kept in Sent: threaded to the parent and its thread.
    const [copy] = await sentCopies(owner);
    expect(copy).toBeDefined();
    const text = await openCopy(owner, copy as StoredMessage);
    expect(text).toContain(`\r\nIn-Reply-To: <${parentId}>\r\n`);
    expect(text).toContain(`\r\nReferences: <root.1@remote.example> <${parentId}>\r\n`);
    expect(text).toContain('\r\nSubject: Re: Stamps for the newsletter\r\n');
    expect(text).not.toContain('Re: Re:');
  }, 150_000);

  it('a 402 holds only the postage-charging wallet: the open one gets the message, the held one a prepay card, then exactly one copy', async () => {
    const owner = await stack.newMailbox({ fund: 20 });
    const open = await stack.newMailbox();
    const gated = stack.postageWallet;
    const page = await logIn(owner);
    const openBefore = await inboxCount(open.publicKey);
    const gatedBefore = await inboxCount(gated.publicKey);

    await compose(page, `${addr(open)}, ${addr(gated)}`, 'Two recipients, one asks postage', 'Hello both.');
    await page.getByTestId('server-receipt').waitFor();
    // The page says exactly who got it and who is held.
    expect(await page.getByTestId('server-receipt-title').textContent()).toBe(
      'Sent to some recipients; others wait for postage',
    );
    expect(await page.getByTestId('sent-to').textContent()).toBe(addr(open));
    expect(await page.getByTestId('held-to').textContent()).toBe(addr(gated));
    const held = page.getByTestId('held-recipient');
    await expect.poll(() => held.count()).toBe(1);
    await held.getByTestId('prepay-card').waitFor();
    expect(await held.getByTestId('prepay-wallet').getAttribute('title')).toBe(gated.publicKey.toBase58());
    expect(await page.getByTestId('server-receipt').textContent()).not.toMatch(/\d{5,} lamports/);
    await page.screenshot({ path: join(SHOTS, '32-server-postage-held.png'), fullPage: true });
    // At a phone's width the receipt and the card wrap instead of scrolling sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(SHOTS, '32-server-postage-held-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    await waitForInbox(open.publicKey, openBefore + 1);
    // The held recipient got nothing meanwhile.
    await sleep(1500);
    expect(await inboxCount(gated.publicKey)).toBe(gatedBefore);
    const sentAfterFirst = await sentCopies(owner);
    expect(sentAfterFirst).toHaveLength(1);
    const firstText = await openCopy(owner, sentAfterFirst[0] as StoredMessage);
    expect(firstText).toContain('Subject: Two recipients, one asks postage');

    // Buy a stamp: that recipient's copy goes on chain, once.
    await held.getByRole('button', { name: 'Buy 1 stamp and send' }).click();
    await held.getByTestId('held-receipt').waitFor({ timeout: 60_000 });
    await waitForInbox(gated.publicKey, gatedBefore + 1);
    const email = await held.getByTestId('held-email').textContent();
    const inbox = await listInbox(stack.connection, stack.programId, gated.publicKey);
    expect(inbox[0]?.address.toBase58()).toBe(email);
    expect(inbox[0]?.email.sender.toBase58()).toBe(owner.publicKey.toBase58());
    // The receipt now says everyone got it, and how.
    await expect
      .poll(() => page.getByTestId('server-receipt-title').textContent())
      .toBe('Sent to every recipient');
    expect(await page.getByTestId('sent-on-chain').textContent()).toBe(addr(gated));
    expect(await page.getByTestId('held-to').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, '33-server-postage-sent.png'), fullPage: true });

    // Nothing went twice: one copy each, no second server send.
    await sleep(3000);
    expect(await inboxCount(open.publicKey)).toBe(openBefore + 1);
    expect(await inboxCount(gated.publicKey)).toBe(gatedBefore + 1);
    expect(await sentCopies(owner)).toHaveLength(1);
    expect(await held.getByRole('button', { name: /Buy .* and send/ }).count()).toBe(0);
  }, 180_000);
});
