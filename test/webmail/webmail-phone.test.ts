// The webmail on a phone (390×844) and on a laptop (1280×800): the main
// navigation folds behind a Menu button on the phone only (aria-expanded,
// aria-controls), server mode's ten views take no rows until it is opened,
// Send stays in view on the compose screen at both sizes, and the reply
// chip's Clear stays on one line. Screenshots: phone-* and a11y-*.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from '../support/webmail-axe.ts';
import { addr, webmailSuite } from '../support/webmail-page.ts';

const suite = webmailSuite();
const PHONE = { width: 390, height: 844 };
const WIDE = { width: 1280, height: 800 };

/** Whether the element's box lies wholly inside the viewport, as the page stands (no scrolling). */
async function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  }, selector);
}

const SEND = 'form.compose button[type="submit"]';

describe('webmail on a phone', () => {
  it('trustless: the Menu button folds the navigation; Send is in view in compose at both sizes; Clear does not wrap', async () => {
    const { stack, kit } = suite;
    const holder = await stack.newMailbox();
    const subject = 'Reply from a phone';
    await kit.smtpSend('ann@remote.example', addr(holder), subject, 'Hello.');
    await kit.waitForInbox(holder.publicKey, 1);

    const page = await kit.newPage(PHONE);
    await kit.goTrustless(page);
    await kit.importKey(page, holder);
    await page.getByTestId('inbox-row').filter({ hasText: subject }).waitFor();

    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    // Folded, the navigation is display: none (out of the accessibility tree): found by its id.
    const nav = page.locator('#main-nav');
    expect(await menu.isVisible()).toBe(true);
    expect(await menu.getAttribute('aria-controls')).toBe('main-nav');
    expect(await nav.getAttribute('aria-label')).toBe('Main');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    // The top bar is one row, the Menu button in it.
    const bar = await page.locator('header.top').boundingBox();
    const menuBox = await menu.boundingBox();
    expect(bar?.height ?? 999).toBeLessThan(70);
    expect((menuBox?.y ?? 999) + (menuBox?.height ?? 0)).toBeLessThanOrEqual(
      (bar?.y ?? 0) + (bar?.height ?? 0),
    );
    await kit.shot(page, 'phone-inbox-menu-closed');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await nav.isVisible()).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await kit.shot(page, 'phone-inbox-menu-open');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);

    // Choosing a view closes the menu again.
    await menu.click();
    await nav.getByRole('button', { name: 'Compose', exact: true }).click();
    await page.locator(SEND).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    expect(await inViewport(page, SEND)).toBe(true);
    await kit.shot(page, 'phone-compose');

    // A reply: the chip's Clear is one line, Send still in view.
    await kit.navTo(page, 'Inbox');
    await kit.openMessage(page, subject);
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    const chip = page.getByTestId('reply-chip');
    await chip.waitFor();
    const clear = chip.getByRole('button', { name: 'Clear', exact: true });
    const box = await clear.boundingBox();
    const lineHeight = await clear.evaluate((el) => Number.parseFloat(getComputedStyle(el).lineHeight));
    expect(box?.height ?? 0).toBeLessThan(lineHeight * 1.5);
    expect(await clear.evaluate((el) => getComputedStyle(el).whiteSpace)).toBe('nowrap');
    expect(await inViewport(page, SEND)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await kit.shot(page, 'phone-compose-reply');

    // On a laptop the navigation is the plain row and the Menu button is gone.
    await page.setViewportSize(WIDE);
    expect(await menu.isVisible()).toBe(false);
    expect(await nav.isVisible()).toBe(true);
    expect(await nav.getByRole('button', { name: 'Balances', exact: true }).isVisible()).toBe(true);
    await page.evaluate(() => window.scrollTo(0, 0));
    expect(await inViewport(page, SEND)).toBe(true);
    await kit.shot(page, 'a11y-compose-reply-wide');
    await kit.navTo(page, 'Compose');
    await page.locator(SEND).waitFor();
    expect(await inViewport(page, SEND)).toBe(true);
    await kit.shot(page, 'a11y-compose-wide');
  }, 180_000);

  it('server mode: the ten views take no rows on a phone until the menu opens; Send is in view in compose', async () => {
    const { stack, kit } = suite;
    const kp = await stack.newMailbox();
    const page = await kit.serverLogIn(kp);
    await page.setViewportSize(PHONE);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    const nav = page.locator('#main-nav');
    expect(await nav.isVisible()).toBe(false);
    // The top bar is one row: everything above the view is less than two buttons high.
    const viewTop = await page.locator('#view').evaluate((el) => el.getBoundingClientRect().top);
    expect(viewTop).toBeLessThan(100);
    await kit.shot(page, 'phone-server-mail');
    await menu.click();
    expect(await nav.isVisible()).toBe(true);
    expect(await nav.getByRole('button').count()).toBe(10);
    expect(await axeViolations(page)).toEqual([]);
    await kit.shot(page, 'phone-server-menu-open');
    await nav.getByRole('button', { name: 'Compose', exact: true }).click();
    await page.locator(SEND).waitFor();
    expect(await inViewport(page, SEND)).toBe(true);
    await kit.shot(page, 'phone-server-compose');

    await page.setViewportSize(WIDE);
    expect(await menu.isVisible()).toBe(false);
    expect(await inViewport(page, SEND)).toBe(true);
    await kit.shot(page, 'a11y-server-compose-wide');
  }, 180_000);
});
