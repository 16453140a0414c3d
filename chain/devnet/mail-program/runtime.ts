// One instruction's view of the accounts: flag checks, typed reads, lamport
// moves and account creation on a working copy that is written back through
// the bank only when the instruction succeeds (commit). Repeated addresses in
// the account list share one working entry, so aliasing cannot double-count.
import bs58 from 'bs58';
import { DecodeError, type Input, type Layout } from '../../accounts/layout.ts';
import { SYSTEM_PROGRAM_ID, U64_MAX } from '../../bytes.ts';
import { MAIL_ERRORS, mailErrorName } from '../../errors.ts';
import type { AccountState, Address, InstructionAccount, InvokeContext } from '../program-api.ts';
import { ProgramError } from '../program-api.ts';
import type { Pdas } from './pdas.ts';

export const E = MAIL_ERRORS;

/** Fails the instruction; the message names the error (the bank logs it) and says why. */
export function fail(code: number, message: string): never {
  throw new ProgramError(code, `${mailErrorName(code) ?? code}: ${message}`);
}

export function add(a: bigint, b: bigint): bigint {
  const r = a + b;
  if (r > U64_MAX) fail(E.InvalidArgument, 'arithmetic overflow');
  return r;
}

export function mul(a: bigint, b: bigint): bigint {
  const r = a * b;
  if (r > U64_MAX) fail(E.InvalidArgument, 'arithmetic overflow');
  return r;
}

/** Raw 32 bytes of a base58 address (PDA seeds). */
export function addressBytes(address: Address): Uint8Array {
  return bs58.decode(address);
}

interface Entry {
  state: AccountState | null;
  dirty: boolean;
}

export class Run {
  readonly now: bigint;
  readonly programId: Address;
  private readonly entries = new Map<Address, Entry>();

  constructor(
    readonly ctx: InvokeContext,
    readonly pdas: Pdas,
  ) {
    this.now = ctx.clock.unixTimestamp;
    this.programId = ctx.programId;
  }

  expectAccounts(...counts: number[]): number {
    const n = this.ctx.accounts.length;
    if (!counts.includes(n)) fail(E.InvalidInstruction, `expected ${counts.join(' or ')} accounts, got ${n}`);
    return n;
  }

  account(i: number): InstructionAccount {
    const a = this.ctx.accounts[i];
    if (!a) fail(E.InvalidInstruction, `missing account ${i}`);
    return a;
  }

  signer(i: number, writable = false): Address {
    const a = this.account(i);
    if (!a.isSigner) fail(E.MissingSigner, `account ${i} (${a.address}) must sign`);
    if (writable && !a.isWritable) fail(E.NotWritable, `account ${i} (${a.address}) must be writable`);
    return a.address;
  }

  writable(i: number): Address {
    const a = this.account(i);
    if (!a.isWritable) fail(E.NotWritable, `account ${i} (${a.address}) must be writable`);
    return a.address;
  }

  readonly(i: number): Address {
    return this.account(i).address;
  }

  system(i: number): void {
    if (this.account(i).address !== SYSTEM_PROGRAM_ID)
      fail(E.InvalidAccount, `account ${i} must be the System program`);
  }

  /** Fails InvalidPda unless `address` is the canonical PDA of `seeds`; returns the bump. */
  expectPda(address: Address, seeds: Uint8Array[], what: string): number {
    const d = this.pdas.find(seeds);
    if (d.address !== address) fail(E.InvalidPda, `${what}: expected ${d.address}, got ${address}`);
    return d.bump;
  }

  /** Cheap check of an existing account against its stored bump. */
  expectStoredPda(address: Address, seeds: Uint8Array[], bump: number, what: string): void {
    if (this.pdas.withBump(seeds, bump) !== address) fail(E.InvalidPda, `${what}: ${address} is not its PDA`);
  }

  private entry(address: Address): Entry {
    let e = this.entries.get(address);
    if (!e) {
      const s = this.ctx.getAccount(address);
      e = { state: s && { ...s }, dirty: false };
      this.entries.set(address, e);
    }
    return e;
  }

  lamports(address: Address): bigint {
    return this.entry(address).state?.lamports ?? 0n;
  }

  /**
   * No record of ours yet. A System-owned account without data counts as
   * absent: anyone can send lamports to a PDA before it is created, which
   * must not block its creation.
   */
  isAbsent(address: Address): boolean {
    const s = this.entry(address).state;
    return s === null || (s.owner === SYSTEM_PROGRAM_ID && s.data.length === 0);
  }

  /** The account decoded as `layout`'s kind, or null when absent. */
  read<T extends { kind: string }>(address: Address, layout: Layout<T>): T | null {
    if (this.isAbsent(address)) return null;
    const s = this.entry(address).state as AccountState;
    if (s.owner !== this.programId) fail(E.InvalidAccount, `${address} is not owned by the mail program`);
    try {
      return layout.decode(s.data);
    } catch (err) {
      if (err instanceof DecodeError)
        fail(E.InvalidAccount, `${address} is not a ${layout.kind}: ${err.message}`);
      throw err;
    }
  }

  require<T extends { kind: string }>(address: Address, layout: Layout<T>): T {
    const v = this.read(address, layout);
    if (!v) fail(E.NotFound, `${layout.kind} ${address} does not exist`);
    return v;
  }

  expectAbsent(address: Address, what: string): void {
    if (!this.isAbsent(address)) fail(E.AlreadyExists, `${what} ${address} already exists`);
  }

  debit(address: Address, amount: bigint): void {
    if (amount === 0n) return;
    const e = this.entry(address);
    const have = e.state?.lamports ?? 0n;
    if (!e.state || have < amount)
      fail(E.InsufficientFunds, `${address} has ${have} lamports, needs ${amount}`);
    e.state.lamports = have - amount;
    e.dirty = true;
  }

  /** Debits a program-owned account, keeping it rent-exempt. */
  debitKeepingRent(address: Address, amount: bigint): void {
    const s = this.entry(address).state;
    const floor = this.ctx.rentExemptMinimum(s?.data.length ?? 0);
    if (!s || s.lamports - amount < floor)
      fail(E.InsufficientFunds, `${address} cannot pay ${amount} and stay rent-exempt`);
    this.debit(address, amount);
  }

  credit(address: Address, amount: bigint): void {
    if (amount === 0n) return;
    const e = this.entry(address);
    if (!e.state)
      e.state = { lamports: 0n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false };
    e.state.lamports = add(e.state.lamports, amount);
    e.dirty = true;
  }

  transfer(from: Address, to: Address, amount: bigint): void {
    this.debit(from, amount);
    this.credit(to, amount);
  }

  /** Creates a program account at `address` funded rent-exempt (+ `extra`) by `payer`. */
  create<T extends { kind: string }>(
    address: Address,
    layout: Layout<T>,
    value: Input<T>,
    payer: Address,
    extra = 0n,
  ): void {
    const data = layout.encode(value);
    this.transfer(payer, address, add(this.ctx.rentExemptMinimum(data.length), extra));
    const e = this.entry(address);
    e.state = { lamports: e.state?.lamports ?? 0n, owner: this.programId, data, executable: false };
    e.dirty = true;
  }

  write<T extends { kind: string }>(address: Address, layout: Layout<T>, value: Input<T>): void {
    const e = this.entry(address);
    if (!e.state) fail(E.NotFound, `${address} does not exist`);
    e.state.data = layout.encode(value);
    e.dirty = true;
  }

  /** Closes a program account, sending all its lamports to `to`. */
  close(address: Address, to: Address): void {
    this.transfer(address, to, this.lamports(address));
    this.entries.set(address, { state: null, dirty: true });
  }

  commit(): void {
    for (const [address, e] of this.entries) if (e.dirty) this.ctx.setAccount(address, e.state);
  }
}
