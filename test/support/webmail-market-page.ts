// What the webmail Market tests share: the confirmation sheet, the view's
// notice, the navigation, and the devnet clock (moved by the suite's skew).
import type { Connection, Keypair } from '@solana/web3.js';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { formatSol } from '../../src/mail/trustless/send.ts';
import { openMainNav } from './webmail-page.ts';

export const balanceOf = async (conn: Connection, kp: Keypair): Promise<bigint> =>
  BigInt(await conn.getBalance(kp.publicKey, 'confirmed'));
export const shownSol = (lamports: bigint): string => `${formatSol(lamports)} SOL`;

/** Confirms the open sheet; returns the "Balance afterwards" it showed. */
export async function confirmSheet(page: Page, button: string): Promise<string> {
  const sheet = page.getByTestId('action-confirm');
  await sheet.waitFor();
  const after = (await sheet.getByTestId('cost-after').textContent()) ?? '';
  await sheet.getByRole('button', { name: button }).click();
  return after;
}

/** How long a poll of the page waits for a chain read or a server answer to show (a loaded CI machine is slow). */
export const UI = { timeout: 30_000, interval: 100 } as const;

/** Waits for the Market view's answer line to match. */
export async function notice(page: Page, text: RegExp): Promise<void> {
  await expect.poll(() => page.getByTestId('market-notice').textContent(), UI).toMatch(text);
}

export async function openView(page: Page, view: string): Promise<void> {
  await openMainNav(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: view }).click();
  await page.getByRole('heading', { name: view, level: 1 }).waitFor();
}

/** Waits until the devnet's chain time reaches `target` (Unix seconds). */
export async function chainTimePast(conn: Connection, target: number): Promise<void> {
  await expect
    .poll(async () => (await conn.getBlockTime(await conn.getSlot('confirmed'))) ?? 0, {
      timeout: 30_000,
      interval: 200,
    })
    .toBeGreaterThanOrEqual(target);
}
