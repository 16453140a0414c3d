// The marketplace index (src/edge/api/market-index.ts) against an in-process
// devnet holding N open alias listings: the first build (every alias's name
// read from its creation transaction) with names looked up one at a time
// and 8 at a time (the default), a rebuild with the names known, and a read
// served from the cache — all in one run, so the rows compare on the same
// machine load.
//
//   npm run bench:market -- [--listings 150] [--runs 5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { pino } from 'pino';
import {
  createAliasInstruction,
  createMailboxInstruction,
  listAliasInstruction,
} from '../chain/client/instructions.ts';
import { startDevnet } from '../chain/devnet/server.ts';
import { MarketIndex } from '../src/edge/api/market-index.ts';

const { values } = parseArgs({
  options: { listings: { type: 'string', default: '150' }, runs: { type: 'string', default: '5' } },
});
const LISTINGS = Number(values.listings);
const RUNS = Number(values.runs);
const PER_TX = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-market-'));
  const devnet = await startDevnet({
    host: '127.0.0.1',
    port: 0,
    slotMs: 40,
    dataDir: dir,
    logger: pino({ level: 'silent' }),
  });
  try {
    const conn = new Connection(devnet.rpcUrl, 'confirmed');
    const programId = devnet.programId;
    const holder = Keypair.generate();
    const sig = await conn.requestAirdrop(holder.publicKey, 1_000 * LAMPORTS_PER_SOL);
    await conn.confirmTransaction({ signature: sig, ...(await conn.getLatestBlockhash()) }, 'confirmed');
    const send = async (ixs: TransactionInstruction[]) => {
      const latest = await conn.getLatestBlockhash('confirmed');
      const tx = new Transaction({ feePayer: holder.publicKey, ...latest }).add(...ixs);
      tx.sign(holder);
      const signature = await conn.sendRawTransaction(tx.serialize());
      const { value } = await conn.confirmTransaction({ signature, ...latest }, 'confirmed');
      if (value.err) throw new Error(`setup transaction failed: ${JSON.stringify(value.err)}`);
    };
    await send([createMailboxInstruction({ programId, owner: holder.publicKey })]);
    for (let i = 0; i < LISTINGS; i += PER_TX) {
      const ixs: TransactionInstruction[] = [];
      for (let k = i; k < Math.min(i + PER_TX, LISTINGS); k++) {
        const name = `bench${k}`;
        ixs.push(
          createAliasInstruction({ programId, owner: holder.publicKey, name }),
          listAliasInstruction({
            programId,
            holder: holder.publicKey,
            alias: name,
            priceLamports: 1_000_000n + BigInt(k),
          }),
        );
      }
      await send(ixs);
    }

    const serial: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    const cached: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      // A: names looked up one at a time.
      let t = performance.now();
      await new MarketIndex({ connection: conn, programId, minRefreshMs: 0, nameLookups: 1 }).read({
        fresh: true,
      });
      serial.push(performance.now() - t);
      // B: the default, 8 at a time.
      const index = new MarketIndex({ connection: conn, programId, minRefreshMs: 0 });
      t = performance.now();
      const first = await index.read({ fresh: true });
      cold.push(performance.now() - t);
      if (first.listings.length !== LISTINGS || first.listings.some((l) => l.name === null))
        throw new Error(`the index holds ${first.listings.length} listings, expected ${LISTINGS} with names`);
      t = performance.now();
      await index.read({ fresh: true });
      warm.push(performance.now() - t);
      t = performance.now();
      for (let i = 0; i < 1000; i++) await index.read();
      cached.push((performance.now() - t) / 1000);
    }
    const rows = [
      ['first build, 1 name lookup at a time', median(serial)],
      ['first build, 8 at a time (default)', median(cold)],
      ['rebuild (names known)', median(warm)],
      ['cached read', median(cached)],
    ] as const;
    console.log(
      `market index, ${LISTINGS} listings, median of ${RUNS} runs (shared machine: compare rows, not absolutes)`,
    );
    for (const [name, ms] of rows) console.log(`  ${name.padEnd(34)} ${ms.toFixed(ms < 1 ? 4 : 1)} ms`);
  } finally {
    await devnet.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
