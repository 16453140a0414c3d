// Test harness: an in-memory InvokeContext and transaction executor that
// drives the real mail program and enforces the bank's rules from
// program-api.ts (writable accounts only, data/owner changes only by the
// owner, lamport debits only from owned accounts or System-owned writable
// signers, balanced instructions, atomic transactions).
import { Keypair, type PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { SYSTEM_PROGRAM_ID } from '../../bytes.ts';
import { parseMailProgramError } from '../../errors.ts';
import { DEFAULT_PROGRAM_ID } from '../../program-id.ts';
import type { AccountState, InstructionAccount, InvokeContext, Program } from '../program-api.ts';
import { ProgramError } from '../program-api.ts';
import { createMailProgram } from './index.ts';

export const rent = (size: number): bigint => (128n + BigInt(size)) * 6960n;

export type TxResult =
  | { ok: true; logs: string[] }
  | { ok: false; code: number | null; error: Error; logs: string[] };

/** A rule the real bank enforces was broken: a program bug, never an expected refusal. */
export class BankViolation extends Error {}

function clone(s: AccountState): AccountState {
  return { ...s, data: s.data.slice() };
}

export class TestChain {
  readonly program: Program;
  readonly accounts = new Map<string, AccountState>();
  now = 1_700_000_000n;
  slot = 1n;

  constructor(readonly programId: string = DEFAULT_PROGRAM_ID) {
    this.program = createMailProgram(programId);
  }

  wallet(lamports = 10_000_000_000n): PublicKey {
    const pk = Keypair.generate().publicKey;
    this.fund(pk, lamports);
    return pk;
  }

  fund(key: PublicKey | string, lamports: bigint): void {
    const address = key.toString();
    const prev = this.accounts.get(address);
    const base = prev ?? {
      lamports: 0n,
      owner: SYSTEM_PROGRAM_ID,
      data: new Uint8Array(0),
      executable: false,
    };
    this.accounts.set(address, { ...base, lamports: base.lamports + lamports });
  }

  balance(key: PublicKey | string): bigint {
    return this.accounts.get(key.toString())?.lamports ?? 0n;
  }

  data(key: PublicKey | string): Uint8Array | null {
    return this.accounts.get(key.toString())?.data ?? null;
  }

  exists(key: PublicKey | string): boolean {
    return this.accounts.has(key.toString());
  }

  /** Runs a transaction; every key marked signer counts as signed. */
  execute(...ixs: TransactionInstruction[]): TxResult {
    const snapshot = new Map([...this.accounts].map(([k, v]) => [k, clone(v)]));
    const flags = new Map<string, { isSigner: boolean; isWritable: boolean }>();
    for (const ix of ixs) {
      for (const k of ix.keys) {
        const f = flags.get(k.pubkey.toBase58()) ?? { isSigner: false, isWritable: false };
        flags.set(k.pubkey.toBase58(), {
          isSigner: f.isSigner || k.isSigner,
          isWritable: f.isWritable || k.isWritable,
        });
      }
    }
    const logs: string[] = [];
    try {
      for (const ix of ixs) {
        if (ix.programId.toBase58() !== this.programId)
          throw new Error(`no program ${ix.programId.toBase58()}`);
        const accounts = ix.keys.map((k) => ({
          address: k.pubkey.toBase58(),
          ...flags.get(k.pubkey.toBase58()),
        }));
        this.invoke(accounts as InstructionAccount[], new Uint8Array(ix.data), logs);
      }
      return { ok: true, logs };
    } catch (err) {
      this.accounts.clear();
      for (const [k, v] of snapshot) this.accounts.set(k, v);
      if (err instanceof BankViolation || !(err instanceof Error)) throw err;
      if (!(err instanceof ProgramError)) throw err;
      logs.push(`Program ${this.programId} failed: custom program error: 0x${err.code.toString(16)}`);
      return { ok: false, code: parseMailProgramError(logs, this.programId)?.code ?? null, error: err, logs };
    }
  }

  private invoke(accounts: InstructionAccount[], data: Uint8Array, logs: string[]): void {
    const before = new Map<string, AccountState | null>();
    const touched = new Set<string>();
    const ctx: InvokeContext = {
      programId: this.programId,
      accounts,
      data,
      clock: { slot: this.slot, unixTimestamp: this.now },
      getAccount: (address) => {
        const s = this.accounts.get(address);
        return s ? clone(s) : null;
      },
      setAccount: (address, next) => {
        const meta = accounts.find((a) => a.address === address);
        if (!meta?.isWritable) throw new BankViolation(`write to read-only ${address}`);
        const prev = this.accounts.get(address) ?? null;
        if (!before.has(address)) before.set(address, prev && clone(prev));
        touched.add(address);
        this.checkWrite(address, meta, prev, next);
        if (next === null || (next.lamports === 0n && next.data.length === 0)) this.accounts.delete(address);
        else this.accounts.set(address, clone(next));
      },
      rentExemptMinimum: (n) => rent(n),
      log: (m) => logs.push(`Program log: ${m}`),
    };
    this.program.process(ctx);
    let sumBefore = 0n;
    let sumAfter = 0n;
    for (const address of touched) {
      sumBefore += before.get(address)?.lamports ?? 0n;
      const after = this.accounts.get(address);
      sumAfter += after?.lamports ?? 0n;
      if (after && after.owner === this.programId && after.lamports < rent(after.data.length)) {
        throw new BankViolation(`${address} left below rent exemption`);
      }
    }
    if (sumBefore !== sumAfter)
      throw new BankViolation(`unbalanced instruction: ${sumBefore} -> ${sumAfter}`);
  }

  private checkWrite(
    address: string,
    meta: InstructionAccount,
    prev: AccountState | null,
    next: AccountState | null,
  ): void {
    const prevOwner = prev?.owner ?? SYSTEM_PROGRAM_ID;
    const ownedByProgram = prevOwner === this.programId;
    // Assigning a fresh (data-less, System-owned) account is what creating a PDA does.
    const fresh = prev === null || (prevOwner === SYSTEM_PROGRAM_ID && prev.data.length === 0);
    const prevData = prev?.data ?? new Uint8Array(0);
    const nextData = next?.data ?? new Uint8Array(0);
    const dataChanged = prevData.length !== nextData.length || prevData.some((b, i) => b !== nextData[i]);
    const ownerChanged = next !== null && next.owner !== prevOwner;
    if ((dataChanged || ownerChanged) && !ownedByProgram && !fresh) {
      throw new BankViolation(`data/owner change of ${address} owned by ${prevOwner}`);
    }
    if (ownerChanged && next?.owner !== this.programId)
      throw new BankViolation(`assigned ${address} elsewhere`);
    const debit = (prev?.lamports ?? 0n) > (next?.lamports ?? 0n);
    const systemSigner = prevOwner === SYSTEM_PROGRAM_ID && meta.isSigner && meta.isWritable;
    if (debit && !ownedByProgram && !systemSigner) throw new BankViolation(`debit of ${address} not allowed`);
  }
}
