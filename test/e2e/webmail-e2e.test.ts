// The webmail end to end in headless Chromium against `sealpost dev` (random
// ports): mail delivered over SMTP is read trustlessly; trustless compose,
// reply (reply_to_hash on chain), the no_ipfs refusal, a held first contact
// with prepay and automatic re-send, an external wallet (an injected
// provider standing in for a browser extension) publishing a mailbox key,
// and server mode (login, folders, pin provider set/remove with step-up).
// Screenshots of each main screen go to test-artifacts/webmail/.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { ed25519 } from '@noble/curves/ed25519.js';
import { type Keypair, type PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import nodemailer from 'nodemailer';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAliasInstruction,
  fromHash,
  getEmailAt,
  getFrombox,
  getMailbox,
  getMailboxKey,
  listInbox,
  replyToHash,
  sendMailInstruction,
  setMailboxFlagsInstruction,
} from '../../chain/client/index.ts';
import { AccountsRepo, MessagesRepo } from '../../src/core/store/index.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { DEV_DOMAIN, DEV_POSTAGE_LAMPORTS } from '../../src/run/dev/dev-stack.ts';
import { addr, keyJson, PASS, type PageKit, pageKit } from '../support/webmail-page.ts';
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

const newPage = (opts?: { width?: number; height?: number }) => kit.newPage(opts);
const shot = (page: Page, name: string) => kit.shot(page, name);
const goTrustless = (page: Page, overrides?: { rpcUrl?: string }) => kit.goTrustless(page, overrides);
const importKey = (page: Page, kp: Keypair) => kit.importKey(page, kp);
const smtpSend = (from: string, to: string, subject: string, text: string, headerFrom?: string) =>
  kit.smtpSend(from, to, subject, text, headerFrom);
const waitForInbox = (owner: PublicKey, count: number) => kit.waitForInbox(owner, count);
const openMessage = (page: Page, subject: string) => kit.openMessage(page, subject);
const confirmSend = (page: Page) => kit.confirmSend(page);

function pinCount(): number {
  const dir = join(stack.config.pind.data_dir, 'pins');
  let n = 0;
  for (const sub of readdirSync(dir)) n += readdirSync(join(dir, sub)).length;
  return n;
}

/** The chain ids the Wallet Standard double was asked to send on. */
const standardChains: string[] = [];

/**
 * Test doubles of browser-extension wallets holding a key of the test: the
 * injected `window.solana`-style provider, or a Wallet Standard wallet. The
 * key stays in the test process; like an extension, the wallet signs and
 * broadcasts on its own side and hands the page the signature.
 */
async function injectWallet(page: Page, kp: Keypair, kind: 'injected' | 'standard'): Promise<void> {
  const sign = (bytes: Uint8Array) => ed25519.sign(bytes, kp.secretKey.subarray(0, 32));
  await page.exposeFunction('__walletSignMessage', (b64: string) =>
    Buffer.from(sign(Buffer.from(b64, 'base64'))).toString('base64'),
  );
  // Injected providers get the Transaction object: the page side passes its message bytes.
  await page.exposeFunction('__walletSignAndSendMessage', async (messageB64: string) => {
    const message = Buffer.from(messageB64, 'base64');
    if (message[0] !== 1) throw new Error('the test wallet signs transactions with one signer only');
    // Wire form of a one-signature transaction: count, signature, message.
    const wire = Buffer.concat([Buffer.from([1]), Buffer.from(sign(message)), message]);
    return stack.connection.sendRawTransaction(wire, { preflightCommitment: 'confirmed' });
  });
  // Wallet Standard wallets get the serialized, unsigned transaction.
  await page.exposeFunction('__walletSignAndSendWire', async (wireB64: string, chain: string) => {
    standardChains.push(chain);
    const tx = Transaction.from(Buffer.from(wireB64, 'base64'));
    tx.partialSign(kp);
    const sig = await stack.connection.sendRawTransaction(tx.serialize(), {
      preflightCommitment: 'confirmed',
    });
    return Buffer.from(bs58.decode(sig)).toString('base64');
  });
  await page.addInitScript(
    ({ address, publicKey, kind }: { address: string; publicKey: number[]; kind: string }) => {
      type Bridge = Record<
        '__walletSignMessage' | '__walletSignAndSendMessage' | '__walletSignAndSendWire',
        (s: string, chain?: string) => Promise<string>
      >;
      const w = window as unknown as Bridge;
      const toB64 = (u: Uint8Array) => btoa(String.fromCharCode(...u));
      const fromB64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
      if (kind === 'injected') {
        (window as unknown as { solana: unknown }).solana = {
          async connect() {
            return { publicKey: { toBase58: () => address } };
          },
          async signMessage(message: Uint8Array) {
            return { signature: fromB64(await w.__walletSignMessage(toB64(message))) };
          },
          async signAndSendTransaction(tx: { serializeMessage(): Uint8Array }) {
            return { signature: await w.__walletSignAndSendMessage(toB64(tx.serializeMessage())) };
          },
        };
        return;
      }
      const account = {
        address,
        publicKey: Uint8Array.from(publicKey),
        chains: ['solana:devnet'],
        features: [],
      };
      const wallet = {
        version: '1.0.0',
        name: 'Test Standard Wallet',
        icon: 'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg"/>',
        chains: ['solana:devnet'],
        accounts: [account],
        features: {
          'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
          'solana:signMessage': {
            version: '1.0.0',
            signMessage: async (...inputs: { message: Uint8Array }[]) =>
              Promise.all(
                inputs.map(async (i) => ({
                  signedMessage: i.message,
                  signature: fromB64(await w.__walletSignMessage(toB64(i.message))),
                })),
              ),
          },
          'solana:signAndSendTransaction': {
            version: '1.0.0',
            supportedTransactionVersions: ['legacy'],
            signAndSendTransaction: async (...inputs: { transaction: Uint8Array; chain: string }[]) =>
              Promise.all(
                inputs.map(async (i) => ({
                  signature: fromB64(await w.__walletSignAndSendWire(toB64(i.transaction), i.chain)),
                })),
              ),
          },
        },
      };
      const register = (api: { register(w: unknown): unknown }) => api.register(wallet);
      window.addEventListener('wallet-standard:app-ready', (e) => register((e as CustomEvent).detail));
      window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
    },
    { address: kp.publicKey.toBase58(), publicKey: Array.from(kp.publicKey.toBytes()), kind },
  );
}

describe('webmail in headless Chromium against the dev stack', () => {
  it('loads at most 40 KiB (gzip) of JS and CSS before the wallet is unlocked; the chain client comes later', () => {
    const html = readFileSync(join(stack.webmailDir, 'index.html'), 'utf8');
    const initial = [...html.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.(?:js|css))"/g)].map(
      (m) => m[1] ?? '',
    );
    expect(initial.length).toBeGreaterThan(0);
    const gz = initial.reduce(
      (n, f) => n + gzipSync(readFileSync(join(stack.webmailDir, f)), { level: 9 }).length,
      0,
    );
    expect(gz).toBeLessThanOrEqual(40 * 1024);
  });

  it('trustless: unlock → the inbox shows mail delivered over SMTP → the reader shows its exact subject and body', async () => {
    const subject = 'Grüße from SMTP — trustless';
    const body = 'First line\nZweite Zeile: äöü ✓\n-- \nAnn';
    await smtpSend(
      'ann@remote.example',
      addr(stack.openWallet),
      subject,
      body.replace(/\n/g, '\r\n'),
      'Ann <ann@remote.example>',
    );
    await waitForInbox(stack.openWallet.publicKey, 1);

    const page = await newPage();
    await goTrustless(page);
    // From here on the page may talk only to the chain RPC, the gateway and the pin service.
    const apiCalls: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.origin === stack.url && u.pathname !== '/' && !u.pathname.startsWith('/assets/'))
        apiCalls.push(u.pathname);
    });
    await shot(page, '01-unlock');
    await importKey(page, stack.openWallet);
    await expect.poll(() => page.getByTestId('mode').textContent()).toBe('trustless');
    await page.getByTestId('inbox-row').filter({ hasText: subject }).waitFor();
    await shot(page, '02-inbox-trustless');
    await openMessage(page, subject);
    expect(await page.getByTestId('mail-text').textContent()).toBe(`${body}\n`);
    expect(await page.getByTestId('mail-from').textContent()).toBe('Ann <ann@remote.example>');
    await shot(page, '03-reader');
    expect(apiCalls).toEqual([]);

    // Hidden in trustless mode: the server's folders, account settings, pin provider.
    const nav = await page.getByRole('navigation', { name: 'Main' }).textContent();
    expect(nav).not.toContain('Account');
    expect(nav).not.toContain('Pin provider');
    expect(nav).not.toContain('Mail');

    // A phone-width screen gets the same inbox.
    await page.setViewportSize({ width: 390, height: 844 });
    await kit.navTo(page, 'Inbox');
    await page.getByTestId('inbox-row').filter({ hasText: subject }).waitFor();
    await shot(page, '04-inbox-phone');
  }, 120_000);

  it('renders HTML mail sanitized in a sandboxed frame with remote content blocked until asked, and offers attachments', async () => {
    const subject = `HTML with a tracker ${Date.now()}`;
    const tracker = 'http://127.0.0.1:9/tracker.png';
    const to = addr(stack.openWallet);
    const raw = [
      'From: Mallory <mallory@remote.example>',
      `To: ${to}`,
      `Subject: ${subject}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="outer"',
      '',
      '--outer',
      'Content-Type: multipart/alternative; boundary="inner"',
      '',
      '--inner',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'the plain version',
      '--inner',
      'Content-Type: text/html; charset=utf-8',
      '',
      `<p id="greet">Hello <b>HTML</b></p><script>parent.document.title='pwned'</script><img src="${tracker}" onerror="parent.document.title='pwned'">`,
      '--inner--',
      '--outer',
      'Content-Type: text/plain; name="notes.txt"',
      'Content-Disposition: attachment; filename="notes.txt"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('attached notes ✓').toString('base64'),
      '--outer--',
      '',
    ].join('\r\n');
    const count = (await listInbox(stack.connection, stack.programId, stack.openWallet.publicKey)).length;
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: stack.mxPort, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: 'mallory@remote.example', to: [to] }, raw });
    await waitForInbox(stack.openWallet.publicKey, count + 1);

    const page = await newPage();
    const trackerHits: string[] = [];
    page.on('request', (r) => {
      if (r.url() === tracker) trackerHits.push(r.url());
    });
    await goTrustless(page);
    await importKey(page, stack.openWallet);
    await openMessage(page, subject);
    const frame = page.frameLocator('iframe.html-body');
    expect(await frame.locator('#greet').textContent()).toBe('Hello HTML');
    expect(await frame.locator('script').count()).toBe(0);
    expect(await frame.locator('img').getAttribute('onerror')).toBeNull();
    expect(await page.locator('iframe.html-body').getAttribute('sandbox')).toBe(
      'allow-same-origin allow-popups allow-popups-to-escape-sandbox',
    );
    await shot(page, '03b-reader-html');
    expect(trackerHits).toEqual([]);
    const hit = page.waitForRequest(tracker);
    await page.getByRole('button', { name: 'Load remote content' }).click();
    await hit;
    // Nothing in the mail reached the page: the title is the reader's own (the subject), not 'pwned'.
    expect(await page.title()).toBe(`${subject} — Sealpost`);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'notes.txt' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('notes.txt');
    expect(readFileSync((await download.path()) as string, 'utf8')).toBe('attached notes ✓');
    await page.getByRole('button', { name: 'Show plain text' }).click();
    expect(await page.getByTestId('mail-text').textContent()).toContain('the plain version');
  }, 90_000);

  let bob: Keypair;
  let firstAddress: string;

  it('trustless compose to a second wallet, which then reads it; its reply carries reply_to_hash on chain', async () => {
    bob = await stack.newMailbox();
    const alias = `bob${Date.now().toString(36)}`;
    await stack.send(
      [createAliasInstruction({ programId: stack.programId, owner: bob.publicKey, name: alias })],
      [bob],
    );
    const ann = stack.openWallet;
    const subject = `Hello Bob ${Date.now()}`;
    const body = 'Sealed in the page,\npinned, and sent on chain.';

    const page = await newPage();
    await goTrustless(page);
    await importKey(page, ann);
    await page.getByRole('button', { name: 'Compose' }).click();
    // Addressed by alias: resolved with a plain account read.
    await page.locator('input[name=to]').fill(`${alias}@${DEV_DOMAIN}`);
    await page.getByLabel('Subject').fill(subject);
    await page.locator('textarea[name=body]').fill(body);
    await page.getByRole('button', { name: 'Send' }).click();
    await confirmSend(page);
    await page.getByTestId('receipt').waitFor();
    await shot(page, '05-compose-receipt');
    firstAddress = (await page.getByTestId('receipt-email').textContent()) ?? '';
    const signature = (await page.getByTestId('receipt-signature').textContent()) ?? '';
    expect(bs58.decode(signature)).toHaveLength(64);
    const email = await getEmailAt(stack.connection, stack.programId, firstAddress);
    expect(email?.sender.toBase58()).toBe(ann.publicKey.toBase58());
    expect(email?.recipient.toBase58()).toBe(bob.publicKey.toBase58());
    expect(Buffer.from(email?.fromHash ?? []).equals(Buffer.from(fromHash(ann.publicKey)))).toBe(true);
    expect((await fetch(`${stack.gatewayUrl}/ipfs/${email?.cid}`)).status).toBe(200);

    const bobPage = await newPage();
    await goTrustless(bobPage);
    await importKey(bobPage, bob);
    await openMessage(bobPage, subject);
    expect(await bobPage.getByTestId('mail-text').textContent()).toBe(`${body}\n`);
    expect(await bobPage.getByTestId('mail-from').textContent()).toBe(addr(ann));

    // Reply: To is the decrypted sender, Re: prefix, the chip shows the linkage.
    await bobPage.getByRole('button', { name: 'Reply' }).click();
    expect(await bobPage.locator('input[name=to]').inputValue()).toBe(addr(ann));
    expect(await bobPage.getByLabel('Subject').inputValue()).toBe(`Re: ${subject}`);
    await bobPage.getByTestId('reply-chip').waitFor();
    await shot(bobPage, '06-reply-draft');
    await bobPage.getByRole('button', { name: 'Send' }).click();
    await confirmSend(bobPage);
    await bobPage.getByTestId('receipt').waitFor();
    const replyAddress = (await bobPage.getByTestId('receipt-email').textContent()) ?? '';
    const reply = await getEmailAt(stack.connection, stack.programId, replyAddress);
    expect(reply?.recipient.toBase58()).toBe(ann.publicKey.toBase58());
    expect(Buffer.from(reply?.replyToHash ?? []).equals(Buffer.from(replyToHash(firstAddress)))).toBe(true);

    // Clear drops the linkage from a draft.
    await bobPage.getByRole('button', { name: 'Inbox', exact: true }).click();
    await openMessage(bobPage, subject);
    await bobPage.getByRole('button', { name: 'Reply' }).click();
    await bobPage.getByTestId('reply-chip').getByRole('button', { name: 'Clear' }).click();
    await bobPage.getByTestId('reply-chip').waitFor({ state: 'detached', timeout: 5000 });
    expect(await bobPage.getByRole('heading', { name: 'New message' }).count()).toBe(1);
  }, 120_000);

  it('never resolves an outside address to an on-chain alias: a reply to alice@example.org is refused and the alias owner gets nothing', async () => {
    // A stranger owns the on-chain alias that equals the outside sender's local part.
    const stranger = await stack.newMailbox();
    const local = `alice${randomBytes(4).toString('hex')}`;
    await stack.send(
      [createAliasInstruction({ programId: stack.programId, owner: stranger.publicKey, name: local })],
      [stranger],
    );
    const reader = await stack.newMailbox();
    const subject = `From outside ${Date.now()}`;
    await smtpSend(`${local}@example.org`, addr(reader), subject, 'Please reply.');
    await waitForInbox(reader.publicKey, 1);
    const strangerCount = async () =>
      (await getMailbox(stack.connection, stack.programId, stranger.publicKey))?.mailCount;
    const countBefore = await strangerCount();
    const pinsBefore = pinCount();
    const balanceBefore = await stack.connection.getBalance(reader.publicKey, 'confirmed');

    const page = await newPage();
    await goTrustless(page);
    await importKey(page, reader);
    await openMessage(page, subject);
    await page.getByRole('button', { name: 'Reply' }).click();
    expect(await page.locator('input[name=to]').inputValue()).toBe(`${local}@example.org`);
    // Before anything is sent, the page says the address is not on chain.
    await expect
      .poll(() => page.getByTestId('recipient-error').textContent())
      .toMatch(/example\.org is not a mail domain on chain/);
    await shot(page, '06b-reply-outside-refused');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/ordinary email address.*Nothing was sealed, pinned or paid/);
    expect(await page.getByTestId('prepay-card').count()).toBe(0);
    expect(await page.getByTestId('receipt').count()).toBe(0);
    // The draft is kept.
    expect(await page.getByLabel('Subject').inputValue()).toBe(`Re: ${subject}`);
    expect(await strangerCount()).toBe(countBefore);
    expect(pinCount()).toBe(pinsBefore);
    expect(await stack.connection.getBalance(reader.publicKey, 'confirmed')).toBe(balanceBefore);

    // The same alias at the dev mail domain (a MailDomain on chain) is the stranger's, and the page says so.
    await page.locator('input[name=to]').fill(`${local}@${DEV_DOMAIN}`);
    const resolved = page.getByTestId('recipient-resolved');
    await expect.poll(() => resolved.getAttribute('data-wallet')).toBe(stranger.publicKey.toBase58());
    expect(await resolved.textContent()).toContain(`the alias ${local} at ${DEV_DOMAIN}`);
    // A wallet address stays a wallet whatever follows the @; an unknown alias on chain is named.
    await page.locator('input[name=to]').fill(`${stranger.publicKey.toBase58()}@example.org`);
    await expect.poll(() => resolved.getAttribute('data-wallet')).toBe(stranger.publicKey.toBase58());
    await page.locator('input[name=to]').fill(`nobody${randomBytes(4).toString('hex')}@${DEV_DOMAIN}`);
    await expect
      .poll(() => page.getByTestId('recipient-error').textContent())
      .toMatch(/does not exist: no alias .* is registered on chain/);
    expect(await strangerCount()).toBe(countBefore);
  }, 120_000);

  it('confirms before any SOL moves: itemized costs, Cancel spends nothing, the total is what leaves the wallet', async () => {
    const to = await stack.newMailbox();
    const sender = await stack.newMailbox({ fund: 5 });
    const page = await newPage({ width: 1280, height: 800 });
    await goTrustless(page);
    await importKey(page, sender);
    const balance = () => stack.connection.getBalance(sender.publicKey, 'confirmed');
    const before = await balance();
    const pinsBefore = pinCount();
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.locator('input[name=to]').fill(to.publicKey.toBase58());
    await page.getByLabel('Subject').fill('with a bounty');
    await page.locator('textarea[name=body]').fill('claim it within a week');
    await page.getByLabel('Amount in SOL').fill('0.02');
    await page.getByRole('button', { name: 'Send' }).click();
    const sheet = page.getByTestId('send-confirm');
    await sheet.waitFor();
    // In view at 1280×800 without scrolling, focus on the confirm button.
    const box = await sheet.boundingBox();
    expect((box?.y ?? 10_000) + (box?.height ?? 0)).toBeLessThanOrEqual(800);
    expect(
      await page
        .getByRole('button', { name: 'Confirm and send' })
        .evaluate((b) => b === document.activeElement),
    ).toBe(true);
    expect(await page.getByTestId('cost-bounty').textContent()).toBe('0.02 SOL');
    expect(await page.getByTestId('cost-fee').textContent()).toBe('0.000005 SOL');
    const lamportsOf = async (id: string) => {
      const text = (await page.getByTestId(id).textContent()) ?? '';
      const [whole, frac = ''] = text.replace(' SOL', '').split('.');
      return BigInt(whole ?? '0') * 1_000_000_000n + BigInt(frac.padEnd(9, '0'));
    };
    const total = await lamportsOf('cost-total');
    // The priority fee at the auto floor (1 µlamport/CU) on a devnet without recent fees: 1 lamport.
    expect(await lamportsOf('cost-priority')).toBe(1n);
    expect(total).toBe((await lamportsOf('cost-rent')) + 20_000_000n + 5000n + 1n);
    expect(await lamportsOf('cost-after')).toBe(BigInt(before) - total);
    await shot(page, '05a-send-confirm');
    // The sheet is up and nothing has moved; Cancel keeps it that way.
    expect(await balance()).toBe(before);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await sheet.waitFor({ state: 'detached', timeout: 5000 });
    await sleep(800);
    expect(await balance()).toBe(before);
    expect(pinCount()).toBe(pinsBefore);
    expect(await listInbox(stack.connection, stack.programId, to.publicKey)).toHaveLength(0);
    expect(await page.getByLabel('Subject').inputValue()).toBe('with a bounty');

    // Escape cancels too; then a confirmed send takes exactly the total.
    await page.getByRole('button', { name: 'Send' }).click();
    await sheet.waitFor();
    // The sheet is ready once its check finishes and Confirm is enabled;
    // Escape closes it even with focus moved out of it.
    await page.getByRole('button', { name: 'Confirm and send' }).and(page.locator(':enabled')).waitFor();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'detached', timeout: 5000 });
    await page.getByRole('button', { name: 'Send' }).click();
    await confirmSend(page);
    await page.getByTestId('receipt').waitFor();
    expect(BigInt(await balance())).toBe(BigInt(before) - total);
  }, 120_000);

  it('sends a draft once: repeated clicks make exactly one Email account, then the receipt takes focus', async () => {
    const to = await stack.newMailbox();
    const page = await newPage({ width: 1280, height: 800 });
    await goTrustless(page);
    await importKey(page, stack.openWallet);
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.locator('input[name=to]').fill(to.publicKey.toBase58());
    await page.getByLabel('Subject').fill('only once');
    await page.locator('textarea[name=body]').fill('one click or two, one message');
    await page.getByRole('button', { name: 'Send' }).dblclick();
    await page.getByTestId('send-confirm').waitFor();
    await page.getByRole('button', { name: 'Confirm and send' }).dblclick();
    const receipt = page.getByTestId('receipt');
    await receipt.waitFor();
    // Focus moved to the receipt, which is in view; the sent draft is gone, so Send cannot fire again.
    expect(await receipt.evaluate((el) => el === document.activeElement)).toBe(true);
    const box = await receipt.boundingBox();
    expect((box?.y ?? 10_000) + (box?.height ?? 0)).toBeLessThanOrEqual(800);
    expect(await page.getByRole('button', { name: 'Send' }).count()).toBe(0);
    await shot(page, '05b-receipt-desktop');
    // Let any second transaction land before counting.
    await sleep(1500);
    expect(await listInbox(stack.connection, stack.programId, to.publicKey)).toHaveLength(1);
    expect((await getMailbox(stack.connection, stack.programId, to.publicKey))?.mailCount).toBe(1n);
    // New message starts from an empty draft.
    await page.getByRole('button', { name: 'New message' }).click();
    expect(await page.locator('input[name=to]').inputValue()).toBe('');
    expect(await page.getByLabel('Subject').inputValue()).toBe('');
    await page.locator('input[name=to]').fill(to.publicKey.toBase58());
    await page.getByLabel('Subject').fill('second, on purpose');
    await page.locator('textarea[name=body]').fill('a new draft is a new message');
    await page.getByRole('button', { name: 'Send' }).click();
    // Two clicks in one task, before any re-render could disable the button.
    await page.getByRole('button', { name: 'Confirm and send' }).evaluate((b: HTMLButtonElement) => {
      b.click();
      b.click();
    });
    await receipt.waitFor();
    await sleep(1500);
    await page.getByRole('button', { name: 'Back to inbox' }).click();
    await page.getByRole('heading', { name: 'Inbox' }).waitFor();
    expect(await listInbox(stack.connection, stack.programId, to.publicKey)).toHaveLength(2);
  }, 120_000);

  it('refuses a recipient with no_ipfs, and a bounty born expired, before anything is pinned', async () => {
    const carol = await stack.newMailbox();
    await stack.send(
      [setMailboxFlagsInstruction({ programId: stack.programId, owner: carol.publicKey, noIpfs: true })],
      [carol],
    );
    const page = await newPage();
    await goTrustless(page);
    await importKey(page, stack.openWallet);
    const pinsBefore = pinCount();
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.locator('input[name=to]').fill(carol.publicKey.toBase58());
    await page.getByLabel('Subject').fill('should not go');
    await page.locator('textarea[name=body]').fill('secret');
    await page.getByRole('button', { name: 'Send' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/keeps its mail off IPFS \(no_ipfs\).*Nothing was pinned/);
    await shot(page, '07-no-ipfs-refusal');
    expect(pinCount()).toBe(pinsBefore);
    expect(await listInbox(stack.connection, stack.programId, carol.publicKey)).toHaveLength(0);

    // A bounty whose claim window would be over when it lands is refused just as early.
    await page.locator('input[name=to]').fill(addr(stack.openWallet));
    await page.locator('input[name=bounty]').fill('0.01');
    await page.locator('input[name=claim-days]').fill('0');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/claim window would already be over.*Nothing was pinned or sent/);
    expect(pinCount()).toBe(pinsBefore);
  }, 90_000);

  it('holds a first contact, quotes postage, refuses a repriced purchase, then buys and re-sends with bounty and reply linkage', async () => {
    const dora = stack.postageWallet;
    const eve = await stack.funded(20);
    // Eve needs a mailbox so she can receive Dora's first message and reply to it.
    const { createMailboxInstruction } = await import('../../chain/client/index.ts');
    await stack.send(
      [createMailboxInstruction({ programId: stack.programId, owner: eve.publicKey, domain: DEV_DOMAIN })],
      [eve],
    );
    const parentSubject = `Ask me anything ${Date.now()}`;
    await smtpSend(addr(dora), addr(eve), parentSubject, 'Reply with a bounty if you like.');
    await waitForInbox(eve.publicKey, 1);
    const [parent] = await listInbox(stack.connection, stack.programId, eve.publicKey);

    const page = await newPage();
    await goTrustless(page);
    await importKey(page, eve);
    await openMessage(page, parentSubject);
    await page.getByRole('button', { name: 'Reply' }).click();
    await page.locator('textarea[name=body]').fill('Here is my answer, with a bounty.');
    await page.getByLabel('Amount in SOL').fill('0.01');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.getByTestId('prepay-card');
    await card.waitFor();
    expect(await page.getByTestId('quote-postage').textContent()).toBe('0.0001 SOL');
    await shot(page, '08-prepay-card');

    // The recipient reprices after the quote: the purchase is refused and the draft kept.
    const setPostage = (lamports: bigint) =>
      stack.send(
        [
          setMailboxFlagsInstruction({
            programId: stack.programId,
            owner: dora.publicKey,
            defaultPostage: lamports,
          }),
        ],
        [dora],
      );
    await setPostage(DEV_POSTAGE_LAMPORTS * 2n);
    await card.getByRole('button', { name: /Buy 1 stamp and send/ }).click();
    await expect
      .poll(() => card.getByRole('alert').textContent(), { timeout: 15_000 })
      .toMatch(/price changed to .* SOL per stamp.*Nothing was bought; your draft is kept/);
    expect(
      await getFrombox(stack.connection, stack.programId, fromHash(eve.publicKey), dora.publicKey),
    ).toBeNull();
    expect(await page.locator('textarea[name=body]').inputValue()).toBe('Here is my answer, with a bounty.');
    // The card is quoted again in place: the new price, and Buy asks for it.
    await expect
      .poll(() => page.getByTestId('quote-postage').textContent(), { timeout: 15_000 })
      .toBe('0.0002 SOL');
    await card.getByRole('button', { name: /Buy 1 stamp and send/ }).click();
    await page.getByTestId('receipt').waitFor({ timeout: 60_000 });
    await setPostage(DEV_POSTAGE_LAMPORTS);
    await shot(page, '09-prepay-resent');
    const sentAddress = (await page.getByTestId('receipt-email').textContent()) ?? '';
    const sent = await getEmailAt(stack.connection, stack.programId, sentAddress);
    expect(sent?.recipient.toBase58()).toBe(dora.publicKey.toBase58());
    expect(sent?.bountyLamports).toBe(10_000_000n);
    const week = BigInt(7 * 86_400);
    const now = BigInt(Math.floor(Date.now() / 1000));
    expect(sent?.expiresAt).toBeGreaterThan(now + week - 120n);
    expect(sent?.expiresAt).toBeLessThan(now + week + 120n);
    expect(
      Buffer.from(sent?.replyToHash ?? []).equals(Buffer.from(replyToHash(parent?.address.toBase58() ?? ''))),
    ).toBe(true);
    const frombox = await getFrombox(
      stack.connection,
      stack.programId,
      fromHash(eve.publicKey),
      dora.publicKey,
    );
    expect(frombox?.postageEscrow).toBe(0n);
    expect(frombox?.stamps).toBe(0n);
  }, 150_000);

  it('external wallet (injected provider): publishes a mailbox key, reads mail sealed to it, buys stamps in Balances', async () => {
    const frank = await stack.newMailbox();
    const page = await newPage();
    await injectWallet(page, frank, 'injected');
    await goTrustless(page);
    await page.getByRole('tab', { name: 'Connect a browser wallet' }).click();
    await page.getByLabel('New passphrase').fill(PASS);
    await page.getByLabel('Passphrase again').fill(PASS);
    await page.getByRole('button', { name: /Connect Injected wallet/ }).click();
    await page.getByRole('button', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Publish a mailbox key' }).click();
    // Before any SOL moves: rent, fee, total and the balance afterwards, in place.
    expect(await page.locator('.confirm-inline').textContent()).toMatch(
      /account rent 0\.0013\d* SOL \(returned when you remove the key\) \+ network fee 0\.000005 SOL \+ priority fee 0\.000000001 SOL = 0\.0013\d* SOL; balance afterwards \d+\.\d+ SOL/,
    );
    await page.getByRole('button', { name: 'Yes, publish' }).click();
    await expect
      .poll(() => page.getByRole('status').last().textContent(), { timeout: 30_000 })
      .toContain('Mailbox key published');
    await shot(page, '10-keys');
    const published = await getMailboxKey(stack.connection, stack.programId, frank.publicKey);
    expect(published).not.toBeNull();
    expect(await page.getByTestId('published-key').textContent()).toContain(published?.pubKey.toBase58());

    const subject = `For the delegated key ${Date.now()}`;
    await smtpSend('gina@remote.example', addr(frank), subject, 'Only the mailbox key opens this.');
    await waitForInbox(frank.publicKey, 1);
    await page.getByRole('button', { name: 'Inbox', exact: true }).click();
    await openMessage(page, subject);
    expect(await page.getByTestId('mail-text').textContent()).toBe('Only the mailbox key opens this.\n');

    await page.getByRole('button', { name: 'Balances' }).click();
    await page
      .getByLabel('Recipient (wallet address or alias)')
      .fill(stack.postageWallet.publicKey.toBase58());
    await page.getByRole('button', { name: 'Quote' }).click();
    await page.getByTestId('prepay-card').waitFor();
    await shot(page, '11-balances');
    await page
      .getByTestId('prepay-card')
      .getByRole('button', { name: /Buy 1 stamp/ })
      .click();
    await page.getByText('Stamps bought.').waitFor();
    const frombox = await getFrombox(
      stack.connection,
      stack.programId,
      fromHash(frank.publicKey),
      stack.postageWallet.publicKey,
    );
    expect(frombox?.stamps).toBe(1n);
  }, 120_000);

  it('backs up the keys when a mailbox key is published, and a fresh browser restores them and reads mail sealed to that key', async () => {
    const holder = await stack.newMailbox();
    const page = await newPage();
    await goTrustless(page);
    // The paste field is masked and warns; the key can come from a keypair file instead.
    expect(await page.getByLabel('Secret key (Solana CLI keypair JSON or base58)').getAttribute('type')).toBe(
      'password',
    );
    await page.getByText('Whoever sees this key controls the wallet').waitFor();
    await page.getByTestId('keypair-file').setInputFiles({
      name: 'id.json',
      mimeType: 'application/json',
      buffer: Buffer.from(keyJson(holder)),
    });
    await page.getByLabel('New passphrase').fill(PASS);
    await page.getByLabel('Passphrase again').fill(PASS);
    await page.getByRole('button', { name: 'Import and unlock' }).click();
    await page.getByRole('button', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Publish a mailbox key' }).click();
    await page.getByRole('button', { name: 'Yes, publish' }).click();
    // Publishing prompts for a backup.
    const prompt = page.getByTestId('backup-prompt');
    await prompt.waitFor({ timeout: 30_000 });
    const published = await getMailboxKey(stack.connection, stack.programId, holder.publicKey);
    expect(published).not.toBeNull();
    await prompt.getByLabel('Backup passphrase', { exact: true }).fill('backup pass 1');
    await prompt.getByLabel('Backup passphrase again').fill('backup pass 2');
    await prompt.getByRole('button', { name: 'Download backup' }).click();
    await expect.poll(() => prompt.getByRole('alert').textContent()).toBe('The two passphrases differ.');
    await prompt.getByLabel('Backup passphrase again').fill('backup pass 1');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      prompt.getByRole('button', { name: 'Download backup' }).click(),
    ]);
    const backupText = readFileSync((await download.path()) as string, 'utf8');
    expect(download.suggestedFilename()).toMatch(/^sealpost-keys-\w{8}-\d{4}-\d{2}-\d{2}\.json$/);
    expect(JSON.parse(backupText)).toMatchObject({
      format: 'sealpost-key-backup',
      version: 1,
      mailbox_keys: 1,
    });
    await page.getByTestId('backup-done').waitFor();
    await shot(page, '10b-backup-prompt');
    // Removing the published key asks first; keeping it changes nothing.
    await page.getByRole('button', { name: 'Remove the published key' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect(await getMailboxKey(stack.connection, stack.programId, holder.publicKey)).not.toBeNull();

    const subject = `Sealed to the published key ${Date.now()}`;
    await smtpSend('hal@remote.example', addr(holder), subject, 'Restored keys open this.');
    await waitForInbox(holder.publicKey, 1);

    // Another browser: a fresh context with nothing stored.
    const other = await newPage();
    await goTrustless(other);
    await other.getByRole('tab', { name: 'Restore a backup' }).click();
    const fileInput = other.getByLabel('Backup file');
    await fileInput.setInputFiles({
      name: 'x.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{oops'),
    });
    await expect.poll(() => other.getByRole('alert').textContent()).toMatch(/not a Sealpost key backup/);
    await fileInput.setInputFiles({
      name: 'keys.json',
      mimeType: 'application/json',
      buffer: Buffer.from(backupText),
    });
    await expect.poll(() => other.getByTestId('backup-summary').textContent()).toContain('1 mailbox key(s)');
    await other.getByLabel('Backup passphrase').fill('wrong backup pass');
    await other.getByLabel('New passphrase').fill(PASS);
    await other.getByLabel('Passphrase again').fill(PASS);
    await other.getByRole('button', { name: 'Restore and unlock' }).click();
    await expect.poll(() => other.getByRole('alert').textContent()).toMatch(/does not open this backup/);
    await shot(other, '01b-restore-backup');
    await other.getByLabel('Backup passphrase').fill('backup pass 1');
    await other.getByRole('button', { name: 'Restore and unlock' }).click();
    await openMessage(other, subject);
    expect(await other.getByTestId('mail-text').textContent()).toBe('Restored keys open this.\n');
  }, 120_000);

  it('says what went wrong: wrong passphrase, chain RPC down, gateway without the body', async () => {
    // A message whose CID no gateway holds.
    const grace = await stack.newMailbox();
    const stranger = await stack.funded();
    const missingCid = await computeCid(new Uint8Array(randomBytes(64)));
    await stack.send(
      [
        sendMailInstruction({
          programId: stack.programId,
          sender: stranger.publicKey,
          recipient: grace.publicKey,
          index: 0n,
          fromHash: fromHash(stranger.publicKey),
          cid: missingCid,
        }),
      ],
      [stranger],
    );
    const page = await newPage();
    await goTrustless(page);
    await importKey(page, grace);
    const row = page.getByTestId('inbox-row').first();
    await expect.poll(() => row.textContent()).toContain('does not have this message (404)');
    await shot(page, '12-gateway-404');

    // A wallet that cannot pay for the bounty it offers.
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.locator('input[name=to]').fill(addr(stack.openWallet));
    await page.locator('input[name=subject]').fill('too generous');
    await page.locator('input[name=bounty]').fill('50');
    const pinsBefore = pinCount();
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(/Not enough SOL: this send needs 50\.\d+ SOL.*Nothing was pinned or sent/);
    await shot(page, '12b-insufficient-sol');
    expect(pinCount()).toBe(pinsBefore);

    await page.getByRole('button', { name: 'Lock', exact: true }).click();
    await page.getByLabel('Passphrase').fill('not the passphrase');
    await page.getByRole('button', { name: 'Unlock' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong passphrase. Try again.');

    const down = await newPage();
    await goTrustless(down, { rpcUrl: 'http://127.0.0.1:9' });
    await importKey(down, grace);
    await expect
      .poll(() => down.getByRole('alert').first().textContent())
      .toMatch(/chain RPC at http:\/\/127\.0\.0\.1:9 does not answer/);
    await shot(down, '13-rpc-down');
  }, 90_000);

  it('server mode with a Wallet Standard wallet: login and account creation signed by the wallet, a mailbox key published through it', async () => {
    const hank = await stack.newMailbox();
    const page = await newPage();
    await injectWallet(page, hank, 'standard');
    await page.goto(stack.url);
    await page.getByRole('tab', { name: 'Connect a browser wallet' }).click();
    await page.getByLabel('New passphrase').fill(PASS);
    await page.getByLabel('Passphrase again').fill(PASS);
    await page.getByRole('button', { name: 'Connect Test Standard Wallet' }).click();
    await page.getByRole('button', { name: 'Log in with my wallet' }).click();
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByText('No mail has been delivered to this account yet.').waitFor();
    expect(await new AccountsRepo(stack.store.db).get(hank.publicKey.toBase58())).toMatchObject({
      source: 'self',
    });
    await page.getByRole('button', { name: 'Keys', exact: true }).click();
    await page.getByRole('button', { name: 'Publish a mailbox key' }).click();
    await page.getByRole('button', { name: 'Yes, publish' }).click();
    await expect
      .poll(() => page.getByRole('status').last().textContent(), { timeout: 30_000 })
      .toContain('Mailbox key published');
    expect(await getMailboxKey(stack.connection, stack.programId, hank.publicKey)).not.toBeNull();
    // A loopback RPC node is a local validator in Wallet Standard terms.
    expect(standardChains).toEqual(['solana:localnet']);
  }, 90_000);

  it('server mode: wallet login, folders with the delivered mail, settings, pin provider set and removed with step-up, compose through the server', async () => {
    const owner = stack.openWallet;
    // Mail from a wallet address, stored with its Email account before the page loads.
    const stored = new MessagesRepo(stack.store.db);
    const countBefore = (await stored.listForWallet(owner.publicKey.toBase58())).length;
    await smtpSend(addr(bob), addr(owner), 'From a wallet, read in server mode', 'Reply on chain, please.');
    await expect
      .poll(async () => (await stored.listForWallet(owner.publicKey.toBase58())).length, { timeout: 30_000 })
      .toBe(countBefore + 1);
    const page = await newPage();
    await page.goto(stack.url);
    await importKey(page, owner);
    await page.getByRole('button', { name: 'Log in with my wallet' }).click();
    await expect.poll(() => page.getByTestId('mode').textContent()).toBe('server');
    const row = page.getByTestId('server-row').filter({ hasText: 'Grüße from SMTP — trustless' });
    await row.waitFor();
    await shot(page, '14-server-folders');
    await page.getByLabel('Search').fill('zweite zeile');
    await expect.poll(() => page.getByTestId('server-row').count()).toBe(1);
    await row.click();
    await expect
      .poll(() => page.getByTestId('mail-subject').textContent())
      .toBe('Grüße from SMTP — trustless');
    // A sender outside the chain: the reply goes through the server, with no on-chain link.
    await page.getByRole('button', { name: 'Reply' }).click();
    await page.getByLabel('Subject').waitFor();
    expect(await page.getByTestId('reply-chip').count()).toBe(0);
    await page.getByRole('button', { name: 'Mail', exact: true }).click();
    await page.getByLabel('Search').fill('');
    // A wallet sender: Reply links to its Email account on chain and goes direct-signed.
    const walletRow = page
      .getByTestId('server-row')
      .filter({ hasText: 'From a wallet, read in server mode' });
    await walletRow.waitFor();
    const emailAddress = (await stored.listForWallet(owner.publicKey.toBase58())).at(-1)?.emailAddress;
    expect(emailAddress).toBeTruthy();
    await walletRow.click();
    await page.getByRole('button', { name: 'Reply' }).click();
    await page.getByTestId('reply-chip').waitFor();
    const e = String(emailAddress);
    expect(await page.getByTestId('reply-chip').textContent()).toContain(`${e.slice(0, 4)}…${e.slice(-4)}`);
    expect(await page.locator('input[name=to]').inputValue()).toBe(addr(bob));
    expect(await page.getByLabel('on chain, signed by my wallet').isChecked()).toBe(true);

    await page.getByRole('button', { name: 'Pin provider' }).click();
    await expect.poll(() => page.getByTestId('pin-status').textContent()).toBe('Status: not configured');
    await page.getByLabel('Endpoint').fill(stack.pinUrl);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByTestId('pin-status').textContent()).toBe('Status: configured (remote)');
    await shot(page, '15-pin-provider');
    const accounts = new AccountsRepo(stack.store.db);
    expect((await accounts.getPinProvider(owner.publicKey.toBase58()))?.kind).toBe('remote');
    // Removing asks first; "Keep it" keeps it.
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect((await accounts.getPinProvider(owner.publicKey.toBase58()))?.kind).toBe('remote');
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Yes, remove it' }).click();
    await expect.poll(() => page.getByTestId('pin-status').textContent()).toBe('Status: not configured');
    expect(await accounts.getPinProvider(owner.publicKey.toBase58())).toBeUndefined();
    const audit = await accounts.listAudit({ target: owner.publicKey.toBase58() });
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['pin_provider.set', 'pin_provider.delete']),
    );

    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect((await accounts.get(owner.publicKey.toBase58()))?.timezone).toBe('Europe/Berlin');
    await page.getByRole('button', { name: 'Prepare export' }).click();
    await page.getByTestId('export-link').waitFor();
    await shot(page, '16-account');

    // Compose through the server to an open mailbox: the pipeline puts it on chain.
    const before = (await listInbox(stack.connection, stack.programId, bob.publicKey)).length;
    await page.getByRole('button', { name: 'Compose' }).click();
    await page.locator('input[name=to]').fill(addr(bob));
    await page.getByLabel('Subject').fill('Through the server');
    await page.locator('textarea[name=body]').fill('Submitted over HTTP.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('server-receipt').waitFor();
    await waitForInbox(bob.publicKey, before + 1);
  }, 150_000);
});
