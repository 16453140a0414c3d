// Devnet SendMail throughput: sendTransaction → confirmed, over N relayed
// sends (default 2,000). Devnet runs as its own process (`sealpost devnet`),
// as in production, and this process is the only client.
//
//   npm run bench:devnet -- [--sends 2000] [--recipients 100] [--slot-ms 400]
//
// Load shape: one sequential stream per recipient (each send needs the
// mailbox's current mail_count, as the delivery pipeline does), all
// recipients in parallel; sends signed with the current blockhash and
// confirmed by batched getSignatureStatuses polling.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  sendAndConfirmTransaction,
  Transaction,
} from '@solana/web3.js';
import {
  createDomainInstruction,
  createMailboxInstruction,
  fromHash,
  initPostofficeInstruction,
  sendMailInstruction,
} from '../chain/client/index.ts';
import { faucetKeypairPath } from '../chain/devnet/server.ts';

const { values } = parseArgs({
  options: {
    sends: { type: 'string', default: '2000' },
    recipients: { type: 'string', default: '500' },
    'slot-ms': { type: 'string', default: '400' },
  },
});
const SENDS = Number(values.sends);
const RECIPIENTS = Math.min(Number(values.recipients), SENDS);
const SLOT_MS = Number(values['slot-ms']);
const DOMAIN = 'bench.localhost';

async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => resolve(port));
      });
      srv.on('error', reject);
    });
    const next = await new Promise<boolean>((resolve) => {
      const srv = createServer().listen(port + 1, '127.0.0.1', () => srv.close(() => resolve(true)));
      srv.on('error', () => resolve(false));
    });
    if (next) return port;
  }
}

async function waitForRpc(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }),
      });
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`devnet did not answer at ${url}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-'));
  const port = await freePortPair();
  const child = spawn(
    process.execPath,
    [
      'bin/sealpost.js',
      'devnet',
      '--data-dir',
      dir,
      '--listen',
      `127.0.0.1:${port}`,
      '--slot-ms',
      String(SLOT_MS),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, SEALPOST_LOG_LEVEL: 'warn' } },
  );
  try {
    const rpcUrl = `http://127.0.0.1:${port}`;
    await waitForRpc(rpcUrl);
    const connection = new Connection(rpcUrl, {
      commitment: 'confirmed',
      wsEndpoint: `ws://127.0.0.1:${port + 1}`,
    });
    const programId = (await import('../chain/client/program-id.ts')).DEFAULT_PROGRAM_ID;

    // The program's upgrade authority is devnet's faucet; InitPostoffice needs its signature.
    const faucetFile = faucetKeypairPath(join(dir, 'devnet'));
    const upgradeAuthority = Keypair.fromSecretKey(
      Uint8Array.from(JSON.parse(readFileSync(faucetFile, 'utf8'))),
    );
    const delegate = Keypair.generate();
    const authority = Keypair.generate();
    for (const k of [delegate, authority]) {
      const sig = await connection.requestAirdrop(k.publicKey, 1_000 * LAMPORTS_PER_SOL);
      await connection.confirmTransaction({ signature: sig, ...(await connection.getLatestBlockhash()) });
    }
    await sendAndConfirmTransaction(
      connection,
      new Transaction().add(
        initPostofficeInstruction({
          programId,
          admin: delegate.publicKey,
          upgradeAuthority: upgradeAuthority.publicKey,
          delegateAddress: delegate.publicKey,
          stampFeeLamports: 1000n,
          settlementSurchargeLamports: 5000n,
        }),
        createDomainInstruction({
          programId,
          delegate: delegate.publicKey,
          domain: DOMAIN,
          authority: authority.publicKey,
        }),
      ),
      [delegate, upgradeAuthority],
    );
    const recipients = Array.from({ length: RECIPIENTS }, () => Keypair.generate());
    for (let i = 0; i < recipients.length; i += 4) {
      const batch = recipients.slice(i, i + 4);
      const tx = new Transaction().add(
        ...batch.map((r) =>
          createMailboxInstruction({
            programId,
            owner: r.publicKey,
            payer: authority.publicKey,
            domain: DOMAIN,
          }),
        ),
      );
      await sendAndConfirmTransaction(connection, tx, [authority, ...batch]);
    }

    const from = fromHash('bench@example.org');
    const latencies: number[] = [];
    let failures = 0;
    const perRecipient = Math.ceil(SENDS / RECIPIENTS);
    let remaining = SENDS;

    // One blockhash per slot for every send, and one batched status poll for
    // all signatures in flight — what a real sender with many messages does —
    // so the figure measures the node, not per-call client overhead.
    let blockhash = (await connection.getLatestBlockhash('confirmed')).blockhash;
    const refresh = setInterval(
      () => {
        connection.getLatestBlockhash('confirmed').then(
          (b) => {
            blockhash = b.blockhash;
          },
          () => {},
        );
      },
      Math.max(50, SLOT_MS / 2),
    );
    const waiting = new Map<string, (err: unknown) => void>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const sigs = [...waiting.keys()];
        for (let i = 0; i < sigs.length; i += 256) {
          const batch = sigs.slice(i, i + 256);
          const { value } = await connection.getSignatureStatuses(batch);
          value.forEach((status, j) => {
            const sig = batch[j] as string;
            if (
              status &&
              (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')
            ) {
              waiting.get(sig)?.(status.err);
              waiting.delete(sig);
            }
          });
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    const started = performance.now();
    await Promise.all(
      recipients.map(async (r) => {
        for (let index = 0n; index < BigInt(perRecipient) && remaining > 0; index++) {
          remaining--;
          const t0 = performance.now();
          const tx = new Transaction({ feePayer: authority.publicKey, recentBlockhash: blockhash }).add(
            sendMailInstruction({
              programId,
              sender: authority.publicKey,
              recipient: r.publicKey,
              index,
              fromHash: from,
              cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
              domain: DOMAIN,
            }),
          );
          tx.sign(authority);
          try {
            // web3.js re-verifies every signature in serialize() by default (~2 ms in pure JS); we just signed it.
            const sig = await connection.sendRawTransaction(tx.serialize({ verifySignatures: false }));
            const err = await new Promise<unknown>((resolve) => waiting.set(sig, resolve));
            if (err) throw new Error(JSON.stringify(err));
            latencies.push(performance.now() - t0);
          } catch (err) {
            failures++;
            if (failures < 5) console.error(`send failed: ${(err as Error).message}`);
          }
        }
      }),
    );
    polling = false;
    clearInterval(refresh);
    await poller;
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const result = {
      benchmark: 'devnet SendMail sendTransaction→confirmed',
      load: `${SENDS} relayed sends, ${RECIPIENTS} recipients in parallel (sequential per recipient), slot ${SLOT_MS} ms`,
      sends: SENDS,
      confirmed: latencies.length,
      failures,
      seconds: Number(seconds.toFixed(2)),
      tx_per_second: Number((latencies.length / seconds).toFixed(1)),
      latency_ms: {
        p50: Math.round(percentile(latencies, 50)),
        p95: Math.round(percentile(latencies, 95)),
        p99: Math.round(percentile(latencies, 99)),
      },
    };
    console.table([
      {
        sends: result.sends,
        confirmed: result.confirmed,
        failures: result.failures,
        s: result.seconds,
        'tx/s': result.tx_per_second,
        'p50 ms': result.latency_ms.p50,
        'p99 ms': result.latency_ms.p99,
      },
    ]);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/devnet-sendmail.json', `${JSON.stringify(result, null, 2)}\n`);
    if (failures > 0) process.exitCode = 1;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
