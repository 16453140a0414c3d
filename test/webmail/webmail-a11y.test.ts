// Accessibility of the webmail, walked with the keyboard only (after the
// connection switch to trustless mode): the setup tabs (WAI-ARIA tabs with
// arrow keys), a key import, the inbox, a message, the delete confirmation
// sheet (focus trapped inside, the page behind inert, focus back on the
// opener after Escape and Cancel, on the view's heading after the delete),
// and fields whose hint is their description, not part of their name.
// axe-core reports no WCAG 2.x A/AA violation on each screen walked.
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from '../support/webmail-axe.ts';
import { addr, keyJson, PASS, webmailSuite } from '../support/webmail-page.ts';

const suite = webmailSuite();

const isFocused = (loc: Locator) => loc.evaluate((el) => el === document.activeElement);

/** Presses Tab until `loc` has focus. */
async function tabTo(page: Page, loc: Locator, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await isFocused(loc)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${loc}`);
}

/** The text of the elements `loc` names in aria-describedby. */
const description = (loc: Locator) =>
  loc.evaluate((el) =>
    (el.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );

const focusInside = (page: Page, testId: string) =>
  page.evaluate(
    (id) => document.querySelector(`[data-testid="${id}"]`)?.contains(document.activeElement) ?? false,
    testId,
  );

const activeTag = (page: Page) => page.evaluate(() => document.activeElement?.tagName ?? '');

async function noAxeViolations(page: Page) {
  expect(await axeViolations(page)).toEqual([]);
}

describe('webmail accessibility, keyboard only', () => {
  it('setup tabs with arrow keys, key import, inbox, a message, a trapped confirmation sheet, compose fields', async () => {
    const { stack, kit } = suite;
    const owner = await stack.newMailbox();
    const subject = 'Keyboard only';
    await kit.smtpSend('ann@remote.example', addr(owner), subject, 'Read with the keyboard.');
    await kit.waitForInbox(owner.publicKey, 1);

    const page = await kit.newPage({ width: 1280, height: 800 });
    await kit.goTrustless(page);

    // The setup choice: real tabs, one in the Tab order, moved with the arrow keys.
    const tab = (name: string) => page.getByRole('tab', { name, exact: true });
    const panel = page.getByRole('tabpanel');
    const selected = async (name: string) => {
      expect(await tab(name).getAttribute('aria-selected')).toBe('true');
      expect(await isFocused(tab(name))).toBe(true);
      expect(await panel.getAttribute('aria-labelledby')).toBe(await tab(name).getAttribute('id'));
      expect(await page.locator('[role="tab"][tabindex="0"]').count()).toBe(1);
      expect(await tab(name).getAttribute('tabindex')).toBe('0');
    };
    expect(await page.getByRole('tablist').getAttribute('aria-label')).toBe('How to set up');
    expect(await tab('Import a secret key').getAttribute('aria-controls')).toBe(
      await panel.getAttribute('id'),
    );
    await tabTo(page, tab('Import a secret key'));
    await page.keyboard.press('ArrowRight');
    await selected('Connect a browser wallet');
    await page.keyboard.press('End');
    await selected('Restore a backup');
    // The backup file's hint describes the field; its name is the label alone.
    const backupFile = page.getByLabel('Backup file', { exact: true });
    expect(await backupFile.count()).toBe(1);
    expect(await description(backupFile)).toContain('The sealpost-keys-');
    await page.keyboard.press('Home');
    await selected('Import a secret key');
    await page.keyboard.press('ArrowLeft');
    await selected('Restore a backup');
    await page.keyboard.press('ArrowRight');
    await selected('Import a secret key');
    const keypairFile = page.getByLabel('Keypair file', { exact: true });
    expect(await keypairFile.count()).toBe(1);
    expect(await description(keypairFile)).toBe(
      'A Solana CLI keypair file (id.json); it is read in this page only',
    );
    await noAxeViolations(page);
    await kit.shot(page, 'a11y-setup-tabs');

    // Import the key: Tab from the tab into its panel's fields, type, Enter.
    await tabTo(page, page.getByLabel('Secret key (Solana CLI keypair JSON or base58)', { exact: true }));
    await page.keyboard.insertText(keyJson(owner));
    await tabTo(page, page.getByLabel('New passphrase', { exact: true }));
    await page.keyboard.type(PASS);
    await tabTo(page, page.getByLabel('Passphrase again', { exact: true }));
    await page.keyboard.type(PASS);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('mode').textContent()).toBe('trustless');

    // The inbox: its heading has focus; Tab reaches the row, Enter opens it.
    const row = page.getByTestId('inbox-row').filter({ hasText: subject });
    await row.waitFor();
    await expect.poll(() => activeTag(page)).toBe('H1');
    await noAxeViolations(page);
    await tabTo(page, row);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('mail-subject').textContent()).toBe(subject);
    await noAxeViolations(page);

    // The delete confirmation: a modal sheet.
    const del = page.getByRole('button', { name: 'Delete', exact: true });
    await tabTo(page, del);
    await page.keyboard.press('Enter');
    const sheet = page.getByTestId('action-confirm');
    await sheet.waitFor();
    expect(await sheet.getAttribute('aria-modal')).toBe('true');
    await expect.poll(() => focusInside(page, 'action-confirm')).toBe(true);
    // Tab and Shift+Tab cycle inside it.
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press('Tab');
      expect(await focusInside(page, 'action-confirm')).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Shift+Tab');
      expect(await focusInside(page, 'action-confirm')).toBe(true);
    }
    // The page behind is inert: the top bar, the navigation, the message's own buttons.
    const inert = () =>
      page.evaluate(() => ({
        header: document.querySelector('header.top')?.closest('[inert]') !== null,
        nav: document.querySelector('nav.main-nav')?.closest('[inert]') !== null,
        delete: document.querySelector('[data-shortcut="e #"]')?.closest('[inert]') !== null,
        sheet: document.querySelector('[data-testid="action-confirm"]')?.closest('[inert]') !== null,
      }));
    expect(await inert()).toEqual({ header: true, nav: true, delete: true, sheet: false });
    await noAxeViolations(page);
    await kit.shot(page, 'a11y-confirm-sheet');
    // Escape closes it; focus is back on Delete and nothing is inert any more.
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached' });
    expect(await isFocused(del)).toBe(true);
    expect(await page.locator('[inert]').count()).toBe(0);

    // Cancel, reached with Tab inside the sheet, does the same.
    await page.keyboard.press('Enter');
    await sheet.waitFor();
    await tabTo(page, sheet.getByRole('button', { name: 'Cancel', exact: true }), 10);
    await page.keyboard.press('Enter');
    await sheet.waitFor({ state: 'detached' });
    expect(await isFocused(del)).toBe(true);

    // Confirmed, the message is gone with its view: focus goes to the inbox's heading, not the body.
    await page.keyboard.press('Enter');
    await sheet.waitFor();
    const confirm = sheet.getByRole('button', { name: 'Delete the message', exact: true });
    await expect.poll(() => isFocused(confirm)).toBe(true);
    await page.keyboard.press('Enter');
    await sheet.waitFor({ state: 'detached', timeout: 60_000 });
    await expect.poll(() => page.locator('#view h1').textContent()).toContain('Inbox');
    await expect.poll(() => activeTag(page)).toBe('H1');
    expect(await page.locator('[inert]').count()).toBe(0);

    // Compose (the c key): the hinted fields are named by their label only.
    await page.keyboard.press('c');
    const to = page.getByRole('textbox', { name: 'To', exact: true });
    await to.waitFor();
    expect(await description(to)).toContain('A wallet address, an alias');
    const amount = page.getByRole('textbox', { name: 'Amount in SOL', exact: true });
    expect(await description(amount)).toBe('Blank for a plain send');
    const days = page.getByRole('spinbutton', { name: 'Claim window (days)', exact: true });
    expect(await description(days)).toContain('Blank for 7');
    const subjectField = page.getByRole('textbox', { name: 'Subject', exact: true });
    expect(await subjectField.getAttribute('aria-describedby')).toBeNull();
    await noAxeViolations(page);
    await kit.shot(page, 'a11y-compose');
  }, 180_000);

  it('server mode: Search, Time zone, New mail password and the pin URL carry their hints as descriptions', async () => {
    const { stack, kit } = suite;
    const kp = await stack.newMailbox();
    const page = await kit.serverLogIn(kp);
    const search = page.getByRole('searchbox', { name: 'Search', exact: true });
    await search.waitFor();
    expect(await description(search)).toContain('opened in this page');
    await noAxeViolations(page);

    await page.getByRole('button', { name: 'Account', exact: true }).click();
    const tz = page.getByRole('textbox', { name: 'Time zone', exact: true });
    await tz.waitFor();
    expect(await description(tz)).toBe('An IANA name such as Europe/Berlin; blank means UTC');
    const pw = page.getByLabel('New mail password', { exact: true });
    expect(await description(pw)).toMatch(/^\d+ to \d+ characters$/);
    const pop = page.getByRole('checkbox', {
      name: 'A POP3 delete also closes the message on chain',
      exact: true,
    });
    expect(await description(pop)).toContain("only the server's copy");
    await noAxeViolations(page);
    await kit.shot(page, 'a11y-account');

    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const pin = page.getByRole('textbox', { name: 'IPFS pin service URL', exact: true });
    await pin.waitFor();
    expect(await description(pin)).toBe('Only sending needs it');
    await noAxeViolations(page);
  }, 180_000);
});
