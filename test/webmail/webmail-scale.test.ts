// A large chain mailbox in the webmail (issue 34, part 5): 200 messages,
// written as Email accounts directly (SendMail signed by a sender wallet,
// bodies sealed and pinned like a trustless send) on the real devnet. The
// unread count covers the whole mailbox without fetching 200 bodies, older
// pages load on scroll, a visit to a message keeps the pages and the scroll
// position, search covers what the tab opened, and rows name their parts.
import type { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { fromHash, getMailbox, listInbox, sendMailInstruction } from '../../chain/client/index.ts';
import { sealMessage, walletEncryptionPublicKey } from '../../src/mail/seal/index.ts';
import { pinBytes } from '../../src/mail/trustless/pin.ts';
import { webmailSuite } from '../support/webmail-page.ts';
import type { WebmailStack } from '../support/webmail-stack.ts';

const suite = webmailSuite();
const TOTAL = 200;
const PER_TX = 4;

const subjectOf = (i: number) => `Bulk message ${String(i).padStart(3, '0')}`;

/** Seals and pins `count` messages to `holder`, then writes their Email accounts, PER_TX a transaction. */
async function seed(stack: WebmailStack, sender: Keypair, holder: PublicKey, count: number): Promise<void> {
  const key = walletEncryptionPublicKey(holder.toBytes());
  const cids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const n = i + j;
        const body = n === 7 ? 'The kiwi report is attached below.' : `Routine update number ${n}.`;
        const raw = new TextEncoder().encode(
          `From: Bulk Sender <bulk@remote.example>\r\nTo: ${holder.toBase58()}@sealpost.localhost\r\nSubject: ${subjectOf(n)}\r\nMessage-ID: <bulk.${n}.${Date.now()}@remote.example>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`,
        );
        const { sealed, contentKey } = await sealMessage({
          envelope: {
            version: 1,
            from: 'bulk@remote.example',
            to: holder.toBase58(),
            receivedAt: Date.now(),
          },
          raw,
          recipientPublicKey: key,
        });
        contentKey.fill(0);
        return pinBytes(stack.pinUrl, '', sealed);
      }),
    );
    cids.push(...batch);
  }
  const start = (await getMailbox(stack.connection, stack.programId, holder))?.mailCount ?? 0n;
  for (let i = 0; i < count; i += PER_TX) {
    const ixs: TransactionInstruction[] = [];
    for (let j = i; j < Math.min(count, i + PER_TX); j++) {
      ixs.push(
        sendMailInstruction({
          programId: stack.programId,
          sender: sender.publicKey,
          recipient: holder,
          index: start + BigInt(j),
          fromHash: fromHash(sender.publicKey),
          cid: cids[j] as string,
        }),
      );
    }
    await stack.send(ixs, [sender]);
  }
}

describe('a 200-message chain mailbox in headless Chromium', () => {
  it('counts unread over the whole mailbox, loads on scroll, keeps pages and scroll, searches and names rows', async () => {
    const { stack, kit } = suite;
    const [holder, sender] = await Promise.all([stack.newMailbox(), stack.funded(20)]);
    await seed(stack, sender, holder.publicKey, TOTAL);
    expect(await listInbox(stack.connection, stack.programId, holder.publicKey, { limit: 500 })).toHaveLength(
      TOTAL,
    );

    const page = await kit.newPage({ width: 1100, height: 850 });
    const gateway: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(stack.gatewayUrl)) gateway.push(r.url());
    });
    await kit.goTrustless(page);
    await kit.importKey(page, holder);
    const rows = page.getByTestId('inbox-row');
    await rows.first().waitFor();

    // The whole mailbox is unread, though one page is listed: read from the index, not 200 bodies.
    await expect.poll(() => page.title()).toBe(`Inbox (${TOTAL}) — Sealpost`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Inbox (${TOTAL})`);
    expect(await page.getByTestId('unread-count').textContent()).toBe(`${TOTAL} unread`);
    expect(gateway.length).toBeLessThanOrEqual(20);
    expect(await page.getByRole('button', { name: 'Older messages' }).count()).toBe(1);

    // Rows name their parts apart, from their own text (the name holds what is seen: WCAG 2.5.3).
    await page.getByTestId('inbox-snippet').first().waitFor();
    // (Chromium reads a space around the visually hidden separators: "Sender , Subject".)
    const parts = [
      'Unread, From Bulk Sender',
      `Subject: ${subjectOf(TOTAL - 1)}`,
      'Snippet: Routine update number',
    ];
    await page
      .getByRole('button', {
        name: new RegExp(`^${parts.join(' ?, ')} ${TOTAL - 1}\\. ?, (just now|\\d+ min ago)$`),
      })
      .waitFor();
    expect(await rows.first().getAttribute('aria-label')).toBeNull();

    // Older pages load as the list's end scrolls into view: no clicks.
    const deadline = Date.now() + 90_000;
    while ((await rows.count()) < TOTAL) {
      if (Date.now() > deadline) throw new Error(`only ${await rows.count()} rows after scrolling`);
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await page.waitForTimeout(150);
    }
    await expect.poll(() => page.getByRole('button', { name: 'Older messages' }).count()).toBe(0);
    expect(await page.getByTestId('inbox-sentinel').count()).toBe(0);

    // A message far down, then back: the same 200 rows, scrolled where they were.
    const target = rows.filter({ hasText: subjectOf(40) });
    await target.scrollIntoViewIfNeeded();
    const y = await page.evaluate(() => window.scrollY);
    expect(y).toBeGreaterThan(1000);
    await target.click();
    await expect.poll(() => page.getByTestId('mail-subject').textContent()).toBe(subjectOf(40));
    await page.goBack();
    await page.getByRole('heading', { name: `Inbox (${TOTAL - 1})` }).waitFor();
    expect(await rows.count()).toBe(TOTAL);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(y - 5);
    expect(Math.abs((await page.evaluate(() => window.scrollY)) - y)).toBeLessThanOrEqual(5);
    expect(await target.getAttribute('data-unread')).toBe('false');
    expect(await page.title()).toBe(`Inbox (${TOTAL - 1}) — Sealpost`);
    // The nav button too (a new history entry, the snapshot reused).
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.getByRole('button', { name: 'Inbox', exact: true }).click();
    await page.getByRole('heading', { name: `Inbox (${TOTAL - 1})` }).waitFor();
    expect(await rows.count()).toBe(TOTAL);

    // Search over what this tab opened: the body of message 7, 193 rows down.
    await expect.poll(() => page.getByTestId('inbox-snippet').count(), { timeout: 60_000 }).toBe(TOTAL);
    expect(await page.getByTestId('search-scope').textContent()).toContain(
      'Searches mail opened in this browser',
    );
    await page.getByRole('searchbox', { name: 'Search' }).fill('kiwi');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(subjectOf(7));
    expect(await page.getByTestId('search-status').textContent()).toBe('1 opened message matches “kiwi”.');
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await expect.poll(() => rows.count()).toBe(TOTAL);

    // Mark all read covers the whole mailbox.
    await page.getByRole('button', { name: 'Mark all read' }).click();
    await expect.poll(() => page.title()).toBe('Inbox — Sealpost');
  }, 300_000);
});
