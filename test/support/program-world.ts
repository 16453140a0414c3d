// Shared fixture for the tests of the real mail program: the world of
// chain/program/host/world.ts (also used by bench:program), plus the assertion on
// a named custom error and the balance changes of one transaction.
import { Buffer } from 'node:buffer';
import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { expect } from 'vitest';
import { MAIL_ERRORS, type MailErrorName } from '../../chain/client/errors.ts';
import type { RunResult } from '../../chain/program/host/runtime.ts';
import { expectOk, type World } from '../../chain/program/host/world.ts';

export * from '../../chain/program/host/world.ts';

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

/** Each account's lamports and data (the data as hex: a large account compares in one step). */
type Snapshot = { key: string; lamports: bigint; data: string | null }[];

function snapshot(w: World, keys: PublicKey[]): Snapshot {
  return keys.map((k) => {
    const data = w.data(k);
    return { key: k.toBase58(), lamports: w.balance(k), data: data && Buffer.from(data).toString('hex') };
  });
}

/**
 * Runs `ix` (through `send`, `w.run` by default) expecting the program error
 * `name`, and checks that every account the instruction names, and every one
 * in `also`, kept its lamports and data, and that the transaction's fee payer
 * (the runtime's payer unless given) paid only the fee: an attack moves nothing.
 */
export function refusedUnchanged(
  w: World,
  ix: TransactionInstruction,
  name: MailErrorName,
  also: PublicKey[] = [],
  send: () => RunResult = () => w.run(ix),
  feePayer: PublicKey = w.rt.payer.publicKey,
): void {
  const keys = [...ix.keys.map((k) => k.pubkey), ...also, feePayer];
  const before = snapshot(w, keys);
  const r = send();
  expectErr(r, name);
  const fee = BigInt(r.fee);
  const expected = before.map((s) =>
    s.key === feePayer.toBase58() ? { ...s, lamports: s.lamports - fee } : s,
  );
  expect(snapshot(w, keys)).toEqual(expected);
}
