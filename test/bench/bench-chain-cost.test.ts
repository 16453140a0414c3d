// The end-to-end rows' chain cost (bench/harness/pipeline-load.ts `chain`,
// the table's "RPC calls/msg" and "lamports/msg" columns): the counting
// proxy (bench/harness/stack.ts startRpcCounter) is what the stack's config
// names as rpc_url and counts every JSON-RPC call (a batch as its calls),
// and a small load through the in-process stack (real devnet, pind, the
// pipeline, Redis under a random prefix) reports calls and lamports per
// delivered message that add up: every lamport the authority paid is a fee
// or an Email account's rent.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { perMessageOf, runLoad } from '../../bench/harness/pipeline-load.ts';
import { startSealpostMx } from '../../bench/harness/sealpost-mx.ts';
import { startRpcCounter, writeStackConfig } from '../../bench/harness/stack.ts';
import { formatTable } from '../../bench/harness/table.ts';
import { emailSize, rentExemptLamports } from '../../chain/client/accounts/index.ts';
import { startTestChain } from '../support/devnet.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** An Email account of a 59-character CID (CIDv1), as the pipeline publishes. */
const RENT = Number(rentExemptLamports(emailSize('b'.repeat(59))));

describe('bench chain cost', () => {
  it('the counter takes the next stack config and counts each call of a batch', async () => {
    const chain = await startTestChain();
    const counter = await startRpcCounter();
    cleanups.push(() => counter.close());
    const dir = mkdtempSync(join(tmpdir(), 'sealpost-bench-cost-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const input = {
      dir,
      keysDir: join(dir, 'keys'),
      rpcUrl: chain.devnet.rpcUrl,
      programId: chain.programId,
      pindUrl: 'http://127.0.0.1:1',
      gatewayUrl: 'http://127.0.0.1:1',
      redisUrl: 'redis://127.0.0.1:6379',
      prefix: 'unused',
      mxPort: 1,
      apiPort: 2,
    };
    const file = writeStackConfig(input);
    const toml = readFileSync(file, 'utf8');
    expect(toml).toContain(`rpc_url = "${counter.url}"`);
    expect(toml).toContain(`ws_url = "${chain.devnet.wsUrl}"`);
    expect(counter.target).toBe(chain.devnet.rpcUrl);
    expect(counter.keysDir).toBe(join(dir, 'keys'));
    // Placed once: the next config is the chain's own.
    const again = readFileSync(writeStackConfig(input), 'utf8');
    expect(again).toContain(`rpc_url = "${chain.devnet.rpcUrl}"`);
    expect(again).not.toContain('ws_url');

    const post = (body: unknown) =>
      fetch(counter.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<unknown>);
    const one = (await post({ jsonrpc: '2.0', id: 1, method: 'getSlot' })) as { result: number };
    expect(one.result).toBeGreaterThanOrEqual(0);
    const batch = (await post([
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'getBlockHeight' },
      { jsonrpc: '2.0', id: 3, method: 'getSlot' },
    ])) as unknown[];
    expect(batch).toHaveLength(3);
    expect(await counter.count()).toEqual({
      requests: 2,
      calls: 4,
      methods: { getSlot: 3, getBlockHeight: 1 },
    });
  });

  it('a load through the stack: calls and lamports per delivered message, rent + fees = what the authority paid', async () => {
    // The whole stack in this process (SEALPOST_BENCH_IN_PROCESS=1's), behind a counter, as measurePipelineLoad runs it.
    const counter = await startRpcCounter();
    cleanups.push(() => counter.close());
    const stack = await startSealpostMx({ workers: true, wallets: 2 });
    cleanups.push(() => stack.stop());
    const r = await runLoad(stack, { messages: 6, clients: 2, bytes: 1024 }, counter);
    expect(r.undelivered).toBe(0);
    expect(r.chainError).toBeUndefined();
    const c = r.chain;
    if (!c) throw new Error('no chain cost');
    // The pipeline sent at least one transaction per delivered transaction and polled for them.
    expect(c.rpc.methods.sendTransaction ?? 0).toBeGreaterThanOrEqual(r.transactions);
    expect(c.rpc.methods.getSignatureStatuses ?? 0).toBeGreaterThan(0);
    expect(c.rpc.calls).toBe(Object.values(c.rpc.methods).reduce((a, b) => a + b, 0));
    expect(c.rpcCallsPerMessage).toBeCloseTo(c.rpc.calls / 6);
    expect(c.rpcCallsPerMessage).toBeGreaterThanOrEqual(2);
    // Each message's Email account, plus at least a share of a 5,000-lamport signature fee.
    expect(c.rentPerMessage).toBe(RENT);
    expect(RENT).toBe(2_679_600);
    expect(c.lamportsPerMessage).toBeGreaterThanOrEqual(RENT);
    expect(c.transactions).toBeGreaterThanOrEqual(r.transactions);
    expect(c.feeLamports).toBeGreaterThanOrEqual(5000 * c.transactions);
    expect(c.lamports).toBe(c.feeLamports + c.rentLamports);
    expect(c.otherLamports).toBe(0);
    expect(c.failedTransactions).toBe(0);
    // The table's columns.
    const table = formatTable([
      { name: 'e2e', unit: 'msg/s', sealpost: { value: r.perSecond }, perMessage: perMessageOf(r) },
    ]);
    const [header, , row] = table.split('\n');
    expect(header).toContain('RPC calls/msg');
    expect(header).toContain('lamports/msg (authority)');
    expect(row).toContain(`| ${c.rpcCallsPerMessage.toFixed(1)} `);
    expect(row).toContain(
      `${Math.round(c.lamportsPerMessage).toLocaleString('en-US')} (rent 2,679,600 + fees ${Math.round(c.feesPerMessage).toLocaleString('en-US')})`,
    );
  }, 180_000);
});
