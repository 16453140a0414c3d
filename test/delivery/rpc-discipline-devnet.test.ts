// The RPC discipline against the devnet's fidelity mode (429 above a rate,
// Agave's request limits), and confirmations that do not need the
// WebSocket: Connections made by src/core/chain-rpc.ts createConnection.
import { randomBytes } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { confirmSignature, createConnection, sendAndConfirmPolled } from '../../src/core/chain-rpc.ts';
import { startTestChain } from '../support/devnet.ts';

type Batch = (
  calls: { methodName: string; args: unknown[] }[],
) => Promise<{ result?: unknown; error?: unknown }[]>;

describe('against a rate-limiting devnet', () => {
  it('one caller never sends inside a Retry-After window and every call succeeds', async () => {
    const chain = await startTestChain({ fidelity: { maxRps: 20, retryAfterSecs: 1 } });
    const conn = createConnection(chain.devnet.rpcUrl, { maxRps: 0 });
    chain.devnet.resetFidelityStats();
    const started = Date.now();
    for (let i = 0; i < 45; i++) expect(await conn.getSlot()).toBeGreaterThanOrEqual(0);
    const stats = chain.devnet.fidelityStats();
    expect(stats.rateLimited).toBeGreaterThan(0);
    expect(stats.requestsInRetryAfter).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('many callers under a max_rps below the node limit are never refused', async () => {
    const chain = await startTestChain({ fidelity: { maxRps: 20, retryAfterSecs: 1 } });
    const conn = createConnection(chain.devnet.rpcUrl, { maxRps: 18 });
    chain.devnet.resetFidelityStats();
    const slots = await Promise.all(Array.from({ length: 60 }, () => conn.getSlot()));
    expect(slots.every((s) => s >= 0)).toBe(true);
    const stats = chain.devnet.fidelityStats();
    expect(stats.calls).toBe(60);
    expect(stats.rateLimited).toBe(0);
  });

  it('many callers without a client limit all succeed once the 429s are waited out', async () => {
    const chain = await startTestChain({ fidelity: { maxRps: 20, retryAfterSecs: 1 } });
    const conn = createConnection(chain.devnet.rpcUrl, { maxRps: 0 });
    chain.devnet.resetFidelityStats();
    const slots = await Promise.all(Array.from({ length: 60 }, () => conn.getSlot()));
    expect(slots.every((s) => s >= 0)).toBe(true);
    const stats = chain.devnet.fidelityStats();
    expect(stats.rateLimited).toBeGreaterThan(0);
    // Waves a second apart (60, then the 40 refused, then the 20 refused again: about 120 requests),
    // not a retry storm; only calls already in flight when a 429 came back can land inside its window.
    expect(stats.requests).toBeLessThanOrEqual(150);
  });

  it("a batch over Agave's 50 kB is split, never refused", async () => {
    const chain = await startTestChain({ fidelity: { agaveLimits: true } });
    const conn = createConnection(chain.devnet.rpcUrl, { maxRps: 0 });
    const sigs = Array.from({ length: 200 }, () => bs58.encode(randomBytes(64)));
    const calls = Array.from({ length: 4 }, () => ({
      methodName: 'getSignatureStatuses',
      args: [sigs, { searchTransactionHistory: true }],
    }));
    expect(JSON.stringify(calls).length).toBeGreaterThan(50 * 1024);
    chain.devnet.resetFidelityStats();
    const answers = await (conn as unknown as { _rpcBatchRequest: Batch })._rpcBatchRequest(calls);
    expect(answers).toHaveLength(4);
    for (const a of answers) expect(a.error).toBeUndefined();
    const stats = chain.devnet.fidelityStats();
    expect(stats.agaveRefused).toBe(0);
    expect(stats.requests).toBeGreaterThan(1);
  });
});

describe("Agave's key caps against the devnet", () => {
  it('getMultipleAccountsInfo of 230 keys and getSignatureStatuses of 600 signatures answer in full', async () => {
    const chain = await startTestChain();
    const conn = createConnection(chain.devnet.rpcUrl, { maxRps: 0 });
    const payer = await chain.funded(1);
    const keys = Array.from({ length: 230 }, (_, i) =>
      i === 117 ? payer.publicKey : Keypair.generate().publicKey,
    );
    const infos = await conn.getMultipleAccountsInfo(keys, 'confirmed');
    expect(infos).toHaveLength(230);
    expect(infos.filter((i) => i !== null)).toHaveLength(1);
    expect(infos[117]?.lamports).toBe(LAMPORTS_PER_SOL);
    const sigs = Array.from({ length: 600 }, () => bs58.encode(randomBytes(64)));
    const { value } = await conn.getSignatureStatuses(sigs);
    expect(value).toHaveLength(600);
  });
});

describe('confirmations without the WebSocket', () => {
  it('confirm by polling when no WebSocket answers', async () => {
    const chain = await startTestChain();
    // A WebSocket URL nobody listens on: web3.js's confirmTransaction would report "expired".
    const conn = createConnection(chain.devnet.rpcUrl, { wsUrl: 'ws://127.0.0.1:9', maxRps: 0 });
    const payer = Keypair.generate();
    const airdrop = await conn.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL);
    const latest = await conn.getLatestBlockhash('confirmed');
    const status = await confirmSignature(conn, { signature: airdrop, ...latest }, 'confirmed');
    expect(status.err).toBeNull();
    const to = Keypair.generate().publicKey;
    const tx = new Transaction().add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL / 10 }),
    );
    const sig = await sendAndConfirmPolled(conn, tx, [payer], { commitment: 'confirmed' });
    expect(typeof sig).toBe('string');
    expect(await conn.getBalance(to, 'confirmed')).toBe(LAMPORTS_PER_SOL / 10);
  });

  it('a transaction that never lands is reported expired once the block height passes it', async () => {
    const chain = await startTestChain();
    const conn = createConnection(chain.devnet.rpcUrl, { wsUrl: 'ws://127.0.0.1:9', maxRps: 0 });
    const height = await conn.getBlockHeight('confirmed');
    const never = bs58.encode(randomBytes(64));
    const err = await confirmSignature(
      conn,
      { signature: never, lastValidBlockHeight: height + 2 },
      'confirmed',
      {
        pollMs: 50,
      },
    ).catch((e: unknown) => e);
    expect((err as Error).name).toBe('TransactionExpiredBlockheightExceededError');
  });
});
