// Webmail weight and speed on the dev stack:
//  - the initial JS and CSS the page loads (what index.html references),
//    raw and gzip, and the lazily loaded chunks;
//  - time to an interactive inbox in headless Chromium: page load to the
//    unlock screen, then unlock (PBKDF2 of the passphrase) to the inbox
//    listing its rows, and to every row showing its subject (each message
//    fetched from the gateway and opened in the page).
//
//   npm run bench:webmail -- [--messages 20] [--runs 5]
//
// Every run is a fresh browser context (cold HTTP cache) with the vault and
// settings already in localStorage, the way a returning user opens it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import nodemailer from 'nodemailer';
import { listInbox } from '../chain/client/index.ts';
import { DEV_DOMAIN } from '../src/run/dev/dev-stack.ts';
import { launchChromium, startWebmailStack } from '../test/support/webmail-stack.ts';

const { values } = parseArgs({
  options: { messages: { type: 'string', default: '20' }, runs: { type: 'string', default: '5' } },
});
const MESSAGES = Number(values.messages);
const RUNS = Number(values.runs);
const PASS = 'bench passphrase';

function kib(n: number): string {
  return `${(n / 1024).toFixed(1)} KiB`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

const stack = await startWebmailStack();
const browser = await launchChromium();
try {
  // Sizes: what index.html pulls in at load, and the rest.
  const index = readFileSync(join(stack.webmailDir, 'index.html'), 'utf8');
  const initial = new Set(
    [...index.matchAll(/(?:src|href)="\.\/assets\/([^"]+)"/g)].map((m) => m[1] as string),
  );
  console.log('\nBundle (vite build, minified)');
  let initialRaw = 0;
  let initialGz = 0;
  for (const file of readdirSync(join(stack.webmailDir, 'assets')).sort()) {
    const bytes = readFileSync(join(stack.webmailDir, 'assets', file));
    const gz = gzipSync(bytes, { level: 9 }).length;
    const isInitial = initial.has(file);
    if (isInitial) {
      initialRaw += statSync(join(stack.webmailDir, 'assets', file)).size;
      initialGz += gz;
    }
    console.log(
      `  ${isInitial ? 'initial' : 'lazy   '}  ${file.padEnd(28)} ${kib(bytes.length).padStart(10)}  gzip ${kib(gz).padStart(9)}`,
    );
  }
  console.log(`  initial total: ${kib(initialRaw)}, gzip ${kib(initialGz)}`);
  const app = readdirSync(join(stack.webmailDir, 'assets')).find((f) => f.startsWith('app-'));
  if (app) {
    const gz = gzipSync(readFileSync(join(stack.webmailDir, 'assets', app)), { level: 9 }).length;
    console.log(`  loaded before the inbox is interactive (initial + ${app}): gzip ${kib(initialGz + gz)}`);
  }

  // Mail to read.
  const owner = stack.openWallet;
  const to = `${owner.publicKey.toBase58()}@${DEV_DOMAIN}`;
  const smtp = nodemailer.createTransport({
    host: '127.0.0.1',
    port: stack.mxPort,
    secure: false,
    ignoreTLS: true,
  });
  for (let i = 0; i < MESSAGES; i++) {
    await smtp.sendMail({
      envelope: { from: 'bench@remote.example', to: [to] },
      raw: `From: bench@remote.example\r\nTo: ${to}\r\nSubject: bench ${i}\r\n\r\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit.\r\n'.repeat(20)}\r\n`,
    });
  }
  const deadline = Date.now() + 120_000;
  while (
    (await listInbox(stack.connection, stack.programId, owner.publicKey, { limit: MESSAGES })).length <
    MESSAGES
  ) {
    if (Date.now() > deadline) throw new Error('the messages did not all land on chain');
    await new Promise((r) => setTimeout(r, 200));
  }

  // One set-up run stores the vault and the trustless settings.
  const setup = await browser.newContext();
  const page = await setup.newPage();
  await page.goto(stack.url);
  await page.evaluate((s) => localStorage.setItem('sealpost.settings.v1', JSON.stringify(s)), {
    rpcUrl: stack.rpcUrl,
    gatewayUrl: stack.gatewayUrl,
    pinUrl: stack.pinUrl,
    pinToken: '',
    programId: stack.programId,
    apiUrl: '',
  });
  await page.reload();
  await page
    .getByLabel('Secret key (Solana CLI keypair JSON or base58)')
    .fill(JSON.stringify(Array.from(owner.secretKey)));
  await page.getByLabel('New passphrase').fill(PASS);
  await page.getByLabel('Passphrase again').fill(PASS);
  await page.getByRole('button', { name: 'Import and unlock' }).click();
  await page.getByTestId('inbox-row').first().waitFor({ timeout: 60_000 });
  const storage = await page.evaluate(() => JSON.stringify(Object.fromEntries(Object.entries(localStorage))));
  await setup.close();

  const toUnlock: number[] = [];
  const toRows: number[] = [];
  const toSubjects: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext();
    await context.addInitScript((s: string) => {
      if (!localStorage.getItem('sealpost.vault.v1')) {
        for (const [k, v] of Object.entries(JSON.parse(s) as Record<string, string>))
          localStorage.setItem(k, v);
      }
    }, storage);
    const p = await context.newPage();
    const t0 = performance.now();
    await p.goto(stack.url, { waitUntil: 'commit' });
    await p.getByLabel('Passphrase').waitFor();
    const t1 = performance.now();
    await p.getByLabel('Passphrase').fill(PASS);
    const t2 = performance.now();
    await p.getByRole('button', { name: 'Unlock' }).click();
    await p.getByTestId('inbox-row').first().waitFor({ timeout: 60_000 });
    const t3 = performance.now();
    await p.waitForFunction(
      (n) => {
        const rows = Array.from(document.querySelectorAll('[data-testid="inbox-row"]'));
        return rows.length >= n && rows.every((r) => /bench \d+/.test(r.textContent ?? ''));
      },
      Math.min(MESSAGES, 20),
      { timeout: 60_000 },
    );
    const t4 = performance.now();
    toUnlock.push(t1 - t0);
    toRows.push(t3 - t2);
    toSubjects.push(t4 - t2);
    await context.close();
  }
  console.log(`\nTime to an interactive inbox (${MESSAGES} messages, ${RUNS} cold runs, median)`);
  console.log(`  page load → unlock screen ready      ${median(toUnlock).toFixed(0)} ms`);
  console.log(`  unlock → inbox rows listed (chain)   ${median(toRows).toFixed(0)} ms`);
  console.log(`  unlock → every row's subject shown   ${median(toSubjects).toFixed(0)} ms`);
  console.log(
    `  page load → interactive inbox        ${(median(toUnlock) + median(toRows)).toFixed(0)} ms (plus the time to type the passphrase)`,
  );
} finally {
  await browser.close();
  await stack.close();
}
