// Page helpers shared by the webmail browser tests: a fresh context per
// page, the trustless switch, key import, SMTP delivery to the stack's MX,
// waiting for the chain inbox, and screenshots.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Keypair, PublicKey } from '@solana/web3.js';
import nodemailer from 'nodemailer';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { DEV_DOMAIN } from '../../src/run/dev/dev-stack.ts';
import { launchChromium, startWebmailStack, type WebmailStack } from './webmail-stack.ts';

export const SHOTS = resolve(import.meta.dirname, '../../test-artifacts/webmail');
export const PASS = 'correct horse battery';

export const addr = (kp: Keypair) => `${kp.publicKey.toBase58()}@${DEV_DOMAIN}`;
export const keyJson = (kp: Keypair) => JSON.stringify(Array.from(kp.secretKey));

export interface PageKit {
  newPage(opts?: { width?: number; height?: number }): Promise<Page>;
  shot(page: Page, name: string): Promise<void>;
  /** Screenshots at 1280×800 (`name-wide`) and 390×844 (`name-phone`), then back to the page's own size. */
  shotBoth(page: Page, name: string): Promise<void>;
  goTrustless(page: Page, overrides?: { rpcUrl?: string }): Promise<void>;
  importKey(page: Page, kp: Keypair): Promise<void>;
  smtpSend(from: string, to: string, subject: string, text: string, headerFrom?: string): Promise<unknown>;
  waitForInbox(owner: PublicKey, count: number): Promise<void>;
  openMessage(page: Page, subject: string): Promise<void>;
  /** Opens a view from the main navigation, through the Menu button where the screen is narrow. */
  navTo(page: Page, label: string): Promise<void>;
  /** A new page in server mode: the wallet imported, logged in, its account created. */
  serverLogIn(kp: Keypair): Promise<Page>;
  /** Confirms the pending on-chain send on the confirmation sheet. */
  confirmSend(page: Page): Promise<void>;
  closeAll(): Promise<void>;
}

export function pageKit(stack: WebmailStack, browser: Browser): PageKit {
  const contexts: BrowserContext[] = [];
  mkdirSync(SHOTS, { recursive: true });
  return {
    async newPage(opts = {}) {
      const context = await browser.newContext({
        viewport: { width: opts.width ?? 1100, height: opts.height ?? 850 },
      });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      page.on('pageerror', (e) => console.error('page error:', e.message));
      return page;
    },
    async shot(page, name) {
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    },
    async shotBoth(page, name) {
      const size = page.viewportSize();
      for (const [suffix, width, height] of [
        ['wide', 1280, 800],
        ['phone', 390, 844],
      ] as const) {
        await page.setViewportSize({ width, height });
        await page.screenshot({ path: join(SHOTS, `${name}-${suffix}.png`) });
      }
      if (size) await page.setViewportSize(size);
    },
    async goTrustless(page, overrides = {}) {
      await page.goto(stack.url);
      await page.getByRole('button', { name: 'Connection settings' }).click();
      await page.getByTestId('api-trustless').check();
      if (overrides.rpcUrl) await page.getByLabel('Chain RPC URL').fill(overrides.rpcUrl);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      await page.reload();
    },
    async importKey(page, kp) {
      await page.getByLabel('Secret key (Solana CLI keypair JSON or base58)').fill(keyJson(kp));
      await page.getByLabel('New passphrase').fill(PASS);
      await page.getByLabel('Passphrase again').fill(PASS);
      await page.getByRole('button', { name: 'Import and unlock' }).click();
    },
    smtpSend(from, to, subject, text, headerFrom = from) {
      const raw =
        `From: ${headerFrom}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${Date.now()}.${Math.random()}@remote.example>\r\n` +
        `MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${text}\r\n`;
      return nodemailer
        .createTransport({ host: '127.0.0.1', port: stack.mxPort, secure: false, ignoreTLS: true })
        .sendMail({ envelope: { from, to: [to] }, raw });
    },
    async waitForInbox(owner, count) {
      const deadline = Date.now() + 30_000;
      while ((await listInbox(stack.connection, stack.programId, owner)).length < count) {
        if (Date.now() > deadline) throw new Error(`inbox of ${owner.toBase58()} did not reach ${count}`);
        await sleep(150);
      }
    },
    async openMessage(page, subject) {
      const row = page.getByTestId('inbox-row').filter({ hasText: subject });
      await row.waitFor();
      await row.click();
      await expect.poll(() => page.getByTestId('mail-subject').textContent()).toBe(subject);
    },
    async navTo(page, label) {
      await openMainNav(page);
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('button', { name: label, exact: true })
        .click();
    },
    async serverLogIn(kp) {
      const page = await this.newPage();
      await page.goto(stack.url);
      await this.importKey(page, kp);
      await page.getByRole('button', { name: 'Log in with my wallet' }).click();
      await page.getByRole('button', { name: 'Create my account' }).click();
      await expect.poll(() => page.getByTestId('mode').textContent()).toBe('server');
      return page;
    },
    async confirmSend(page) {
      await page.getByTestId('send-confirm').waitFor();
      await page.getByRole('button', { name: 'Confirm and send' }).click();
    },
    async closeAll() {
      for (const c of contexts.splice(0)) await c.close().catch(() => {});
    },
  };
}

/** On a narrow screen the main navigation folds behind the Menu button: opens it (a no-op where it is shown). */
export async function openMainNav(page: Page): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu', exact: true });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
}

export interface WebmailSuite {
  stack: WebmailStack;
  browser: Browser;
  kit: PageKit;
}

/** A test file's own dev stack, Chromium and page kit: started in beforeAll, closed in afterAll. */
export function webmailSuite(opts: { clock?: () => number } = {}): WebmailSuite {
  const suite = {} as WebmailSuite;
  beforeAll(async () => {
    [suite.stack, suite.browser] = await Promise.all([startWebmailStack(opts), launchChromium()]);
    suite.kit = pageKit(suite.stack, suite.browser);
  }, 120_000);
  afterAll(async () => {
    await suite.kit?.closeAll();
    await suite.browser?.close();
    await suite.stack?.close();
  }, 60_000);
  return suite;
}
