// The bank's rules for programs (chain/devnet/program-api.ts plus the devnet
// extension), atomicity, fees, and ledger compaction, driven through a probe
// program with transactions built and signed by web3.js.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Bank } from '../chain/devnet/bank.ts';
import {
  type AccountState,
  type InvokeContext,
  type Program,
  ProgramError,
} from '../chain/devnet/program-api.ts';
import { decodeTransaction } from '../chain/devnet/transaction.ts';

const SYSTEM = '11111111111111111111111111111111';
const PROBE = Keypair.generate().publicKey;
const [PDA] = PublicKey.findProgramAddressSync([Buffer.from('probe')], PROBE);
const RENT_10 = (128n + 10n) * 6960n;

/** What the probe program does, selected by the first data byte. */
enum Op {
  WriteReadonly,
  WriteForeignData,
  CreatePda,
  DebitNonSigner,
  Unbalanced,
  Fail,
  Throw,
  ReadUnlisted,
  CreatePdaUnderfunded,
  AdoptFundedWallet,
  ClosePda,
  WriteThenFail,
  LogClock,
}

function probe(): Program {
  const acct = (ctx: InvokeContext, i: number) => ctx.accounts[i]?.address as string;
  const state = (ctx: InvokeContext, i: number): AccountState =>
    ctx.getAccount(acct(ctx, i)) ?? {
      lamports: 0n,
      owner: SYSTEM,
      data: new Uint8Array(0),
      executable: false,
    };
  const move = (
    ctx: InvokeContext,
    from: number,
    to: number,
    lamports: bigint,
    toState?: Partial<AccountState>,
  ) => {
    const a = state(ctx, from);
    ctx.setAccount(acct(ctx, from), { ...a, lamports: a.lamports - lamports });
    const b = state(ctx, to);
    ctx.setAccount(acct(ctx, to), { ...b, ...toState, lamports: b.lamports + lamports });
  };
  return {
    programId: PROBE.toBase58(),
    process(ctx) {
      ctx.log(`op ${ctx.data[0]}`);
      switch (ctx.data[0] as Op) {
        case Op.WriteReadonly:
        case Op.WriteForeignData:
          ctx.setAccount(acct(ctx, 1), { ...state(ctx, 1), data: new Uint8Array([1]) });
          return;
        case Op.CreatePda:
          move(ctx, 0, 1, RENT_10, { owner: PROBE.toBase58(), data: new Uint8Array(10).fill(7) });
          return;
        case Op.DebitNonSigner:
          move(ctx, 1, 0, 1n);
          return;
        case Op.Unbalanced: {
          const b = state(ctx, 1);
          ctx.setAccount(acct(ctx, 1), { ...b, lamports: b.lamports + 1n });
          return;
        }
        case Op.Fail:
          throw new ProgramError(7, 'seven');
        case Op.Throw:
          throw new TypeError('oops');
        case Op.ReadUnlisted:
          ctx.getAccount(SYSTEM.replace(/1$/, '2'));
          return;
        case Op.CreatePdaUnderfunded:
          move(ctx, 0, 1, RENT_10 - 1n, { owner: PROBE.toBase58(), data: new Uint8Array(10) });
          return;
        case Op.AdoptFundedWallet:
          ctx.setAccount(acct(ctx, 1), { ...state(ctx, 1), owner: PROBE.toBase58() });
          return;
        case Op.ClosePda: {
          const pda = state(ctx, 1);
          const payer = state(ctx, 0);
          ctx.setAccount(acct(ctx, 1), null);
          ctx.setAccount(acct(ctx, 0), { ...payer, lamports: payer.lamports + pda.lamports });
          return;
        }
        case Op.WriteThenFail:
          move(ctx, 0, 1, 5n);
          throw new ProgramError(3, 'after a write');
        case Op.LogClock:
          ctx.log(`clock ${ctx.clock.slot} ${ctx.clock.unixTimestamp}`);
          return;
      }
    },
  };
}

const dirs: string[] = [];
const banks: Bank[] = [];
afterEach(() => {
  for (const b of banks.splice(0)) b.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function openBank(opts: Parameters<typeof Bank.open>[0] = {}): Bank {
  const bank = Bank.open({ programs: [probe()], finalizeDepth: 2, ...opts });
  banks.push(bank);
  return bank;
}

function funded(bank: Bank, sol = 1): Keypair {
  const kp = Keypair.generate();
  const out = bank.requestAirdrop(kp.publicKey.toBase58(), BigInt(sol * 1e9));
  expect(out.err).toBeNull();
  return kp;
}

function send(
  bank: Bank,
  payer: Keypair,
  ixs: TransactionInstruction[],
  extra: Keypair[] = [],
  mode: 'commit' | 'preflight' = 'commit',
) {
  const tx = new Transaction().add(...ixs);
  tx.recentBlockhash = bank.latestBlockhash('processed').blockhash;
  tx.feePayer = payer.publicKey;
  tx.sign(payer, ...extra);
  return bank.processTransaction(decodeTransaction(tx.serialize()), { mode, verifySignatures: true });
}

const probeIx = (op: Op, keys: { pubkey: PublicKey; isSigner: boolean; isWritable: boolean }[]) =>
  new TransactionInstruction({ programId: PROBE, keys, data: Buffer.from([op]) });
const w = (pubkey: PublicKey, isSigner = false) => ({ pubkey, isSigner, isWritable: true });
const r = (pubkey: PublicKey) => ({ pubkey, isSigner: false, isWritable: false });
const balance = (bank: Bank, k: Keypair | PublicKey) =>
  bank.getAccount(('publicKey' in k ? k.publicKey : k).toBase58())?.lamports ?? 0n;

describe('devnet bank rules', () => {
  it('lets a program create a PDA funded by a signing System account, and close it again', () => {
    const bank = openBank();
    const payer = funded(bank);
    const out = send(bank, payer, [probeIx(Op.CreatePda, [w(payer.publicKey, true), w(PDA)])]);
    expect(out.err).toBeNull();
    const pda = bank.getAccount(PDA.toBase58());
    expect(pda).toMatchObject({ lamports: RENT_10, owner: PROBE.toBase58() });
    expect([...(pda?.data ?? [])]).toEqual(Array(10).fill(7));
    expect(out.execution?.logs).toEqual([
      `Program ${PROBE.toBase58()} invoke [1]`,
      'Program log: op 2',
      `Program ${PROBE.toBase58()} consumed 5000 of 200000 compute units`,
      `Program ${PROBE.toBase58()} success`,
    ]);
    expect(send(bank, payer, [probeIx(Op.ClosePda, [w(payer.publicKey, true), w(PDA)])]).err).toBeNull();
    expect(bank.getAccount(PDA.toBase58())).toBeNull();
    expect(balance(bank, payer)).toBe(1_000_000_000n - 10_000n);
  });

  it.each([
    [Op.WriteReadonly, 'ReadonlyDataModified', true],
    [Op.WriteForeignData, 'ExternalAccountDataModified', false],
    [Op.DebitNonSigner, 'ExternalAccountLamportSpend', false],
    [Op.Unbalanced, 'UnbalancedInstruction', false],
    [Op.Throw, 'ProgramFailedToComplete', false],
    [Op.ReadUnlisted, 'MissingAccount', false],
    [Op.AdoptFundedWallet, 'ModifiedProgramId', false],
  ] as const)('refuses op %i with %s and charges only the fee', (op, error, readonly) => {
    const bank = openBank();
    const payer = funded(bank);
    const other = funded(bank);
    const out = send(bank, payer, [
      probeIx(op, [w(payer.publicKey, true), readonly ? r(other.publicKey) : w(other.publicKey)]),
    ]);
    expect(out.landed).toBe(true);
    expect(out.err).toEqual({ InstructionError: [0, error] });
    expect(balance(bank, payer)).toBe(1_000_000_000n - 5000n);
    expect(balance(bank, other)).toBe(1_000_000_000n);
    expect(bank.getAccount(other.publicKey.toBase58())?.owner).toBe(SYSTEM);
  });

  it('reports ProgramError codes as Custom and rolls back earlier writes and instructions', () => {
    const bank = openBank();
    const payer = funded(bank);
    const to = funded(bank);
    const custom = send(bank, payer, [probeIx(Op.Fail, [w(payer.publicKey, true)])]);
    expect(custom.err).toEqual({ InstructionError: [0, { Custom: 7 }] });
    expect(custom.execution?.logs?.at(-1)).toBe(
      `Program ${PROBE.toBase58()} failed: custom program error: 0x7`,
    );
    const out = send(bank, payer, [
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to.publicKey, lamports: 100_000 }),
      probeIx(Op.WriteThenFail, [w(payer.publicKey, true), w(to.publicKey)]),
    ]);
    expect(out.err).toEqual({ InstructionError: [1, { Custom: 3 }] });
    expect(balance(bank, to)).toBe(1_000_000_000n);
    expect(balance(bank, payer)).toBe(1_000_000_000n - 10_000n);
    expect(bank.signatureStatus(out.signature, false)?.err).toEqual({ InstructionError: [1, { Custom: 3 }] });
  });

  it('refuses accounts left below the rent-exempt minimum, and preflight lands nothing', () => {
    const bank = openBank();
    const payer = funded(bank);
    const pre = send(
      bank,
      payer,
      [probeIx(Op.CreatePdaUnderfunded, [w(payer.publicKey, true), w(PDA)])],
      [],
      'preflight',
    );
    expect(pre).toMatchObject({ landed: false, err: { InsufficientFundsForRent: { account_index: 1 } } });
    expect(balance(bank, payer)).toBe(1_000_000_000n);
    const landed = send(bank, payer, [probeIx(Op.CreatePdaUnderfunded, [w(payer.publicKey, true), w(PDA)])]);
    expect(landed.landed).toBe(true);
    expect(balance(bank, payer)).toBe(1_000_000_000n - 5000n);
    expect(bank.getAccount(PDA.toBase58())).toBeNull();
  });

  it('checks the fee payer before anything else', () => {
    const bank = openBank();
    const broke = Keypair.generate();
    expect(send(bank, broke, [probeIx(Op.Fail, [w(broke.publicKey, true)])])).toMatchObject({
      landed: false,
      err: 'AccountNotFound',
    });
    const payer = funded(bank);
    send(bank, payer, [probeIx(Op.CreatePda, [w(payer.publicKey, true), w(PDA)])]);
    // A program-owned account cannot pay fees.
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: PDA, lamports: 1 }),
    );
    tx.recentBlockhash = bank.latestBlockhash('processed').blockhash;
    tx.feePayer = payer.publicKey;
    tx.sign(payer);
    const decoded = decodeTransaction(tx.serialize());
    decoded.accountKeys[0] = PDA.toBase58();
    expect(bank.processTransaction(decoded, { mode: 'commit', verifySignatures: false }).err).toBe(
      'InvalidAccountForFee',
    );
    // Leaving the payer with dust below the rent minimum is refused too.
    const tight = funded(bank);
    const drain = send(bank, tight, [
      SystemProgram.transfer({
        fromPubkey: tight.publicKey,
        toPubkey: payer.publicKey,
        lamports: 1_000_000_000 - 5000 - 100,
      }),
    ]);
    expect(drain.err).toEqual({ InsufficientFundsForRent: { account_index: 0 } });
  });

  it('gives programs the slot and the injected clock, which never runs backwards', () => {
    let now = 1_700_000_000.7;
    const bank = openBank({ clock: () => now });
    const payer = funded(bank);
    const first = send(bank, payer, [probeIx(Op.LogClock, [w(payer.publicKey, true)])]);
    expect(first.execution?.logs).toContain(`Program log: clock ${bank.slot} 1700000000`);
    now = 1_600_000_000;
    bank.advanceSlot();
    const second = send(bank, payer, [probeIx(Op.LogClock, [w(payer.publicKey, true)])]);
    expect(second.execution?.logs).toContain(`Program log: clock ${bank.slot} 1700000000`);
    now = 1_700_000_100;
    bank.advanceSlot();
    expect(bank.slotInfo(bank.slot)?.blockTime).toBe(1_700_000_100);
    expect(bank.getTransaction(first.signature)?.blockTime).toBe(1_700_000_000);
  });

  it('advances slots and commitment, and compacts the ledger into a snapshot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealpost-bank-'));
    dirs.push(dir);
    const bank = openBank({ ledgerDir: dir, compactBytes: 1, historyLimit: 2 });
    const payer = funded(bank);
    const first = bank.slot;
    bank.advanceSlot();
    expect(bank.slotAt('confirmed')).toBe(first);
    const sigs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const to = Keypair.generate();
      const out = send(bank, payer, [
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to.publicKey, lamports: 1_000_000 }),
      ]);
      sigs.push(out.signature);
      expect(bank.signatureStatus(out.signature, false)?.confirmationStatus).toBe('processed');
      bank.advanceSlot();
      expect(bank.signatureStatus(out.signature, false)?.confirmationStatus).toBe('confirmed');
    }
    bank.advanceSlot();
    bank.advanceSlot();
    expect(bank.signatureStatus(sigs[4] as string, false)?.confirmationStatus).toBe('finalized');
    const slot = bank.slot;
    const lamports = balance(bank, payer);
    bank.close();
    banks.splice(banks.indexOf(bank), 1);

    expect(statSync(join(dir, 'ledger.log')).size).toBe(0);

    const again = openBank({ ledgerDir: dir, historyLimit: 2 });
    expect(again.slot).toBeGreaterThan(slot);
    expect(balance(again, payer)).toBe(lamports);
    // Recent transactions are never pruned, whatever the history limit.
    for (const s of sigs) expect(again.signatureStatus(s, true)?.err).toBeNull();
    // Once they are too old to be replayed, only the newest `historyLimit` remain.
    for (let i = 0; i < 310; i++) again.advanceSlot();
    again.close();
    banks.splice(banks.indexOf(again), 1);
    const third = openBank({ ledgerDir: dir });
    expect(sigs.map((s) => third.signatureStatus(s, true) !== null)).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
    expect(third.signatureStatus(sigs[4] as string, false)).toBeNull();
  });
});
