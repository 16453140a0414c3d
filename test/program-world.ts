// Shared fixture for the tests of the real mail program: the world of
// chain/program/world.ts (also used by bench:program), plus the assertion on
// a named custom error and the balance changes of one transaction.
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { expect } from 'vitest';
import { MAIL_ERRORS, type MailErrorName } from '../chain/errors.ts';
import type { RunResult } from '../chain/program/runtime.ts';
import { expectOk, type World } from '../chain/program/world.ts';

export * from '../chain/program/world.ts';

export function expectErr(r: RunResult, name: MailErrorName): void {
  if (r.ok) throw new Error(`expected ${name}, but the transaction succeeded\n${r.logs.join('\n')}`);
  expect({ code: r.err?.customCode, message: r.err?.message }).toMatchObject({ code: MAIL_ERRORS[name] });
}

/** Runs one transaction (it must succeed) and returns each watched account's balance change in it. */
export function deltas(w: World, ix: TransactionInstruction, watch: PublicKey[]): bigint[] {
  const before = watch.map((k) => w.balance(k));
  expectOk(w.run(ix));
  return watch.map((k, i) => w.balance(k) - (before[i] as bigint));
}

/**
 * Runs `ix` expecting the program error `name`, and checks that no watched
 * account changed: neither its balance nor its data (a refusal moves nothing).
 */
export function refused(w: World, ix: TransactionInstruction, name: MailErrorName, watch: PublicKey[]): void {
  const before = watch.map((k) => [k.toBase58(), w.balance(k), w.data(k)] as const);
  expectErr(w.run(ix), name);
  expect(watch.map((k) => [k.toBase58(), w.balance(k), w.data(k)] as const)).toEqual(before);
}
