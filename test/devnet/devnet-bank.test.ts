// The bank around Solana's runtime: what lands and what is refused, fees
// (priority fees included) as the runtime charges them, compute units and
// logs from the runtime, simulation agreeing with execution, the Clock
// sysvar following the node's slots, and ledger compaction. Transactions are
// built and signed by web3.js and go through Bank.processTransaction.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Bank } from '../../chain/devnet/bank.ts';
import { messageFee } from '../../chain/devnet/fees.ts';
import { decodeTransaction } from '../../chain/devnet/transaction.ts';

const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const CLOCK = 'SysvarC1ock11111111111111111111111111111111';

const dirs: string[] = [];
const banks: Bank[] = [];
afterEach(() => {
  for (const b of banks.splice(0)) b.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function openBank(opts: Parameters<typeof Bank.open>[0] = {}): Bank {
  const bank = Bank.open({ finalizeDepth: 2, ...opts });
  banks.push(bank);
  return bank;
}

function funded(bank: Bank, sol = 1): Keypair {
  const kp = Keypair.generate();
  const out = bank.requestAirdrop(kp.publicKey.toBase58(), BigInt(sol * 1e9));
  expect(out.err).toBeNull();
  return kp;
}

function signed(bank: Bank, payer: Keypair, ixs: TransactionInstruction[], extra: Keypair[] = []) {
  const tx = new Transaction().add(...ixs);
  tx.recentBlockhash = bank.latestBlockhash('processed').blockhash;
  tx.feePayer = payer.publicKey;
  tx.sign(payer, ...extra);
  return decodeTransaction(tx.serialize());
}

function send(
  bank: Bank,
  payer: Keypair,
  ixs: TransactionInstruction[],
  mode: 'commit' | 'preflight' | 'simulate' = 'commit',
) {
  return bank.processTransaction(signed(bank, payer, ixs), { mode, verifySignatures: true });
}

const transfer = (from: Keypair, to: PublicKey, lamports: number) =>
  SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports });
const memo = (text: string, signer?: PublicKey) =>
  new TransactionInstruction({
    programId: MEMO,
    keys: signer ? [{ pubkey: signer, isSigner: true, isWritable: false }] : [],
    data: Buffer.from(text),
  });
const balance = (bank: Bank, k: Keypair | PublicKey) =>
  bank.getAccount(('publicKey' in k ? k.publicKey : k).toBase58())?.lamports ?? 0n;

describe('devnet bank on the runtime', () => {
  it('charges a priority fee exactly as Solana does, and getFeeForMessage agrees', () => {
    const bank = openBank();
    const payer = funded(bank);
    const to = Keypair.generate().publicKey;
    const out = send(bank, payer, [
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
      ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 }),
      transfer(payer, to, 1_000_000),
    ]);
    expect(out.err).toBeNull();
    // 5000 per signature + ceil(1,000,000 µlamports × 1000 units / 1e6).
    expect(out.execution?.fee).toBe(6000n);
    expect(balance(bank, payer)).toBe(1_000_000_000n - 1_000_000n - 6000n);
    expect(bank.getTransaction(out.signature)?.fee).toBe(6000n);
    // Without a limit: 3000 units per builtin instruction (two here), so ceil(7 × 6000 / 1e6) = 1.
    const tx = signed(bank, payer, [
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 7 }),
      transfer(payer, to, 5),
    ]);
    const uncapped = bank.processTransaction(tx, { mode: 'commit', verifySignatures: true });
    expect(uncapped.execution?.fee).toBe(5001n);
    expect(messageFee(tx)).toBe(5001n);
  });

  it('lands a failing transaction with only its fee, undoing earlier instructions; preflight lands nothing', () => {
    const bank = openBank();
    const payer = funded(bank);
    const to = funded(bank);
    const ixs = [transfer(payer, to.publicKey, 100_000), transfer(payer, to.publicKey, 10_000_000_000)];
    const pre = send(bank, payer, ixs, 'preflight');
    expect(pre).toMatchObject({ landed: false, err: { InstructionError: [1, { Custom: 1 }] } });
    expect(balance(bank, payer)).toBe(1_000_000_000n);
    const out = send(bank, payer, ixs);
    expect(out.landed).toBe(true);
    expect(out.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect(out.execution?.logs).toContain(
      `Transfer: insufficient lamports ${1_000_000_000 - 5000 - 100_000}, need 10000000000`,
    );
    expect(balance(bank, to)).toBe(1_000_000_000n);
    expect(balance(bank, payer)).toBe(1_000_000_000n - 5000n);
    expect(bank.signatureStatus(out.signature, false)?.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect([...(out.execution?.writes.keys() ?? [])]).toEqual([payer.publicKey.toBase58()]);
  });

  it('refuses what the runtime refuses before charging a fee', () => {
    const bank = openBank();
    const broke = Keypair.generate();
    expect(send(bank, broke, [transfer(broke, Keypair.generate().publicKey, 1)])).toMatchObject({
      landed: false,
      err: 'AccountNotFound',
    });
    const payer = funded(bank);
    // A program id with no account: litesvm says InvalidProgramForExecution (a cluster: ProgramAccountNotFound).
    const ghost = new TransactionInstruction({
      programId: Keypair.generate().publicKey,
      keys: [],
      data: Buffer.alloc(0),
    });
    expect(send(bank, payer, [ghost])).toMatchObject({ landed: false, err: 'InvalidProgramForExecution' });
    // Leaving the payer with dust below the rent minimum.
    const drain = send(bank, payer, [
      transfer(payer, Keypair.generate().publicKey, 1_000_000_000 - 5000 - 100),
    ]);
    expect(drain.err).toEqual({ InsufficientFundsForRent: { account_index: 0 } });
    expect(balance(bank, payer)).toBe(1_000_000_000n - 5000n);
    const forged = signed(bank, payer, [transfer(payer, payer.publicKey, 1)]);
    const signature = forged.signatures[0] as Uint8Array;
    signature[0] = (signature[0] as number) ^ 1;
    expect(bank.processTransaction(forged, { mode: 'commit', verifySignatures: true })).toMatchObject({
      landed: false,
      err: 'SignatureFailure',
    });
  });

  it('reports compute units and the consumed line from the runtime, and simulation agrees with execution', () => {
    const bank = openBank();
    const payer = funded(bank);
    const ixs = [memo('hello from devnet', payer.publicKey)];
    const simulated = send(bank, payer, ixs, 'simulate');
    expect(simulated.landed).toBe(false);
    const out = send(bank, payer, ixs);
    expect(out.err).toBeNull();
    const units = out.execution?.unitsConsumed ?? 0;
    expect(units).toBeGreaterThan(0);
    expect(out.execution?.logs).toContain(
      `Program ${MEMO.toBase58()} consumed ${units} of 200000 compute units`,
    );
    expect(out.execution?.logs).toContain('Program log: hello from devnet');
    expect(simulated.execution).toMatchObject({
      err: null,
      logs: out.execution?.logs,
      unitsConsumed: units,
      fee: out.execution?.fee,
    });
    expect(bank.getTransaction(out.signature)?.unitsConsumed).toBe(units);
  });

  it('gives programs the open slot and the injected clock through the Clock sysvar', () => {
    let now = 1_700_000_000.7;
    const bank = openBank({ clock: () => now });
    const clock = () => {
      const data = bank.getAccount(CLOCK)?.data ?? new Uint8Array(40);
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      return { slot: Number(view.getBigUint64(0, true)), unix: Number(view.getBigInt64(32, true)) };
    };
    expect(clock()).toEqual({ slot: bank.slot, unix: 1_700_000_000 });
    now = 1_600_000_000; // never backwards
    bank.advanceSlot();
    expect(clock()).toEqual({ slot: bank.slot, unix: 1_700_000_000 });
    now = 1_700_000_100;
    bank.advanceSlot();
    expect(clock()).toEqual({ slot: bank.slot, unix: 1_700_000_100 });
    expect(bank.slotInfo(bank.slot)?.blockTime).toBe(1_700_000_100);
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
      const out = send(bank, payer, [transfer(payer, Keypair.generate().publicKey, 1_000_000)]);
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
    // The restored runtime holds the balance too: the payer can still pay.
    const later = send(again, payer, [transfer(payer, Keypair.generate().publicKey, 1_000_000)]);
    expect(later.err).toBeNull();
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
      false,
      true,
    ]);
    expect(third.signatureStatus(later.signature, true)?.err).toBeNull();
  });
});
