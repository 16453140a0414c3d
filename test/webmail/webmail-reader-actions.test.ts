// Reader actions in headless Chromium against one `sealpost dev` stack:
// trustless Delete (DeleteMail on chain after the rent sheet; Cancel spends
// nothing) and Mark unread; server mode Delete to Trash and for good,
// Move to Junk, Mark unread (checked over the API too), Forward inline and
// as an attachment through the server, Forward of a body that never
// opened; drafts on the server and encrypted in the browser; and the
// keyboard shortcuts with their help overlay.
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { type Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { getEmailAt, listInbox } from '../../chain/client/index.ts';
import { BlobStore } from '../../src/core/blobs/blob-store.ts';
import { MessagesRepo, type StoredMessage } from '../../src/core/store/index.ts';
import { openSealed, walletEncryptionKeypair } from '../../src/mail/seal/index.ts';
import { addr, PASS, webmailSuite } from '../support/webmail-page.ts';

const suite = webmailSuite();

interface ApiMessage {
  id: string;
  flags: string[];
}

/** A bearer token for `kp` from the stack's account API (challenge, signed nonce, login). */
async function apiToken(kp: Keypair): Promise<string> {
  const post = async (path: string, json: unknown) => {
    const res = await fetch(suite.stack.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const wallet = kp.publicKey.toBase58();
  const { nonce } = await post('/v1/auth/challenge', { wallet });
  const signature = bs58.encode(
    ed25519.sign(new TextEncoder().encode(String(nonce)), kp.secretKey.subarray(0, 32)),
  );
  return (await post('/v1/auth/login', { wallet, signature })).token as string;
}

async function apiMessages(token: string, mailbox: string): Promise<ApiMessage[]> {
  const res = await fetch(`${suite.stack.url}/v1/mail/messages?mailbox=${encodeURIComponent(mailbox)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`messages ${mailbox}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { messages: ApiMessage[] }).messages;
}

/** The stored copies delivered to a wallet, opened with its own key as the page does. */
async function openedCopies(kp: Keypair): Promise<string[]> {
  const blobs = new BlobStore(join(suite.stack.config.store.data_dir, 'blobs'));
  const rows: StoredMessage[] = await new MessagesRepo(suite.stack.store.db).listForWallet(
    kp.publicKey.toBase58(),
  );
  const out: string[] = [];
  for (const m of rows) {
    const sealed = await blobs.read(m.blobKey);
    const opened = await openSealed(new Uint8Array(sealed), walletEncryptionKeypair(kp.secretKey));
    out.push(new TextDecoder().decode(opened.raw));
  }
  return out;
}

async function storedCount(kp: Keypair): Promise<number> {
  return (await new MessagesRepo(suite.stack.store.db).listForWallet(kp.publicKey.toBase58())).length;
}

const balance = (k: PublicKey) => suite.stack.connection.getBalance(k, 'confirmed');

async function openFolder(page: Page, name: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Folders' });
  await nav.getByRole('button', { name: new RegExp(`^${name}`) }).click();
  await expect.poll(() => nav.locator('[aria-current="true"]').textContent()).toMatch(new RegExp(`^${name}`));
}

const serverRow = (page: Page, subject: string) =>
  page.getByTestId('server-row').filter({ hasText: subject });

async function toMail(page: Page): Promise<void> {
  // Away and back: the Mail view lists the folders when it opens.
  await page.getByRole('button', { name: 'Account' }).click();
  await page.getByRole('button', { name: 'Mail', exact: true }).click();
  await page.getByRole('navigation', { name: 'Folders' }).waitFor();
}

describe('webmail reader actions (headless Chromium, dev stack)', () => {
  // ---- trustless mode: one delivered message, one page ----
  const T_SUBJECT = 'Trustless reader actions';
  const T_BODY = 'Mark me unread, then delete me.';
  let bob: Keypair;
  let tPage: Page;
  let emailAddress: string;

  it('trustless: Mark unread shows the row unread again and raises the unread count', async () => {
    const { stack, kit } = suite;
    bob = await stack.newMailbox();
    await kit.smtpSend(addr(stack.openWallet), addr(bob), T_SUBJECT, T_BODY);
    await kit.waitForInbox(bob.publicKey, 1);
    const [entry] = await listInbox(stack.connection, stack.programId, bob.publicKey);
    emailAddress = String(entry?.address.toBase58());

    tPage = await kit.newPage();
    await kit.goTrustless(tPage);
    await kit.importKey(tPage, bob);
    const row = tPage.getByTestId('inbox-row').filter({ hasText: T_SUBJECT });
    await row.waitFor();
    expect(await row.getAttribute('data-unread')).toBe('true');
    await expect.poll(() => tPage.getByTestId('unread-count').textContent()).toBe('1 unread');
    await kit.shotBoth(tPage, 'reader-actions-inbox-unread');

    await kit.openMessage(tPage, T_SUBJECT);
    await kit.shotBoth(tPage, 'reader-actions-toolbar');
    await tPage.getByRole('button', { name: '← Inbox' }).click();
    await expect.poll(() => row.getAttribute('data-unread')).toBe('false');
    await expect.poll(() => tPage.getByTestId('unread-count').textContent()).toBe('');

    await kit.openMessage(tPage, T_SUBJECT);
    await tPage.getByRole('button', { name: 'Mark unread' }).click();
    await expect.poll(() => row.getAttribute('data-unread')).toBe('true');
    await expect.poll(() => tPage.getByTestId('unread-count').textContent()).toBe('1 unread');
  }, 120_000);

  it('shortcuts: ? opens the help dialog, Escape closes it, c composes, c typed in a field does not navigate', async () => {
    await tPage.getByRole('button', { name: 'Inbox', exact: true }).click();
    await tPage.getByTestId('unread-count').waitFor({ state: 'attached' });
    await tPage.locator('body').click({ position: { x: 1, y: 1 } });
    await tPage.keyboard.press('?');
    const help = tPage.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    const helpText = (await help.textContent()) ?? '';
    expect(helpText).toContain('Compose a new message');
    expect(helpText).toContain('Show this help');
    const keys = await help.locator('kbd').allTextContents();
    for (const k of ['c', 'r', 'f', 'e', '#', 'u', '/', 'j', 'k', 'Escape', '?']) expect(keys).toContain(k);
    await suite.kit.shotBoth(tPage, 'reader-actions-help');
    await tPage.keyboard.press('Escape');
    await expect.poll(() => help.count()).toBe(0);

    // c inside the search field is a letter, not a shortcut.
    const search = tPage.locator('#inbox-search');
    await search.click();
    await tPage.keyboard.type('c');
    expect(await search.inputValue()).toBe('c');
    expect(await tPage.locator('#compose-title').count()).toBe(0);
    await search.fill('');
    await search.blur();

    await tPage.keyboard.press('c');
    await expect.poll(() => tPage.locator('#compose-title').textContent()).toBe('New message');
    // And c typed into the subject stays in the subject.
    await tPage.getByLabel('Subject').click();
    await tPage.keyboard.type('abc');
    expect(await tPage.getByLabel('Subject').inputValue()).toBe('abc');
    expect(await tPage.locator('#compose-title').textContent()).toBe('New message');
  }, 60_000);

  it('trustless: Cancel on the delete sheet spends nothing; Delete closes the Email account and refunds its rent to the rent payer', async () => {
    const { stack, kit } = suite;
    const email = await getEmailAt(stack.connection, stack.programId, emailAddress);
    expect(email).not.toBeNull();
    const rentPayer = email?.rentPayer as PublicKey;
    // Mail relayed over SMTP is paid for by the server, not by the recipient.
    expect(rentPayer.equals(bob.publicKey)).toBe(false);
    const accountLamports = await balance(new PublicKey(emailAddress));
    expect(accountLamports).toBeGreaterThan(0);
    const rentSol = (accountLamports - Number(email?.bountyLamports ?? 0n)) / LAMPORTS_PER_SOL;
    const payerBefore = await balance(rentPayer);
    const bobBefore = await balance(bob.publicKey);

    await tPage.getByRole('button', { name: 'Inbox', exact: true }).click();
    await kit.openMessage(tPage, T_SUBJECT);
    const sheet = tPage.getByTestId('action-confirm');
    // Cancel first: nothing signed, nothing moves.
    await tPage.getByRole('button', { name: 'Delete', exact: true }).click();
    await sheet.waitFor();
    const text = (await sheet.textContent()) ?? '';
    const m = /its rent, ([\d.]+) SOL, goes back to (you|the wallet that paid for it \((\S+)…(\S+)\))/.exec(
      text,
    );
    expect(m, text).not.toBeNull();
    expect(Number(m?.[1])).toBeCloseTo(rentSol, 6);
    await kit.shotBoth(tPage, 'reader-actions-delete-sheet');
    // The sheet names the rent's recipient: the relayer that paid for the SMTP delivery.
    const p = rentPayer.toBase58();
    expect([m?.[3], m?.[4]]).toEqual([p.slice(0, 4), p.slice(-4)]);
    await sheet.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => sheet.count()).toBe(0);
    expect(await stack.connection.getAccountInfo(new PublicKey(emailAddress), 'confirmed')).not.toBeNull();
    expect(await balance(rentPayer)).toBe(payerBefore);
    expect(await balance(bob.publicKey)).toBe(bobBefore);

    // Now for real.
    await tPage.getByRole('button', { name: 'Delete', exact: true }).click();
    await sheet.getByRole('button', { name: 'Delete the message' }).click();
    await expect
      .poll(() => stack.connection.getAccountInfo(new PublicKey(emailAddress), 'confirmed'), {
        timeout: 30_000,
      })
      .toBeNull();
    // Exactly the account's lamports went to the rent payer; the signer paid the fee.
    expect((await balance(rentPayer)) - payerBefore).toBe(accountLamports);
    expect(await balance(bob.publicKey)).toBeLessThan(bobBefore);
    // Back on the inbox, without the row.
    await tPage.getByTestId('unread-count').waitFor({ state: 'attached' });
    await expect.poll(() => tPage.getByTestId('inbox-row').filter({ hasText: T_SUBJECT }).count()).toBe(0);
    expect(await listInbox(stack.connection, stack.programId, bob.publicKey)).toHaveLength(0);
  }, 120_000);

  it('trustless: Save draft keeps no plaintext in localStorage; after reload and unlock the draft is listed and reopens', async () => {
    const subject = 'Local draft subject zebra-7731';
    const body = 'Local draft body quokka-5519, never in the clear.';
    await tPage.getByRole('button', { name: 'Compose' }).click();
    await tPage.getByLabel('Subject').fill(subject);
    await tPage.locator('textarea[name=body]').fill(body);
    await tPage.getByRole('button', { name: 'Save draft' }).click();
    await expect
      .poll(() => tPage.getByTestId('draft-status').textContent())
      .toBe('Draft saved in this browser, encrypted with your passphrase.');
    await suite.kit.shotBoth(tPage, 'reader-actions-draft-saved');
    const storage = await tPage.evaluate(() => {
      const out: Record<string, string> = {};
      for (let i = 0; i < localStorage.length; i++) {
        const k = localStorage.key(i) as string;
        out[k] = localStorage.getItem(k) ?? '';
      }
      return out;
    });
    const draftKey = `sealpost.drafts.v1.${bob.publicKey.toBase58()}`;
    expect(Object.keys(storage)).toContain(draftKey);
    for (const [k, v] of Object.entries(storage)) {
      for (const needle of ['zebra-7731', 'quokka-5519']) {
        expect(v.includes(needle), `localStorage ${k} holds ${needle}`).toBe(false);
        expect(k.includes(needle)).toBe(false);
      }
    }

    await tPage.reload();
    await tPage.getByLabel('Passphrase', { exact: true }).fill(PASS);
    await tPage.getByRole('button', { name: 'Unlock' }).click();
    await tPage.getByTestId('unread-count').waitFor({ state: 'attached' });
    await tPage.getByRole('button', { name: 'Compose' }).click();
    const listed = tPage.getByTestId('local-draft').filter({ hasText: subject });
    await listed.waitFor();
    await listed.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => tPage.getByLabel('Subject').inputValue()).toBe(subject);
    expect(await tPage.locator('textarea[name=body]').inputValue()).toBe(body);
  }, 90_000);

  // ---- server mode: one delivered message walked through every action ----
  const S_SUBJECT = 'Server reader actions';
  const S_BODY = 'Forward me, mark me unread, junk me, trash me.';
  let sal: Keypair;
  let rita: Keypair;
  let sPage: Page;
  let token: string;

  it('server mode: Forward inline and as an attachment arrive at a second recipient through the server', async () => {
    const { stack, kit } = suite;
    [sal, rita] = await Promise.all([stack.newMailbox(), stack.newMailbox()]);
    sPage = await kit.serverLogIn(sal);
    token = await apiToken(sal);
    await kit.smtpSend(addr(stack.openWallet), addr(sal), S_SUBJECT, S_BODY);
    await expect.poll(() => storedCount(sal), { timeout: 60_000 }).toBe(1);
    const ritaBefore = await storedCount(rita);

    for (const [button, n] of [
      ['Forward', 1],
      ['Forward as attachment', 2],
    ] as const) {
      await toMail(sPage);
      await openFolder(sPage, 'INBOX');
      await serverRow(sPage, S_SUBJECT).click();
      await expect.poll(() => sPage.getByTestId('mail-subject').textContent()).toBe(S_SUBJECT);
      await sPage.getByRole('button', { name: button, exact: true }).click();
      await expect.poll(() => sPage.locator('#compose-title').textContent()).toBe('Forward');
      expect(await sPage.getByLabel('Subject').inputValue()).toBe(`Fwd: ${S_SUBJECT}`);
      expect(await sPage.getByLabel('through the server').isChecked()).toBe(true);
      await sPage.locator('input[name=to]').fill(addr(rita));
      await sPage.getByRole('button', { name: 'Send' }).click();
      await sPage.getByTestId('server-receipt').waitFor();
      await expect.poll(() => storedCount(rita), { timeout: 60_000 }).toBe(ritaBefore + n);
    }
    const copies = await openedCopies(rita);
    const inline = copies.find((c) => c.includes('---------- Forwarded message ----------'));
    const attached = copies.find((c) => /content-type:\s*message\/rfc822/i.test(c));
    expect(inline).toBeDefined();
    expect(attached).toBeDefined();
    for (const c of [inline, attached])
      expect(c).toMatch(new RegExp(`\\r\\nSubject: Fwd: ${S_SUBJECT}\\r\\n`));
    expect(inline).toContain(S_BODY);
    expect(inline).toContain(`From: ${addr(stack.openWallet)}`);
    // The attachment is the original message itself.
    expect(attached).not.toContain('---------- Forwarded message ----------');
    expect(attached).toMatch(/filename="?Server reader actions\.eml"?/);
  }, 180_000);

  it('server mode: Forward of a message whose body could not be fetched says so and sends nothing', async () => {
    const { kit } = suite;
    const page = await kit.newPage();
    // The same account in a second page whose sealed-body fetches fail at the network.
    await page.route('**/v1/mail/messages/*/sealed', (route) => route.abort('failed'));
    await page.goto(suite.stack.url);
    await kit.importKey(page, sal);
    await page.getByRole('button', { name: 'Log in with my wallet' }).click();
    await expect.poll(() => page.getByTestId('mode').textContent()).toBe('server');
    const sends: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/mail/send') sends.push(r.method());
    });
    await openFolder(page, 'INBOX');
    const row = page.getByTestId('server-row');
    await expect.poll(() => row.count()).toBe(1);
    await row.first().click();
    await page.getByRole('alert').first().waitFor();
    await page.getByRole('button', { name: 'Forward', exact: true }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toBe(
        'This message could not be fetched or opened, so there is nothing to forward. Nothing was sent or spent.',
      );
    expect(await page.locator('#compose-title').count()).toBe(0);
    await page.getByRole('button', { name: 'Forward as attachment' }).click();
    expect(await page.locator('#compose-title').count()).toBe(0);
    expect(sends).toEqual([]);
    await page.context().close();
  }, 90_000);

  it('server mode: Mark unread removes \\Seen (page and API); Move to Junk; Delete to Trash; Delete in Trash expunges after a question', async () => {
    await toMail(sPage);
    await openFolder(sPage, 'INBOX');
    const [msg] = await apiMessages(token, 'INBOX');
    expect(msg).toBeDefined();
    const id = String(msg?.id);
    await serverRow(sPage, S_SUBJECT).click();
    await expect.poll(() => sPage.getByTestId('mail-subject').textContent()).toBe(S_SUBJECT);
    await expect.poll(async () => (await apiMessages(token, 'INBOX'))[0]?.flags).toContain('\\Seen');

    // The server reader's toolbar: Reply, Forward, Move, Mark unread, Delete.
    await suite.kit.shotBoth(sPage, 'reader-actions-server-toolbar');
    // Mark unread.
    await sPage.getByRole('button', { name: 'Mark unread' }).click();
    await openFolder(sPage, 'INBOX');
    await expect.poll(() => serverRow(sPage, S_SUBJECT).getAttribute('class')).toMatch(/\bunseen\b/);
    const afterUnread = (await apiMessages(token, 'INBOX')).find((m) => m.id === id);
    expect(afterUnread?.flags).not.toContain('\\Seen');

    // Move to Junk.
    await serverRow(sPage, S_SUBJECT).click();
    await expect.poll(() => sPage.getByTestId('mail-subject').textContent()).toBe(S_SUBJECT);
    await sPage.locator('label.move select').selectOption('Junk');
    await sPage.getByRole('button', { name: 'Move', exact: true }).click();
    await openFolder(sPage, 'Junk');
    await serverRow(sPage, S_SUBJECT).waitFor();
    expect((await apiMessages(token, 'Junk')).map((m) => m.id)).toEqual([id]);
    expect(await apiMessages(token, 'INBOX')).toEqual([]);

    // Delete: to Trash.
    await serverRow(sPage, S_SUBJECT).click();
    await expect.poll(() => sPage.getByTestId('mail-subject').textContent()).toBe(S_SUBJECT);
    await sPage.getByRole('button', { name: 'Delete', exact: true }).click();
    await openFolder(sPage, 'Trash');
    await serverRow(sPage, S_SUBJECT).waitFor();
    expect((await apiMessages(token, 'Trash')).map((m) => m.id)).toEqual([id]);
    expect(await apiMessages(token, 'Junk')).toEqual([]);

    // Delete in Trash: a question first, then gone for good.
    await serverRow(sPage, S_SUBJECT).click();
    await expect.poll(() => sPage.getByTestId('mail-subject').textContent()).toBe(S_SUBJECT);
    await sPage.getByRole('button', { name: 'Delete permanently' }).click();
    const ask = sPage.getByTestId('expunge-confirm');
    await ask.waitFor();
    expect(await ask.textContent()).toContain('This cannot be undone.');
    await suite.kit.shotBoth(sPage, 'reader-actions-expunge-question');
    expect((await apiMessages(token, 'Trash')).map((m) => m.id)).toEqual([id]);
    await ask.getByRole('button', { name: 'Delete permanently' }).click();
    await expect.poll(async () => (await apiMessages(token, 'Trash')).length, { timeout: 15_000 }).toBe(0);
    await openFolder(sPage, 'Trash');
    await expect.poll(() => serverRow(sPage, S_SUBJECT).count()).toBe(0);
  }, 120_000);

  it('server mode: Save draft stores it in Drafts; opening it there brings back subject and body', async () => {
    const subject = 'Server draft subject';
    const body = 'Server draft body, to finish later.';
    await sPage.getByRole('button', { name: 'Compose' }).click();
    await sPage.locator('input[name=to]').fill(addr(rita));
    await sPage.getByLabel('Subject').fill(subject);
    await sPage.locator('textarea[name=body]').fill(body);
    await sPage.getByRole('button', { name: 'Save draft' }).click();
    await expect
      .poll(() => sPage.getByTestId('draft-status').textContent())
      .toBe('Draft saved in Drafts on the server.');
    expect(await apiMessages(token, 'Drafts')).toHaveLength(1);

    await toMail(sPage);
    await openFolder(sPage, 'Drafts');
    await serverRow(sPage, subject).click();
    await expect.poll(() => sPage.locator('#compose-title').textContent()).toBe('New message');
    expect(await sPage.getByLabel('Subject').inputValue()).toBe(subject);
    expect((await sPage.locator('textarea[name=body]').inputValue()).trimEnd()).toBe(body);
    expect(await sPage.locator('input[name=to]').inputValue()).toBe(addr(rita));
  }, 90_000);
});
