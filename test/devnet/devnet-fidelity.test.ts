// Devnet's fidelity mode over real HTTP JSON-RPC: each switch does what
// docs/devnet.md says, and a plain devnet answers as before.
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  type PublicKey,
  SystemProgram,
  Transaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Bank } from '../../chain/devnet/bank.ts';
import { Fidelity, formatFidelitySpec, parseFidelitySpec } from '../../chain/devnet/fidelity.ts';
import { MAINNET_FIDELITY, startDevnet } from '../../chain/devnet/server.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';

interface RpcAnswer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers of every shape
  body: any;
}

async function post(url: string, payload: unknown): Promise<RpcAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body };
}

const SYSTEM = '11111111111111111111111111111111';

const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

async function rpc(chain: TestChain, method: string, params: unknown[] = []) {
  const { body } = await post(chain.devnet.rpcUrl, call(method, params));
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC results of every shape
  return body as { result?: any; error?: { code: number; message: string } };
}

/** A funded keypair without waiting on confirmations (works with a stopped slot clock). */
function fundedNow(chain: TestChain, sol = 10): Keypair {
  const kp = Keypair.generate();
  const outcome = chain.devnet.bank.requestAirdrop(kp.publicKey.toBase58(), BigInt(sol * LAMPORTS_PER_SOL));
  expect(outcome.err).toBeNull();
  return kp;
}

function transfer(
  chain: TestChain,
  from: Keypair,
  to: PublicKey,
  lamports: number,
  budget?: { price: number; limit: number },
): { wire: string; signature: string } {
  const { blockhash } = chain.devnet.bank.latestBlockhash('processed');
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash });
  if (budget) {
    tx.add(ComputeBudgetProgram.setComputeUnitLimit({ units: budget.limit }));
    tx.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: budget.price }));
  }
  tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }));
  tx.sign(from);
  return { wire: tx.serialize().toString('base64'), signature: bs58.encode(tx.signature as Buffer) };
}

const send = (chain: TestChain, wire: string, skipPreflight = false) =>
  rpc(chain, 'sendTransaction', [wire, { encoding: 'base64', skipPreflight }]);

const statusOf = async (chain: TestChain, signature: string, search = false) =>
  (await rpc(chain, 'getSignatureStatuses', [[signature], { searchTransactionHistory: search }])).result;

describe('plain devnet (fidelity off)', () => {
  it('answers as before: no lag, no limits, block height = slot, [] fees, priority fee charged', async () => {
    const chain = await startTestChain({ slotMs: 60_000 });
    const { devnet } = chain;
    expect(devnet.fidelity()).toEqual({});
    const from = fundedNow(chain);
    const to = Keypair.generate().publicKey;
    const { wire, signature } = transfer(chain, from, to, 1_000_000, { price: 1_000_000, limit: 1000 });
    expect((await send(chain, wire)).result).toBe(signature);
    const st = await statusOf(chain, signature);
    expect(st.value[0]).toMatchObject({ confirmationStatus: 'processed', err: null });
    expect(st.context.slot).toBe(devnet.bank.slot);
    // The runtime's fee: 5000 per signature + ceil(1,000,000 µlamports × 1000 CU / 1e6).
    devnet.bank.advanceSlot();
    const tx = (await rpc(chain, 'getTransaction', [signature, { commitment: 'confirmed' }])).result;
    expect(tx.meta.fee).toBe(6000);
    expect((await rpc(chain, 'getBalance', [from.publicKey.toBase58()])).result.value).toBe(
      10 * LAMPORTS_PER_SOL - 1_000_000 - 6000,
    );
    const batch = await post(devnet.rpcUrl, [
      call('getSlot', [{ commitment: 'processed' }], 1),
      call('getBlockHeight', [{ commitment: 'processed' }], 2),
      call('getSlot', [{ commitment: 'confirmed' }], 3),
      call('getRecentPrioritizationFees', [[to.toBase58()]], 4),
      call('getBalance', [to.toBase58(), { commitment: 'recent' }], 5),
      call('getProgramAccounts', [devnet.programId, { encoding: 'base64' }], 6),
    ]);
    const [slot, height, confirmed, fees, recent, gpa] = batch.body.map((r: { result: unknown }) => r.result);
    expect(height).toBe(slot);
    expect(confirmed).toBe(slot - 1);
    expect(fees).toEqual([]);
    expect(recent.value).toBe(1_000_000);
    expect(Array.isArray(gpa)).toBe(true);
    // A 60 kB request is fine (Agave would refuse it).
    const big = await post(devnet.rpcUrl, call('getSlot', [{ commitment: 'processed' }], 'x'.repeat(60_000)));
    expect(big.status).toBe(200);
    expect(devnet.fidelityStats()).toMatchObject({ requests: 0, rateLimited: 0, dropped: 0 });
    // Switched on at run time.
    devnet.setFidelity({ programAccounts: 'refuse' });
    expect((await rpc(chain, 'getProgramAccounts', [devnet.programId])).error?.code).toBe(-32010);
    expect(devnet.fidelity()).toEqual({ programAccounts: 'refuse' });
    expect(devnet.fidelityStats()).toMatchObject({ requests: 1, calls: 1, programAccountsRefused: 1 });
  });
});

describe('fidelity switches', () => {
  it('statusLagSlots hides recent signatures from statuses, history and getTransaction; the context slot lags', async () => {
    const chain = await startTestChain({ slotMs: 60_000, fidelity: { statusLagSlots: 5 } });
    const { devnet } = chain;
    for (let i = 0; i < 10; i++) devnet.bank.advanceSlot();
    const from = fundedNow(chain);
    const { wire, signature } = transfer(chain, from, Keypair.generate().publicKey, 1_000_000);
    expect((await send(chain, wire)).result).toBe(signature);
    devnet.bank.advanceSlot();
    const landed = devnet.bank.getTransaction(signature)?.slot as number;
    for (const search of [false, true]) {
      const st = await statusOf(chain, signature, search);
      expect(st.value).toEqual([null]);
      expect(st.context.slot).toBe(devnet.bank.slot - 5);
    }
    expect((await rpc(chain, 'getTransaction', [signature, { commitment: 'confirmed' }])).result).toBeNull();
    expect(
      (await rpc(chain, 'getSignaturesForAddress', [from.publicKey.toBase58(), { commitment: 'confirmed' }]))
        .result,
    ).toEqual([]);
    while (devnet.bank.slot <= landed + 5) devnet.bank.advanceSlot();
    expect((await statusOf(chain, signature)).value[0]).toMatchObject({ slot: landed, err: null });
    expect((await rpc(chain, 'getTransaction', [signature, { commitment: 'confirmed' }])).result.slot).toBe(
      landed,
    );
    expect(devnet.fidelityStats().hiddenStatuses).toBe(5); // 2 statuses, getTransaction, the transfer and the airdrop in the history

    // Per-signature probability: 0 shows everything, 1 hides everything.
    devnet.setFidelity({ statusLagProbability: 0 });
    const second = transfer(chain, from, Keypair.generate().publicKey, 1_000_000);
    await send(chain, second.wire);
    expect((await statusOf(chain, second.signature)).value[0]).not.toBeNull();
    devnet.setFidelity({ statusLagProbability: 1 });
    expect((await statusOf(chain, second.signature)).value[0]).toBeNull();
    devnet.setFidelity({ statusLagSlots: 0 });
    expect((await statusOf(chain, second.signature)).value[0]).not.toBeNull();
  });

  it('statusLagSlots delays PubSub signature notifications by the lag', async () => {
    const chain = await startTestChain({ slotMs: 60_000, fidelity: { statusLagSlots: 3 } });
    const { devnet } = chain;
    const { bank } = devnet;
    const from = fundedNow(chain);
    const { wire, signature } = transfer(chain, from, Keypair.generate().publicKey, 1_000_000);
    await send(chain, wire);
    const landed = bank.getTransaction(signature)?.slot as number;
    const socket = new WebSocket(devnet.wsUrl);
    const messages: { method?: string; params?: { result: { context: { slot: number } } } }[] = [];
    socket.on('message', (d) => messages.push(JSON.parse(String(d))));
    await new Promise((r) => socket.once('open', r));
    const until = async (n: number) => {
      for (let i = 0; i < 100 && messages.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    try {
      socket.send(JSON.stringify(call('signatureSubscribe', [signature, { commitment: 'confirmed' }])));
      await until(1);
      bank.advanceSlot();
      bank.advanceSlot(); // confirmed, still within the lag
      await new Promise((r) => setTimeout(r, 100));
      expect(messages.length).toBe(1);
      bank.advanceSlot(); // landed + 3: past the lag
      expect(bank.slot).toBe(landed + 3);
      await until(2);
      expect(messages[1]?.method).toBe('signatureNotification');
      expect(messages[1]?.params?.result.context.slot).toBe(landed);
    } finally {
      socket.close();
    }
  });

  it('dropRate accepts and drops sends; a rebroadcast of the same bytes draws again and may land', async () => {
    const chain = await startTestChain({ slotMs: 60_000, fidelity: { dropRate: 1 } });
    const { devnet } = chain;
    const from = fundedNow(chain);
    const to = Keypair.generate().publicKey;
    const { wire, signature } = transfer(chain, from, to, 5_000_000);
    expect((await send(chain, wire)).result).toBe(signature);
    expect((await send(chain, wire, true)).result).toBe(signature);
    devnet.bank.advanceSlot();
    expect((await statusOf(chain, signature, true)).value).toEqual([null]);
    expect((await rpc(chain, 'getBalance', [to.toBase58(), { commitment: 'processed' }])).result.value).toBe(
      0,
    );
    expect(devnet.fidelityStats().dropped).toBe(2);
    // Preflight still answers: a transfer the payer cannot afford is refused, not dropped.
    const broke = transfer(chain, from, to, 20 * LAMPORTS_PER_SOL);
    expect((await send(chain, broke.wire)).error?.code).toBe(-32002);
    devnet.setFidelity({ dropRate: 0 });
    expect((await send(chain, wire)).result).toBe(signature);
    expect((await rpc(chain, 'getBalance', [to.toBase58(), { commitment: 'processed' }])).result.value).toBe(
      5_000_000,
    );
  });

  it('minPriorityFeeMicroLamports drops cheaper transactions, charges the priority fee and answers synthetic recent fees', async () => {
    const chain = await startTestChain({ slotMs: 60_000, fidelity: { minPriorityFeeMicroLamports: 10_000 } });
    const { devnet } = chain;
    const from = fundedNow(chain);
    const to = Keypair.generate().publicKey;
    for (const budget of [undefined, { price: 9_999, limit: 1000 }]) {
      const cheap = transfer(chain, from, to, 1_000_000, budget);
      expect((await send(chain, cheap.wire)).result).toBe(cheap.signature);
      expect(devnet.bank.getTransaction(cheap.signature)).toBeUndefined();
    }
    expect(devnet.fidelityStats().droppedLowFee).toBe(2);
    const paying = transfer(chain, from, to, 1_000_000, { price: 20_000, limit: 1000 });
    expect((await send(chain, paying.wire)).result).toBe(paying.signature);
    devnet.bank.advanceSlot();
    const tx = (await rpc(chain, 'getTransaction', [paying.signature, { commitment: 'confirmed' }])).result;
    expect(tx.meta.fee).toBe(5000 + 20); // ceil(20,000 × 1000 / 1e6)
    expect((await rpc(chain, 'getBalance', [from.publicKey.toBase58()])).result.value).toBe(
      10 * LAMPORTS_PER_SOL - 1_000_000 - 5020,
    );
    const fees = (await rpc(chain, 'getRecentPrioritizationFees', [[to.toBase58()]])).result;
    expect(fees.length).toBe(Math.min(150, devnet.bank.slot + 1));
    expect(fees[fees.length - 1].slot).toBe(devnet.bank.slot);
    for (const f of fees) {
      expect(Object.keys(f).sort()).toEqual(['prioritizationFee', 'slot']);
      expect(f.prioritizationFee).toBeGreaterThanOrEqual(7500);
      expect(f.prioritizationFee).toBeLessThanOrEqual(15_000);
    }
    const sorted = fees
      .map((f: { prioritizationFee: number }) => f.prioritizationFee)
      .sort((a: number, b: number) => a - b);
    expect(sorted[Math.floor(sorted.length * 0.75)]).toBeGreaterThanOrEqual(10_000);
    // Stable across calls.
    expect((await rpc(chain, 'getRecentPrioritizationFees', [[to.toBase58()]])).result).toEqual(fees);
  });

  it('maxRps answers 429 with Retry-After above the rate, counts batches per call and requests inside Retry-After', async () => {
    const chain = await startTestChain({ fidelity: { maxRps: 10, retryAfterSecs: 2 } });
    const { devnet } = chain;
    const batch = Array.from({ length: 5 }, (_, i) => call('getSlot', [], i));
    expect((await post(devnet.rpcUrl, batch)).status).toBe(200);
    expect((await post(devnet.rpcUrl, batch)).status).toBe(200);
    const limited = await post(devnet.rpcUrl, batch);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.body).toMatchObject({ jsonrpc: '2.0', error: { code: 429 }, id: 0 });
    for (let i = 0; i < 3; i++) await post(devnet.rpcUrl, call('getSlot'));
    const stats = devnet.fidelityStats();
    expect(stats.requests).toBe(6);
    expect(stats.calls).toBe(18);
    expect(stats.rateLimited).toBeGreaterThanOrEqual(1);
    expect(stats.requestsInRetryAfter).toBe(3);
    devnet.setFidelity({ maxRps: 0 });
    expect((await post(devnet.rpcUrl, batch)).status).toBe(200);
  });

  it('peakCallsPerSecond is the most calls within any one second (sliding), 429s included; reset zeroes it', () => {
    const bank = Bank.open({});
    try {
      let t = 10_000;
      const fidelity = new Fidelity(bank, { maxRps: 5 }, () => t);
      fidelity.admit(3); // t = 10.0 s
      t += 600;
      fidelity.admit(4); // 10.6 s: 7 within a second (the last 4 over the bucket: 429'd, still counted)
      expect(fidelity.stats.peakCallsPerSecond).toBe(7);
      t += 500;
      fidelity.admit(1); // 11.1 s: the 3 at 10.0 s left the window, 5 within it
      t += 1000;
      fidelity.admit(2); // 12.1 s: 2
      expect(fidelity.stats.peakCallsPerSecond).toBe(7);
      expect(fidelity.stats.calls).toBe(10);
      fidelity.resetStats();
      expect(fidelity.stats.peakCallsPerSecond).toBe(0);
      t += 100;
      fidelity.admit(1); // the 2 at 12.1 s are forgotten with the reset
      expect(fidelity.stats.peakCallsPerSecond).toBe(1);
      fidelity.checkCall('getSlot', []);
      fidelity.checkCall('getSlot', []);
      fidelity.checkCall('getEpochInfo', []);
      expect(fidelity.stats.methods).toEqual({ getSlot: 2, getEpochInfo: 1 });
    } finally {
      bank.close();
    }
  });

  it('retryAfterLatestArrivalMs: how long after the latest 429 a request arrived inside its Retry-After', () => {
    const bank = Bank.open({});
    try {
      let t = 5_000;
      const fidelity = new Fidelity(bank, { maxRps: 2, retryAfterSecs: 1 }, () => t);
      expect(fidelity.admit(2)).toBeNull();
      expect(fidelity.admit(1)).toBe(1); // the 429: a window until 6.0 s
      t += 3;
      fidelity.admit(1); // 3 ms on: on its way already (and 429'd, the window now until 6.003 s)
      expect(fidelity.stats.retryAfterLatestArrivalMs).toBe(3);
      t += 400;
      fidelity.admit(1); // 400 ms after the latest 429: a client ignoring Retry-After
      expect(fidelity.stats).toMatchObject({ requestsInRetryAfter: 2, retryAfterLatestArrivalMs: 400 });
      t += 2000;
      fidelity.admit(1); // after the window: not counted
      expect(fidelity.stats).toMatchObject({ requestsInRetryAfter: 2, retryAfterLatestArrivalMs: 400 });
    } finally {
      bank.close();
    }
  });

  it('programAccounts refuses with -32010 or answers slowly', async () => {
    const chain = await startTestChain({ fidelity: { programAccounts: 'refuse' } });
    const { devnet } = chain;
    const refused = await rpc(chain, 'getProgramAccounts', [devnet.programId]);
    expect(refused.error).toEqual({
      code: -32010,
      message: `${devnet.programId} excluded from account secondary indexes; this RPC method unavailable for key`,
    });
    devnet.setFidelity({ programAccounts: 'slow', programAccountsDelayMs: 400 });
    const started = Date.now();
    const slow = await rpc(chain, 'getProgramAccounts', [devnet.programId, { encoding: 'base64' }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(Array.isArray(slow.result)).toBe(true);
    const fastStart = Date.now();
    await rpc(chain, 'getSlot');
    expect(Date.now() - fastStart).toBeLessThan(300);
    devnet.setFidelity({ programAccounts: 'ok' });
    expect(Array.isArray((await rpc(chain, 'getProgramAccounts', [devnet.programId])).result)).toBe(true);
    expect(devnet.fidelityStats()).toMatchObject({ programAccountsRefused: 1, programAccountsDelayed: 1 });
  });

  it('commitmentTrue: confirmed and finalized read older state, statuses follow, block height is not the slot', async () => {
    const chain = await startTestChain({
      slotMs: 60_000,
      finalizeDepth: 4,
      fidelity: { commitmentTrue: true },
    });
    const { devnet } = chain;
    const { bank } = devnet;
    for (let i = 0; i < 10; i++) bank.advanceSlot();
    const to = Keypair.generate();
    const air = bank.requestAirdrop(to.publicKey.toBase58(), 7_777_777n);
    expect(air.err).toBeNull();
    const read = async () => {
      const { body } = await post(devnet.rpcUrl, [
        ...['processed', 'confirmed', 'finalized'].map((c, i) =>
          call('getBalance', [to.publicKey.toBase58(), { commitment: c }], i),
        ),
        call('getMultipleAccounts', [[to.publicKey.toBase58()], { commitment: 'confirmed' }], 3),
        call('getAccountInfo', [to.publicKey.toBase58(), { commitment: 'confirmed' }], 4),
        call('getSignatureStatuses', [[air.signature]], 5),
        call('getProgramAccounts', [SYSTEM, { commitment: 'confirmed', withContext: true }], 6),
        call('getProgramAccounts', [SYSTEM, { commitment: 'processed' }], 7),
      ]);
      return body.map((r: { result: unknown }) => r.result);
    };
    const owned = (list: { pubkey: string }[]) => list.some((a) => a.pubkey === to.publicKey.toBase58());
    let [p, c, f, multi, info, st, gpaConfirmed, gpaProcessed] = await read();
    expect([p.value, c.value, f.value]).toEqual([7_777_777, 0, 0]);
    expect(owned(gpaConfirmed.value)).toBe(false);
    expect(gpaConfirmed.context.slot).toBe(bank.slot - 2);
    expect(owned(gpaProcessed)).toBe(true);
    expect(c.context.slot).toBe(bank.slot - 2);
    expect(f.context.slot).toBe(bank.slot - 2 - 4);
    expect(multi.value).toEqual([null]);
    expect(info.value).toBeNull();
    expect(st.value[0].confirmationStatus).toBe('processed');
    bank.advanceSlot(); // closed, not yet confirmed
    [p, c, f, , , st] = await read();
    expect([p.value, c.value, f.value]).toEqual([7_777_777, 0, 0]);
    expect(st.value[0].confirmationStatus).toBe('processed');
    bank.advanceSlot(); // confirmed now
    [p, c, f, multi, info, st, gpaConfirmed] = await read();
    expect([p.value, c.value, f.value]).toEqual([7_777_777, 7_777_777, 0]);
    expect(owned(gpaConfirmed.value)).toBe(true);
    expect(multi.value[0].lamports).toBe(7_777_777);
    expect(info.value.lamports).toBe(7_777_777);
    expect(st.value[0].confirmationStatus).toBe('confirmed');
    for (let i = 0; i < 4; i++) bank.advanceSlot();
    [, , f, , , st] = await read();
    expect(f.value).toBe(7_777_777);
    expect(st.value[0].confirmationStatus).toBe('finalized');

    // Block height: slot minus a skip; blockhashes live 150 block heights.
    const { body } = await post(devnet.rpcUrl, [
      call('getSlot', [{ commitment: 'processed' }], 0),
      call('getBlockHeight', [{ commitment: 'processed' }], 1),
      call('getBlockHeight', [{ commitment: 'confirmed' }], 2),
      call('getLatestBlockhash', [{ commitment: 'processed' }], 3),
      call('getEpochInfo', [{ commitment: 'processed' }], 4),
    ]);
    const [slot, height, confirmedHeight, latest, epoch] = body.map((r: { result: unknown }) => r.result);
    expect(height).toBeLessThan(slot);
    expect(confirmedHeight).toBeLessThan(height);
    expect(latest.value.lastValidBlockHeight).toBe(height + 150);
    expect(epoch.blockHeight).toBe(height);
    expect(epoch.absoluteSlot).toBe(slot);
  });

  it('agaveLimits: 50 kB bodies, deprecated commitments, too many keys', async () => {
    const chain = await startTestChain({ fidelity: { agaveLimits: true } });
    const { devnet } = chain;
    const big = await post(devnet.rpcUrl, call('getSlot', [], 'x'.repeat(52_000)));
    expect(big.status).toBe(413);
    expect(big.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await post(devnet.rpcUrl, call('getSlot', [], 'x'.repeat(40_000)))).status).toBe(200);
    for (const commitment of ['recent', 'single', 'singleGossip', 'root', 'max']) {
      const refused = await rpc(chain, 'getBalance', [
        devnet.faucetKeypair.publicKey.toBase58(),
        { commitment },
      ]);
      expect(refused.error).toEqual({
        code: -32602,
        message: `Invalid params: unknown variant \`${commitment}\`, expected one of \`processed\`, \`confirmed\`, \`finalized\`.`,
      });
    }
    const keys = Array.from({ length: 257 }, () => Keypair.generate().publicKey.toBase58());
    expect((await rpc(chain, 'getMultipleAccounts', [keys.slice(0, 101)])).error).toEqual({
      code: -32602,
      message: 'Too many inputs provided; max 100',
    });
    const sigs = Array.from({ length: 257 }, () => bs58.encode(new Uint8Array(64).fill(7)));
    expect((await rpc(chain, 'getSignatureStatuses', [sigs])).error).toEqual({
      code: -32602,
      message: 'Too many inputs provided; max 256',
    });
    expect((await rpc(chain, 'getRecentPrioritizationFees', [keys.slice(0, 129)])).error?.message).toBe(
      'Too many inputs provided; max 128',
    );
    expect(devnet.fidelityStats().agaveRefused).toBe(7);
  });

  it('rollbackSlots drops confirmed, not finalized, transactions from state, history and the ledger', async () => {
    const chain = await startTestChain({ slotMs: 60_000, finalizeDepth: 8, fidelity: {} });
    const { devnet, dataDir } = chain;
    const { bank } = devnet;
    const from = fundedNow(chain);
    for (let i = 0; i < 10; i++) bank.advanceSlot();
    const to = Keypair.generate().publicKey;
    const kept = transfer(chain, from, to, 1_000_000);
    expect((await send(chain, kept.wire)).result).toBe(kept.signature);
    bank.advanceSlot();
    const dropped = transfer(chain, from, to, 2_000_000);
    expect((await send(chain, dropped.wire)).result).toBe(dropped.signature);
    bank.advanceSlot();
    bank.advanceSlot();
    expect((await statusOf(chain, dropped.signature)).value[0].confirmationStatus).toBe('confirmed');
    expect(() => devnet.rollbackSlots(20)).toThrow(/finalized/);
    const rolled = devnet.rollbackSlots(3);
    expect(rolled.signatures).toEqual([dropped.signature]);
    expect((await statusOf(chain, dropped.signature, true)).value).toEqual([null]);
    expect((await statusOf(chain, kept.signature)).value[0]).not.toBeNull();
    expect((await rpc(chain, 'getBalance', [to.toBase58(), { commitment: 'processed' }])).result.value).toBe(
      1_000_000,
    );
    // The dropped transaction can land again (its blockhash is still valid), once.
    expect((await send(chain, dropped.wire)).result).toBe(dropped.signature);
    expect((await rpc(chain, 'getBalance', [to.toBase58(), { commitment: 'processed' }])).result.value).toBe(
      3_000_000,
    );
    const again = devnet.rollbackSlots(1);
    expect(again.signatures).toEqual([dropped.signature]);
    await devnet.close();
    // After a restart the ledger agrees.
    const reopened = await startDevnet({ dataDir, port: 0, slotMs: 60_000 });
    try {
      expect(reopened.bank.getTransaction(dropped.signature)).toBeUndefined();
      expect(reopened.bank.getTransaction(kept.signature)).toBeDefined();
      expect(reopened.bank.getAccount(to.toBase58())?.lamports).toBe(1_000_000n);
    } finally {
      await reopened.close();
    }
  });
});

describe('--fidelity specs', () => {
  it('parses switches and the mainnet preset', () => {
    expect(parseFidelitySpec('lag=40,drop=0.6,min-fee=10000,rps=40,gpa=refuse,commitment,agave')).toEqual({
      statusLagSlots: 40,
      dropRate: 0.6,
      minPriorityFeeMicroLamports: 10_000,
      maxRps: 40,
      programAccounts: 'refuse',
      commitmentTrue: true,
      agaveLimits: true,
    });
    expect(parseFidelitySpec('lag=200:0.5,rps=40:3,gpa=slow:500,seed=7')).toEqual({
      statusLagSlots: 200,
      statusLagProbability: 0.5,
      maxRps: 40,
      retryAfterSecs: 3,
      programAccounts: 'slow',
      programAccountsDelayMs: 500,
      seed: 7,
    });
    expect(parseFidelitySpec('mainnet,rps=10')).toEqual({ ...MAINNET_FIDELITY, maxRps: 10 });
    for (const o of [MAINNET_FIDELITY, parseFidelitySpec('lag=3,gpa=slow:10,commitment=off,seed=1')])
      expect(parseFidelitySpec(formatFidelitySpec(o))).toEqual(o);
    expect(() => parseFidelitySpec('drop=2')).toThrow(/0\.\.1/);
    expect(() => parseFidelitySpec('warp=9')).toThrow(/unknown switch/);
  });
});
