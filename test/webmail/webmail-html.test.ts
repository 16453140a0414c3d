// HTML mail in the reader (issue 34, parts 4 and 6): "Load remote content"
// adds no history entry; relative URLs never reach the webmail's own
// origin; SVG <image href>/xlink:href is held back by the sanitizer itself
// until remote content is allowed; the frame is as tall as its content at
// a phone's 390×844.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listInbox } from '../../chain/client/index.ts';
import { addr, webmailSuite } from '../support/webmail-page.ts';

const suite = webmailSuite();
let tracker: Server;
let trackerUrl = '';
const trackerHits: string[] = [];
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  tracker = createServer((req, res) => {
    trackerHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png', 'access-control-allow-origin': '*' });
    res.end(PNG);
  });
  await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', r));
  trackerUrl = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => tracker?.close(r));
});

describe('HTML mail in headless Chromium', () => {
  it('blocks relative and SVG references, loads remote content without a history entry, and sizes the frame', async () => {
    const { stack, kit } = suite;
    const holder = await stack.newMailbox();
    const subject = `Tall HTML ${Date.now()}`;
    const paragraphs = Array.from(
      { length: 80 },
      (_, i) => `<p class="para">Paragraph ${i + 1} of the long mail.</p>`,
    );
    const html = [
      '<p id="top">Top of the mail</p>',
      '<img id="relimg" src="rel-image.png" alt="relative">',
      '<img id="rel2" src="/assets/rel-root.png" alt="root relative">',
      '<div id="relbg" background="rel-bg.png" style="background-image:url(rel-style.png)">bg</div>',
      '<a id="rellink" href="rel-link.html">a relative link</a>',
      `<img id="remote" src="${trackerUrl}/img.png" alt="remote">`,
      `<svg width="10" height="10" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><image id="svg1" href="${trackerUrl}/svg-href.png" width="10" height="10"/><image id="svg2" xlink:href="${trackerUrl}/svg-xlink.png" width="10" height="10"/></svg>`,
      ...paragraphs,
      '<p id="bottom">Bottom of the mail</p>',
    ].join('\r\n');
    const to = addr(holder);
    const raw = [
      'From: Hal <hal@remote.example>',
      `To: ${to}`,
      `Subject: ${subject}`,
      'MIME-Version: 1.0',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
      '',
    ].join('\r\n');
    await nodemailer
      .createTransport({ host: '127.0.0.1', port: stack.mxPort, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: 'hal@remote.example', to: [to] }, raw });
    await kit.waitForInbox(holder.publicKey, 1);
    expect(await listInbox(stack.connection, stack.programId, holder.publicKey)).toHaveLength(1);

    const page = await kit.newPage({ width: 390, height: 844 });
    const own = new URL(stack.url).origin;
    const ownRequests: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(own) && /rel-/.test(r.url())) ownRequests.push(r.url());
    });
    await kit.goTrustless(page);
    await kit.importKey(page, holder);
    await kit.openMessage(page, subject);
    const frameEl = page.locator('iframe.html-body');
    const frame = page.frameLocator('iframe.html-body');
    await frame.locator('#bottom').waitFor({ state: 'attached' });

    // The sanitizer itself: relative URLs gone, SVG image references held back.
    expect(await frame.locator('#relimg').getAttribute('src')).toBeNull();
    expect(await frame.locator('#rel2').getAttribute('src')).toBeNull();
    expect(await frame.locator('#relbg').getAttribute('background')).toBeNull();
    expect(await frame.locator('#relbg').getAttribute('style')).not.toContain('rel-style');
    expect(await frame.locator('#rellink').getAttribute('href')).toBeNull();
    expect(await frame.locator('#remote').getAttribute('src')).toBeNull();
    for (const id of ['#svg1', '#svg2']) {
      const attrs = await frame
        .locator(id)
        .evaluate((el) => [
          el.getAttribute('href'),
          el.getAttributeNS('http://www.w3.org/1999/xlink', 'href'),
        ]);
      expect(attrs, `${id} keeps no reference`).toEqual([null, null]);
    }
    expect(await frame.locator('#svg1').getAttribute('data-blocked-href')).toBe(`${trackerUrl}/svg-href.png`);

    // The frame is as tall as its content (no 384 px clipping), within the maximum.
    await expect.poll(async () => (await frameEl.boundingBox())?.height ?? 0).toBeGreaterThan(1000);
    const content = await frame.locator('html').evaluate((el) => el.scrollHeight);
    const box = await frameEl.boundingBox();
    expect(box?.height ?? 0).toBeGreaterThanOrEqual(Math.min(content, 2400));
    expect(box?.height ?? 0).toBeLessThanOrEqual(2402);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await kit.shot(page, '03c-reader-html-tall-phone');
    expect(trackerHits).toEqual([]);

    // Load remote content: the remote and SVG references load, no history entry, Back goes to the inbox.
    const historyBefore = await page.evaluate(() => history.length);
    await page.getByRole('button', { name: 'Load remote content' }).click();
    await expect.poll(() => [...trackerHits].sort()).toEqual(['/img.png', '/svg-href.png', '/svg-xlink.png']);
    expect(await page.evaluate(() => history.length)).toBe(historyBefore);
    await frame.locator('#bottom').waitFor({ state: 'attached' });
    expect(await frame.locator('#relimg').getAttribute('src')).toBeNull();
    expect(ownRequests).toEqual([]);
    await page.goBack();
    await page.getByRole('heading', { name: /^Inbox/ }).waitFor();
    expect(ownRequests).toEqual([]);
  }, 120_000);
});
