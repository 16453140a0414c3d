// The send paths outside the pipeline (domaind's CreateDomain, dev's
// bootstrap, the CLI's one-instruction commands and its mailbox
// transactions) and the webmail's in-page wallet re-send the same signed
// bytes while a send is unseen, so a
// node that drops sends does not turn a command into "expired"; the
// readiness probe counts against the process's RPC rate and waits out a
// 429 instead of calling again; and the CLI keeps to the loaded config's
// `[chain] max_rps`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComputeBudgetProgram, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { signAndConfirm } from '../../src/cli/commands/chain-cli.ts';
import { cliConnection, loadCliConfig } from '../../src/cli/common.ts';
import { sendAndConfirmPolled } from '../../src/core/chain-rpc.ts';
import { chainRpcCheck } from '../../src/core/metrics/health-checks.ts';
import { pollSignature, sendInstructions } from '../../src/mail/trustless/tx.ts';
import { inPageWallet } from '../../webmail/src/wallet/wallet.ts';
import { startTestChain } from '../support/devnet.ts';

const servers: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every send dropped for the first `ms`, then none: only a re-send of the same bytes can land. */
async function droppingChain(ms: number) {
  const chain = await startTestChain({ slotMs: 100, fidelity: {} });
  const payer = await chain.funded(1);
  chain.devnet.setFidelity({ dropRate: 1 });
  setTimeout(() => chain.devnet.setFidelity({ dropRate: 0 }), ms);
  return { chain, payer };
}

const transfer = (from: Keypair, lamports: number) =>
  SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports });

describe('sends outside the pipeline re-send their bytes', () => {
  it('sendAndConfirmPolled (domaind, dev bootstrap) lands a send whose first tries were dropped, behind a compute budget', async () => {
    const { chain, payer } = await droppingChain(1500);
    const signature = await sendAndConfirmPolled(
      chain.connection,
      new Transaction().add(transfer(payer, 1e6)),
      [payer],
      {
        priorityFee: { mode: 'fixed', microLamports: 1000n, maxLamports: 100_000n },
      },
    );
    const stats = chain.devnet.fidelityStats();
    expect(stats.dropped).toBeGreaterThanOrEqual(1);
    const landed = await chain.connection.getTransaction(signature, { commitment: 'confirmed' });
    expect(landed?.meta?.err).toBeNull();
    const programs = landed?.transaction.message.instructions.map((ix) =>
      landed.transaction.message.accountKeys[ix.programIdIndex]?.toBase58(),
    );
    expect(programs?.filter((p) => p === ComputeBudgetProgram.programId.toBase58())).toHaveLength(2);
    // One signature: the re-sends were the same bytes.
    expect(landed?.transaction.signatures).toEqual([signature]);
  }, 60_000);

  it("the CLI's signAndConfirm and pollSignature (mailbox transactions) do too", async () => {
    const { chain, payer } = await droppingChain(1500);
    const signature = await signAndConfirm(chain.connection, [payer], transfer(payer, 1e6));
    expect(chain.devnet.fidelityStats().dropped).toBeGreaterThanOrEqual(1);
    expect((await chain.connection.getSignatureStatus(signature)).value?.err).toBeNull();

    chain.devnet.setFidelity({ dropRate: 1 });
    setTimeout(() => chain.devnet.setFidelity({ dropRate: 0 }), 1500);
    const latest = await chain.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(transfer(payer, 2e6));
    tx.sign(payer);
    const wire = tx.serialize();
    const sent = await chain.connection.sendRawTransaction(wire, { maxRetries: 0 });
    const outcome = await pollSignature(chain.connection, sent, { budgetMs: 20_000, wire });
    expect(outcome).toEqual({ status: 'confirmed', signature: sent });
  }, 60_000);

  it("the webmail's in-page wallet (sendInstructions) lands a send whose first tries were dropped, as one signature", async () => {
    const { chain, payer } = await droppingChain(1500);
    const wallet = inPageWallet(payer.secretKey);
    const outcome = await sendInstructions(chain.connection, wallet, [transfer(payer, 1e6)], {
      priorityFee: null,
      budgetMs: 20_000,
      intervalMs: 100,
    });
    expect(outcome.status).toBe('confirmed');
    expect(chain.devnet.fidelityStats().dropped).toBeGreaterThanOrEqual(1);
    const landed = await chain.connection.getTransaction(outcome.signature, { commitment: 'confirmed' });
    expect(landed?.meta?.err).toBeNull();
    expect(landed?.transaction.signatures).toEqual([outcome.signature]);
  }, 60_000);
});

/** A JSON-RPC endpoint that answers 429 (Retry-After 30) to getHealth and counts what it is asked. */
async function limitedNode(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits++;
      res.writeHead(429, { 'retry-after': '30', 'content-type': 'text/plain' });
      res.end('Too many requests');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/probe`, hits: () => hits };
}

describe('the chain readiness probe', () => {
  it('counts as a call, and while a 429 holds it reports the node reachable without asking again', async () => {
    const node = await limitedNode();
    const check = chainRpcCheck(node.url, 5);
    await check.run(new AbortController().signal);
    expect(node.hits()).toBe(1);
    for (let i = 0; i < 5; i++) await check.run(new AbortController().signal);
    expect(node.hits()).toBe(1);
  });

  it('gives up when the rate limit holds past its deadline, and hands the slot back once granted', async () => {
    let hits = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'ok' }));
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const check = chainRpcCheck(url, 1);
    await check.run(new AbortController().signal);
    // The one call of this second is spent: a probe that may wait 100 ms gives up without calling.
    const impatient = new AbortController();
    setTimeout(() => impatient.abort(), 100);
    await expect(check.run(impatient.signal)).rejects.toThrow('waiting for the RPC rate limit');
    expect(hits).toBe(1);
    // The slot the abandoned probe was granted later went back: the next second still has its call.
    await new Promise((r) => setTimeout(r, 2200));
    const t0 = Date.now();
    await check.run(new AbortController().signal);
    expect(Date.now() - t0).toBeLessThan(500);
    expect(hits).toBe(2);
  });
});

describe("the CLI's connection", () => {
  it("keeps to the loaded config's max_rps for its rpc_url, and to the default for another node", async () => {
    let calls = 0;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        calls++;
        const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { context: { slot: 1 }, value: 7 } }));
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const rpc = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'sealpost-cli-rps-'));
    dirs.push(dir);
    const file = join(dir, 'sealpost.toml');
    writeFileSync(file, `[chain]\nrpc_url = "${rpc}"\nmax_rps = 2\n`);
    loadCliConfig({ config: file }, { env: {}, stderr: { write: () => true } });
    const conn = cliConnection(rpc);
    const started = Date.now();
    await Promise.all(Array.from({ length: 5 }, () => conn.getBalance(Keypair.generate().publicKey)));
    // 5 calls at 2 per second: the last two wait for the second window to pass.
    expect(calls).toBe(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);

    // Another node (a loopback one: no limit by default) is not held to it.
    const other = cliConnection(`${rpc}/`);
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 5 }, () => other.getBalance(Keypair.generate().publicKey)));
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
