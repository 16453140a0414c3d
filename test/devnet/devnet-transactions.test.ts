// devnet over real HTTP/WebSocket with web3.js: airdrops, transfers, account
// creation, fees, rent, signatures, blockhash expiry, duplicates.
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  sendAndConfirmTransaction,
  Transaction,
  TransactionExpiredBlockheightExceededError,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDevnet, type TestDevnet, waitForStatus } from '../support/devnet-node.ts';

let t: TestDevnet;

beforeAll(async () => {
  t = await startTestDevnet({ mailProgram: false });
});

afterAll(async () => {
  await t?.close();
});

async function signedTransfer(from: Keypair, to: PublicKey, lamports: number, blockhash?: string) {
  const tx = new Transaction().add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }),
  );
  tx.recentBlockhash = blockhash ?? (await t.conn.getLatestBlockhash('processed')).blockhash;
  tx.feePayer = from.publicKey;
  tx.sign(from);
  return tx;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('devnet transactions', () => {
  it('airdrops and reports the balance', async () => {
    const who = Keypair.generate();
    expect(await t.conn.getBalance(who.publicKey)).toBe(0);
    await t.fund(who, 3);
    expect(await t.conn.getBalance(who.publicKey)).toBe(3 * LAMPORTS_PER_SOL);
    // Identical airdrops in the same slot still get distinct signatures.
    const [a, b] = await Promise.all([
      t.conn.requestAirdrop(who.publicKey, LAMPORTS_PER_SOL),
      t.conn.requestAirdrop(who.publicKey, LAMPORTS_PER_SOL),
    ]);
    expect(a).not.toBe(b);
    expect(await t.conn.getBalance(who.publicKey, 'processed')).toBe(5 * LAMPORTS_PER_SOL);
  });

  it('transfers with sendAndConfirmTransaction and charges 5000 lamports per signature', async () => {
    const from = Keypair.generate();
    const to = Keypair.generate();
    await t.fund(from, 2);
    const tx = new Transaction().add(
      SystemProgram.transfer({
        fromPubkey: from.publicKey,
        toPubkey: to.publicKey,
        lamports: LAMPORTS_PER_SOL,
      }),
    );
    const signature = await sendAndConfirmTransaction(t.conn, tx, [from]);
    expect(await t.conn.getBalance(to.publicKey)).toBe(LAMPORTS_PER_SOL);
    expect(await t.conn.getBalance(from.publicKey)).toBe(LAMPORTS_PER_SOL - 5000);

    const status = (await t.conn.getSignatureStatus(signature)).value;
    expect(status?.err).toBeNull();
    expect(['confirmed', 'finalized']).toContain(status?.confirmationStatus);

    const landed = await t.conn.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(landed?.meta?.fee).toBe(5000);
    expect(landed?.meta?.preBalances.slice(0, 2)).toEqual([2 * LAMPORTS_PER_SOL, 0]);
    expect(landed?.meta?.postBalances.slice(0, 2)).toEqual([LAMPORTS_PER_SOL - 5000, LAMPORTS_PER_SOL]);
    expect(landed?.meta?.logMessages).toEqual([
      'Program 11111111111111111111111111111111 invoke [1]',
      'Program 11111111111111111111111111111111 success',
    ]);
    expect(landed?.transaction.signatures[0]).toBe(signature);
    expect(landed?.version).toBe('legacy');

    const parsed = await t.conn.getParsedTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(parsed?.transaction.message.instructions[0]).toMatchObject({
      program: 'system',
      parsed: { type: 'transfer', info: { lamports: LAMPORTS_PER_SOL } },
    });

    const history = await t.conn.getSignaturesForAddress(to.publicKey);
    expect(history.map((h) => h.signature)).toEqual([signature]);
  });

  it('charges a priority fee as Solana does and reports it, the units and the balances from the runtime', async () => {
    const from = Keypair.generate();
    const to = Keypair.generate();
    await t.fund(from, 1);
    const tx = new Transaction().add(
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
      ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 }),
      SystemProgram.transfer({
        fromPubkey: from.publicKey,
        toPubkey: to.publicKey,
        lamports: LAMPORTS_PER_SOL / 2,
      }),
    );
    tx.recentBlockhash = (await t.conn.getLatestBlockhash('processed')).blockhash;
    tx.feePayer = from.publicKey;
    // 5000 per signature + ceil(1,000,000 µlamports × 1000 units / 1,000,000).
    expect((await t.conn.getFeeForMessage(tx.compileMessage(), 'processed')).value).toBe(6000);
    const signature = await sendAndConfirmTransaction(t.conn, tx, [from]);
    expect(await t.conn.getBalance(from.publicKey)).toBe(LAMPORTS_PER_SOL / 2 - 6000);
    const landed = await t.conn.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(landed?.meta?.fee).toBe(6000);
    expect(landed?.meta?.computeUnitsConsumed).toBe(450); // 150 per builtin instruction
    expect(landed?.meta?.preBalances[0]).toBe(LAMPORTS_PER_SOL);
    expect(landed?.meta?.postBalances[0]).toBe(LAMPORTS_PER_SOL / 2 - 6000);
    expect(landed?.meta?.innerInstructions).toEqual([]);
  });

  it('runs v0 transactions and two-signer transactions', async () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    await t.fund(payer, 2);
    await t.fund(other, 1);
    const { blockhash } = await t.conn.getLatestBlockhash('processed');
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: 1000 }),
      ],
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([payer, other]);
    const signature = await t.conn.sendTransaction(tx);
    const { value } = await t.conn.confirmTransaction({ signature, blockhash, lastValidBlockHeight: 1e9 });
    expect(value.err).toBeNull();
    expect(await t.conn.getBalance(payer.publicKey)).toBe(2 * LAMPORTS_PER_SOL + 1000 - 10_000);
    await expect(t.conn.getTransaction(signature)).rejects.toThrow(/maxSupportedTransactionVersion/);
    expect((await t.conn.getTransaction(signature, { maxSupportedTransactionVersion: 0 }))?.version).toBe(0);
  });

  it('creates accounts with the real System checks', async () => {
    const payer = Keypair.generate();
    const created = Keypair.generate();
    const owner = Keypair.generate().publicKey;
    await t.fund(payer, 2);
    const space = 100;
    const lamports = await t.conn.getMinimumBalanceForRentExemption(space);
    expect(lamports).toBe((128 + space) * 6960);
    const create = () =>
      new Transaction().add(
        SystemProgram.createAccount({
          fromPubkey: payer.publicKey,
          newAccountPubkey: created.publicKey,
          lamports,
          space,
          programId: owner,
        }),
      );
    await sendAndConfirmTransaction(t.conn, create(), [payer, created]);
    const info = await t.conn.getAccountInfo(created.publicKey);
    expect(info?.owner.toBase58()).toBe(owner.toBase58());
    expect(info?.data.length).toBe(space);
    expect(info?.lamports).toBe(lamports);
    expect(info?.executable).toBe(false);

    // Again: the account is in use (SystemError 0).
    const again = create();
    again.recentBlockhash = (await t.conn.getLatestBlockhash('processed')).blockhash;
    again.feePayer = payer.publicKey;
    again.sign(payer, created);
    const res = await t.rpc('sendTransaction', [b64(again.serialize()), { encoding: 'base64' }]);
    expect(res.error?.code).toBe(-32002);
    expect(res.error?.data.err).toEqual({ InstructionError: [0, { Custom: 0 }] });
    expect(res.error?.message).toBe(
      'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x0',
    );
    // Agave 4.3's System program prints the address with its (absent) seed base.
    expect(res.error?.data.logs).toContain(
      `Create Account: account Address { address: ${created.publicKey.toBase58()}, base: None } already in use`,
    );
  });

  it('refuses a transfer that leaves the recipient below the rent-exempt minimum', async () => {
    const from = Keypair.generate();
    await t.fund(from, 1);
    const tx = await signedTransfer(from, Keypair.generate().publicKey, 1000);
    const res = await t.rpc('sendTransaction', [b64(tx.serialize()), { encoding: 'base64' }]);
    expect(res.error?.code).toBe(-32002);
    expect(res.error?.data.err).toEqual({ InsufficientFundsForRent: { account_index: 1 } });
    expect(res.error?.message).toMatch(/insufficient funds for rent/);
    // Refused in preflight: no fee was charged.
    expect(await t.conn.getBalance(from.publicKey, 'processed')).toBe(LAMPORTS_PER_SOL);
  });

  it('lands a failing transaction sent with skipPreflight and still charges the fee', async () => {
    const from = Keypair.generate();
    await t.fund(from, 1);
    const tx = await signedTransfer(from, Keypair.generate().publicKey, 5 * LAMPORTS_PER_SOL);
    const signature = await t.conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const latest = await t.conn.getLatestBlockhash();
    // web3.js reports the transaction error once the failed transaction confirms: it rejects
    // with it when the WebSocket notification wins the race, and resolves with it in
    // `value.err` when its status poll does. Both carry the same error.
    const outcome = await t.conn.confirmTransaction({ signature, ...latest }).then(
      (r) => r.value.err,
      (err: unknown) => err,
    );
    expect(outcome).toEqual(expect.objectContaining({ InstructionError: [0, { Custom: 1 }] }));
    const status = await waitForStatus(t.conn, signature);
    expect(status.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(await t.conn.getBalance(from.publicKey)).toBe(LAMPORTS_PER_SOL - 5000);
    const landed = await t.conn.getTransaction(signature, { maxSupportedTransactionVersion: 0 });
    expect(landed?.meta?.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(landed?.meta?.logMessages).toContain(
      `Transfer: insufficient lamports ${LAMPORTS_PER_SOL - 5000}, need ${5 * LAMPORTS_PER_SOL}`,
    );
  });

  it('refuses a bad signature and a missing signature', async () => {
    const from = Keypair.generate();
    await t.fund(from, 1);
    const tx = await signedTransfer(from, Keypair.generate().publicKey, LAMPORTS_PER_SOL / 2);
    const wire = tx.serialize();
    wire[5] = (wire[5] as number) ^ 0xff;
    const bad = await t.rpc('sendTransaction', [b64(wire), { encoding: 'base64' }]);
    expect(bad.error).toMatchObject({ code: -32003, message: 'Transaction signature verification failure' });
    // skipPreflight does not let it through either.
    const skipped = await t.rpc('sendTransaction', [b64(wire), { encoding: 'base64', skipPreflight: true }]);
    expect(skipped.error?.code).toBe(-32003);

    // A second required signer that never signed: its slot holds zeros.
    const cosigner = Keypair.generate();
    const two = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: cosigner.publicKey, toPubkey: from.publicKey, lamports: 1 }),
    );
    two.recentBlockhash = (await t.conn.getLatestBlockhash('processed')).blockhash;
    two.feePayer = from.publicKey;
    two.partialSign(from);
    const unsigned = two.serialize({ requireAllSignatures: false });
    expect((await t.rpc('sendTransaction', [b64(unsigned), { encoding: 'base64' }])).error?.code).toBe(
      -32003,
    );

    // Fewer signatures on the wire than the header requires: not even a valid transaction.
    const short = Buffer.concat([Buffer.from([1]), unsigned.subarray(1, 65), unsigned.subarray(129)]);
    const res = await t.rpc('sendTransaction', [b64(short), { encoding: 'base64' }]);
    expect(res.error?.code).toBe(-32602);
    expect(res.error?.message).toMatch(/^invalid transaction: /);
    expect(await t.conn.getBalance(from.publicKey, 'processed')).toBe(LAMPORTS_PER_SOL);
  });

  it('refuses a duplicate transaction', async () => {
    const from = Keypair.generate();
    await t.fund(from, 1);
    const tx = await signedTransfer(from, Keypair.generate().publicKey, LAMPORTS_PER_SOL / 2);
    const wire = b64(tx.serialize());
    const first = await t.rpc('sendTransaction', [wire, { encoding: 'base64' }]);
    expect(typeof first.result).toBe('string');
    const second = await t.rpc('sendTransaction', [wire, { encoding: 'base64' }]);
    expect(second.error?.code).toBe(-32002);
    expect(second.error?.message).toBe(
      'Transaction simulation failed: This transaction has already been processed',
    );
    // Resending without preflight is harmless: same signature, nothing lands twice.
    const third = await t.rpc('sendTransaction', [wire, { encoding: 'base64', skipPreflight: true }]);
    expect(third.result).toBe(first.result);
    expect(await t.conn.getBalance(from.publicKey, 'processed')).toBe(LAMPORTS_PER_SOL / 2 - 5000);
  });

  it('refuses an unfunded fee payer like a real node', async () => {
    const broke = Keypair.generate();
    const tx = await signedTransfer(broke, Keypair.generate().publicKey, 1);
    // base58 is the default encoding of sendTransaction.
    const { default: bs58 } = await import('bs58');
    const res = await t.rpc('sendTransaction', [bs58.encode(tx.serialize())]);
    expect(res.error?.code).toBe(-32002);
    expect(res.error?.message).toBe(
      'Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.',
    );
    expect(res.error?.data).toMatchObject({ err: 'AccountNotFound', logs: [], accounts: null });
    await expect(t.conn.sendRawTransaction(tx.serialize())).rejects.toThrow(/no record of a prior credit/);
  });

  it('simulates without landing, with sigVerify and replaceRecentBlockhash', async () => {
    const from = Keypair.generate();
    const to = Keypair.generate().publicKey;
    await t.fund(from, 1);
    const tx = await signedTransfer(from, to, LAMPORTS_PER_SOL / 4);
    const sim = await t.rpc('simulateTransaction', [
      b64(tx.serialize()),
      { encoding: 'base64', sigVerify: true, accounts: { encoding: 'base64', addresses: [to.toBase58()] } },
    ]);
    expect(sim.result.value.err).toBeNull();
    expect(sim.result.value.accounts[0].lamports).toBe(LAMPORTS_PER_SOL / 4);
    expect(sim.result.value.unitsConsumed).toBe(150);
    expect(await t.conn.getBalance(to, 'processed')).toBe(0);

    const stale = await signedTransfer(from, to, LAMPORTS_PER_SOL / 4, '11111111111111111111111111111111');
    const replaced = await t.rpc('simulateTransaction', [
      b64(stale.serialize()),
      { encoding: 'base64', replaceRecentBlockhash: true },
    ]);
    expect(replaced.result.value.err).toBeNull();
    expect(typeof replaced.result.value.replacementBlockhash.blockhash).toBe('string');
    const both = await t.rpc('simulateTransaction', [
      b64(stale.serialize()),
      { encoding: 'base64', replaceRecentBlockhash: true, sigVerify: true },
    ]);
    expect(both.error?.code).toBe(-32602);

    // A fresh Connection: no blockhash cached from before other tests moved the slots.
    const web3 = await new Connection(t.devnet.rpcUrl, 'processed').simulateTransaction(tx);
    expect(web3.value.err).toBeNull();
    expect(web3.value.logs?.length).toBe(2);
  });

  it('answers getFeeForMessage, getEpochInfo and the node info methods', async () => {
    const from = Keypair.generate();
    const tx = await signedTransfer(from, Keypair.generate().publicKey, 1);
    expect((await t.conn.getFeeForMessage(tx.compileMessage(), 'processed')).value).toBe(5000);
    const epoch = await t.conn.getEpochInfo('processed');
    expect(epoch.slotsInEpoch).toBe(432_000);
    // Slots advance every few milliseconds here: the next read may be a slot or two later.
    const slotAfter = await t.conn.getSlot('processed');
    expect(epoch.absoluteSlot).toBeLessThanOrEqual(slotAfter);
    expect(slotAfter - epoch.absoluteSlot).toBeLessThan(50);
    expect((await t.conn.getVersion())['solana-core']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(await t.conn.getGenesisHash()).toBe(t.devnet.bank.genesisHash);
    expect((await t.rpc('getHealth')).result).toBe('ok');
    const slots = await Promise.all([
      t.conn.getSlot('finalized'),
      t.conn.getSlot('confirmed'),
      t.conn.getSlot('processed'),
    ]);
    expect(slots[0]).toBeLessThanOrEqual(slots[1]);
    expect(slots[1]).toBeLessThanOrEqual(slots[2]);
    const blockTime = await t.conn.getBlockTime(slots[1]);
    expect(Math.abs((blockTime ?? 0) - Date.now() / 1000)).toBeLessThan(60);
  });

  // These two move the slots far ahead; they run last so cached blockhashes stay valid above.
  it('refuses unknown and expired blockhashes', async () => {
    const from = Keypair.generate();
    await t.fund(from, 1);
    const unknown = await signedTransfer(
      from,
      Keypair.generate().publicKey,
      LAMPORTS_PER_SOL / 2,
      '11111111111111111111111111111111',
    );
    const res = await t.rpc('sendTransaction', [b64(unknown.serialize()), { encoding: 'base64' }]);
    expect(res.error?.code).toBe(-32002);
    expect(res.error?.message).toBe('Transaction simulation failed: Blockhash not found');
    expect(res.error?.data.err).toBe('BlockhashNotFound');

    const latest = await t.conn.getLatestBlockhash('processed');
    const stale = await signedTransfer(
      from,
      Keypair.generate().publicKey,
      LAMPORTS_PER_SOL / 2,
      latest.blockhash,
    );
    expect((await t.conn.isBlockhashValid(latest.blockhash, { commitment: 'processed' })).value).toBe(true);
    for (let i = 0; i < 151; i++) t.devnet.bank.advanceSlot();
    expect((await t.conn.isBlockhashValid(latest.blockhash, { commitment: 'processed' })).value).toBe(false);
    expect(await t.conn.getBlockHeight('processed')).toBeGreaterThan(latest.lastValidBlockHeight);
    const expired = await t.rpc('sendTransaction', [b64(stale.serialize()), { encoding: 'base64' }]);
    expect(expired.error?.data.err).toBe('BlockhashNotFound');
  });

  it('reports a dropped transaction as expired to confirmTransaction', async () => {
    const broke = Keypair.generate();
    const tx = await signedTransfer(broke, Keypair.generate().publicKey, 1);
    const latest = await t.conn.getLatestBlockhash('processed');
    // Without preflight a transaction that cannot pay is dropped, as on a real cluster.
    const signature = await t.conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const confirm = t.conn.confirmTransaction({ signature, ...latest }, 'processed');
    for (let i = 0; i < 152; i++) t.devnet.bank.advanceSlot();
    await expect(confirm).rejects.toBeInstanceOf(TransactionExpiredBlockheightExceededError);
    expect((await t.conn.getSignatureStatus(signature, { searchTransactionHistory: true })).value).toBeNull();
  });
});
