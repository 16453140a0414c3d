// chain/client/compute-budget.ts: the compute-unit table against the program's
// measured use (so it cannot go stale silently), the budget instructions'
// encoding, the fee arithmetic and its cap, resolvePriorityFee against a
// JSON-RPC server's getRecentPrioritizationFees (and one that fails), and
// the packet-size accounting of the budget instructions.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPUTE_BUDGET_TX_BYTES,
  computeBudgetInstructions,
  computeUnitLimit,
  DEFAULT_INSTRUCTION_CU,
  MAX_COMPUTE_UNIT_LIMIT,
  MEASURED_COMPUTE_UNITS,
  maxPriceFor,
  measuredUnitsOf,
  type PriorityFeePolicy,
  parsePriorityFee,
  percentileOf,
  priorityFeeLamports,
  priorityFeePolicyOf,
  raiseForRound,
  resolvePriorityFee,
  withComputeBudget,
  withMargin,
  writableKeysOf,
} from '../../chain/client/compute-budget.ts';
import { fromHash } from '../../chain/client/hash.ts';
import { INSTRUCTION_TAGS } from '../../chain/client/instruction-data.ts';
import {
  createDomainInstruction,
  sendMailInstruction,
  withReputation,
} from '../../chain/client/instructions.ts';
import {
  createBuffer,
  deployWithMaxDataLen,
  MAX_WRITE_CHUNK,
  upgrade,
  write,
  writeChunks,
} from '../../chain/client/loader.ts';
import { writeChunkSize } from '../../chain/program/deploy/plan.ts';
import { withBudget } from '../../chain/program/deploy/sender.ts';
import { measureComputeUnits } from '../../chain/program/host/compute-units.ts';
import { createRuntime } from '../../chain/program/host/runtime.ts';
import { ConfigError, parseConfig, renderConfigToml } from '../../src/core/config/index.ts';
import { SO_PATH } from '../support/program-world.ts';

const programId = Keypair.generate().publicKey;
const sender = Keypair.generate().publicKey;
const recipient = Keypair.generate().publicKey;
const CID = 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy';
const sendMail = (index: bigint, extra: { domain?: string; bountyLamports?: bigint } = {}) =>
  sendMailInstruction({
    programId,
    sender,
    recipient,
    index,
    fromHash: fromHash(sender),
    cid: CID,
    ...extra,
  });

describe('the compute-unit table', () => {
  it('covers every row measureComputeUnits measures, each at or above its measured maximum', () => {
    const rows = measureComputeUnits({ runs: 3 });
    const stale: string[] = [];
    for (const row of rows) {
      const max = Math.max(...row.computeUnits);
      const figure = MEASURED_COMPUTE_UNITS[row.name];
      if (figure === undefined) stale.push(`${row.name}: measured ${max}, not in the table`);
      else if (max > figure) stale.push(`${row.name}: measured ${max} > table ${figure}`);
    }
    // After a program change: `npm run bench:program`, then update MEASURED_COMPUTE_UNITS.
    expect(stale).toEqual([]);
    // And the table names nothing the measurement no longer runs.
    const measured = new Set(rows.map((r) => r.name));
    expect(Object.keys(MEASURED_COMPUTE_UNITS).filter((n) => !measured.has(n))).toEqual([]);
  }, 120_000);

  it('has a figure for every mail-program instruction kind', () => {
    const kinds = new Set(Object.keys(MEASURED_COMPUTE_UNITS).map((n) => n.replace(/ \(.*\)$/, '')));
    expect(Object.keys(INSTRUCTION_TAGS).filter((k) => !kinds.has(k))).toEqual([]);
  });

  it('tells SendMail variants and CreateDomain lengths apart', () => {
    const direct = measuredUnitsOf(sendMail(0n)) ?? 0;
    const relayed = measuredUnitsOf(sendMail(0n, { domain: 'example.org' })) ?? 0;
    const reputation = measuredUnitsOf(withReputation(sendMail(0n), { programId, sender, recipient })) ?? 0;
    const rule = measuredUnitsOf(
      withReputation(sendMail(0n), { programId, sender, recipient, applyRule: true }),
    );
    expect(direct).toBe(MEASURED_COMPUTE_UNITS['SendMail (direct, 128-byte cid)']);
    expect(relayed).toBe(MEASURED_COMPUTE_UNITS['SendMail (relayed, open mailbox)']);
    expect(reputation).toBe(MEASURED_COMPUTE_UNITS['SendMail (direct, stamp, new reputation)']);
    expect(rule).toBe(reputation);
    expect(relayed).toBeLessThan(direct);
    expect(direct).toBeLessThan(reputation);

    const delegate = Keypair.generate().publicKey;
    const domain = (name: string) =>
      measuredUnitsOf(createDomainInstruction({ programId, delegate, domain: name, authority: delegate })) ??
      0;
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(domain('a.example')).toBe(MEASURED_COMPUTE_UNITS['CreateDomain (9 bytes)']);
    expect(domain(long)).toBe(MEASURED_COMPUTE_UNITS['CreateDomain (253 bytes)']);
    const mid = domain(`${'x'.repeat(60)}.${'y'.repeat(59)}`);
    expect(mid).toBeGreaterThan(domain('a.example'));
    expect(mid).toBeLessThan(domain(long));
  });

  it('sums a batch with the margin, counts the other programs, and caps at 1,400,000', () => {
    const one = computeUnitLimit([sendMail(0n)]);
    expect(one).toBe(withMargin(MEASURED_COMPUTE_UNITS['SendMail (direct, 128-byte cid)'] ?? 0));
    expect(withMargin(10_000)).toBe(14_500);
    const batch = Array.from({ length: 16 }, (_, i) => sendMail(BigInt(i)));
    expect(computeUnitLimit(batch)).toBe(16 * one);
    // A SendMail asks for ~16,600 CU instead of the default 200,000.
    expect(one).toBeLessThan(20_000);
    const transfer = SystemProgram.transfer({ fromPubkey: sender, toPubkey: recipient, lamports: 1 });
    expect(computeUnitLimit([transfer, sendMail(0n)])).toBe(one + 150);
    const unknown = new TransactionInstruction({ programId, keys: [], data: Buffer.from([250]) });
    expect(computeUnitLimit([unknown])).toBe(DEFAULT_INSTRUCTION_CU);
    expect(computeUnitLimit(Array.from({ length: 8 }, () => unknown))).toBe(MAX_COMPUTE_UNIT_LIMIT);
    const budgeted = withComputeBudget([sendMail(0n)], 1_000n);
    expect(budgeted).toHaveLength(3);
    expect(computeUnitLimit(budgeted)).toBe(one + 300);
  });

  it('gives the loader enough for a Write, a deploy of the mail program and an upgrade (litesvm)', () => {
    const so = new Uint8Array(readFileSync(SO_PATH));
    const rt = createRuntime({ so, maxDataLen: so.length * 2 });
    const p = rt.payer.publicKey;
    const buffer = Keypair.generate();
    const create = createBuffer({ payer: p, buffer: buffer.publicKey, authority: p, programLen: so.length });
    expect(rt.run(create, [buffer]).err).toBeNull();
    const writes = writeChunks(buffer.publicKey, p, so);
    let maxWrite = 0;
    for (const w of writes) {
      const r = rt.run([w]);
      expect(r.err).toBeNull();
      maxWrite = Math.max(maxWrite, r.computeUnits);
    }
    expect(maxWrite).toBeLessThanOrEqual(computeUnitLimit([writes[0] as TransactionInstruction]));
    const spill = Keypair.generate().publicKey;
    const up = [upgrade({ programId: rt.programId, buffer: buffer.publicKey, authority: p, spill })];
    const upgraded = rt.run(up);
    expect(upgraded.err).toBeNull();
    expect(upgraded.computeUnits).toBeLessThanOrEqual(computeUnitLimit(up));

    // A fresh deploy: buffer, writes, then CreateAccount + DeployWithMaxDataLen.
    const buffer2 = Keypair.generate();
    const create2 = createBuffer({
      payer: p,
      buffer: buffer2.publicKey,
      authority: p,
      programLen: so.length,
    });
    expect(rt.run(create2, [buffer2]).err).toBeNull();
    for (const w of writeChunks(buffer2.publicKey, p, so)) expect(rt.run([w]).err).toBeNull();
    const program = Keypair.generate();
    const deploy = deployWithMaxDataLen({
      payer: p,
      programId: program.publicKey,
      buffer: buffer2.publicKey,
      authority: p,
      maxDataLen: so.length * 2,
    });
    const deployed = rt.run(deploy, [program]);
    expect(deployed.err).toBeNull();
    expect(deployed.computeUnits).toBeLessThanOrEqual(computeUnitLimit(deploy));
  }, 60_000);
});

describe('the budget instructions', () => {
  it('encode SetComputeUnitLimit and, when priced, SetComputeUnitPrice', () => {
    const [limit, price] = computeBudgetInstructions({ unitLimit: 16_873, microLamportsPerCu: 5_000n });
    expect(limit?.programId.equals(ComputeBudgetProgram.programId)).toBe(true);
    expect([...(limit?.data ?? [])]).toEqual([2, 0xe9, 0x41, 0, 0]);
    expect([...(price?.data ?? [])]).toEqual([3, 0x88, 0x13, 0, 0, 0, 0, 0, 0]);
    expect(limit?.keys).toEqual([]);
    const unpriced = computeBudgetInstructions({ unitLimit: 2_000_000, microLamportsPerCu: 0n });
    expect(unpriced).toHaveLength(1);
    expect([...(unpriced[0]?.data ?? [])]).toEqual([2, 0xc0, 0x5c, 0x15, 0]); // capped at 1,400,000
  });

  it(`add ${COMPUTE_BUDGET_TX_BYTES} bytes to a transaction; a Write of MAX_WRITE_CHUNK with them fits 1232`, () => {
    const payer = Keypair.generate();
    const wire = (ixs: TransactionInstruction[]) => {
      const t = new Transaction({ feePayer: payer.publicKey, recentBlockhash: PublicKey.default.toBase58() });
      t.add(...ixs);
      t.sign(payer);
      return t.serialize({ requireAllSignatures: false }).length;
    };
    const ix = sendMail(3n);
    expect(wire(withComputeBudget([ix], 2n ** 63n)) - wire([ix])).toBe(COMPUTE_BUDGET_TX_BYTES);
    // The largest single instruction a holder sends (CLI and webmail): a SendMail with a 128-byte
    // CID, a bounty, a reply hash, the reputation and rule accounts, behind its budget.
    const biggest = withReputation(
      sendMailInstruction({
        programId,
        sender: payer.publicKey,
        recipient,
        index: 2n ** 63n,
        fromHash: fromHash(payer.publicKey),
        cid: 'x'.repeat(128),
        bountyLamports: 1n,
        expiresAt: 1n,
        replyToHash: new Uint8Array(32).fill(7),
      }),
      { programId, sender: payer.publicKey, recipient, applyRule: true },
    );
    expect(wire(withComputeBudget([biggest], 2n ** 63n))).toBeLessThanOrEqual(1232);
    const w = (n: number) => write(Keypair.generate().publicKey, payer.publicKey, 123_456, new Uint8Array(n));
    expect(wire(withComputeBudget([w(MAX_WRITE_CHUNK)], 2n ** 63n))).toBe(1232);
    expect(() => wire(withComputeBudget([w(MAX_WRITE_CHUNK + 1)], 1n))).toThrow(/too large/i);
  });
});

describe("the deploy's Write chunks", () => {
  it('fill a packet with the budget instructions exactly, one signer or a separate upgrade authority', () => {
    for (const separate of [false, true]) {
      const payer = Keypair.generate();
      const authority = separate ? Keypair.generate() : payer;
      const buffer = Keypair.generate().publicKey;
      const size = writeChunkSize(payer.publicKey, authority.publicKey, buffer);
      if (!separate) expect(size).toBe(MAX_WRITE_CHUNK);
      const wire = (n: number, price: bigint) => {
        const ix = write(buffer, authority.publicKey, 4_000_000, new Uint8Array(n));
        const t = new Transaction({
          feePayer: payer.publicKey,
          recentBlockhash: PublicKey.default.toBase58(),
        });
        t.add(...withBudget([ix], price, { mode: 'auto', maxLamports: 2n ** 64n }));
        t.sign(...(separate ? [payer, authority] : [payer]));
        return t.serialize().length;
      };
      expect(wire(size, 2n ** 63n)).toBe(1232);
      expect(wire(size, 1n)).toBe(1232);
      expect(() => wire(size + 1, 1n)).toThrow(/too large/i);
    }
  });
});

describe('the fee arithmetic', () => {
  it('rounds the fee up and caps the price', () => {
    expect(priorityFeeLamports(200_000, 1n)).toBe(1n);
    expect(priorityFeeLamports(200_000, 0n)).toBe(0n);
    expect(priorityFeeLamports(1_000_000, 1_000n)).toBe(1_000n);
    expect(priorityFeeLamports(1_000_001, 1_000n)).toBe(1_001n);
    expect(priorityFeeLamports(16_873, 10_000n)).toBe(169n);
    expect(maxPriceFor(16_873, 100_000n)).toBe(5_926_628n);
    expect(priorityFeeLamports(16_873, maxPriceFor(16_873, 100_000n))).toBeLessThanOrEqual(100_000n);
    expect(priorityFeeLamports(16_873, maxPriceFor(16_873, 100_000n) + 1n)).toBeGreaterThan(100_000n);
    expect(maxPriceFor(16_873, 0n)).toBe(0n);
    expect(raiseForRound(1_000n, 0)).toBe(1_000n);
    expect(raiseForRound(1_000n, 1)).toBe(1_500n);
    expect(raiseForRound(1_000n, 2)).toBe(2_250n);
    expect(raiseForRound(1n, 1)).toBe(2n);
    expect(percentileOf([], 75)).toBe(0n);
    expect(percentileOf([5n, 1n, 4n, 2n, 3n, 6n, 8n, 7n], 75)).toBe(6n);
    expect(percentileOf([5n, 1n, 4n], 100)).toBe(5n);
    expect(percentileOf([5n, 1n, 4n], 1)).toBe(1n);
  });

  it('parses the [chain] settings', () => {
    expect(parsePriorityFee('auto')).toEqual({ mode: 'auto' });
    expect(parsePriorityFee('5000')).toEqual({ mode: 'fixed', microLamports: 5_000n });
    expect(parsePriorityFee('-1')).toBeUndefined();
    expect(parsePriorityFee('1.5')).toBeUndefined();
    expect(parsePriorityFee('10000000000000')).toBeUndefined();
    expect(
      priorityFeePolicyOf({
        priority_fee: 'auto',
        priority_fee_percentile: 90,
        max_priority_fee_lamports: 7,
      }),
    ).toEqual({ mode: 'auto', percentile: 90, maxLamports: 7n });
    expect(priorityFeePolicyOf({ priority_fee: 42, max_priority_fee_lamports: 7 })).toEqual({
      mode: 'fixed',
      microLamports: 42n,
      maxLamports: 7n,
    });
  });
});

describe('the [chain] keys', () => {
  const errorsOf = (text: string): string[] => {
    try {
      parseConfig(text, { env: {}, source: 'test.toml' });
    } catch (err) {
      if (err instanceof ConfigError) return err.lines();
      throw err;
    }
    return [];
  };

  it('default to auto, the 75th percentile and 100,000 lamports, round-trip, and name the key when out of range', () => {
    const c = parseConfig('', { env: {}, source: 'test.toml' });
    expect([
      c.chain.priority_fee,
      c.chain.priority_fee_percentile,
      c.chain.max_priority_fee_lamports,
    ]).toEqual(['auto', 75, 100_000]);
    const fixed = parseConfig('[chain]\npriority_fee = 5000\npriority_fee_percentile = 90\n', {
      env: {},
      source: 'test.toml',
    });
    expect(priorityFeePolicyOf(fixed.chain)).toEqual({
      mode: 'fixed',
      microLamports: 5_000n,
      maxLamports: 100_000n,
    });
    const again = parseConfig(renderConfigToml(fixed), { env: {}, source: 'again.toml' });
    expect(again.chain.priority_fee).toBe(5000);
    expect(again.chain.priority_fee_percentile).toBe(90);
    const bad = errorsOf(
      '[chain]\npriority_fee = "fast"\npriority_fee_percentile = 0\nmax_priority_fee_lamports = -1\n',
    );
    expect(bad.some((l) => l.startsWith('chain.priority_fee: expected "auto" or an integer'))).toBe(true);
    expect(bad).toContain('chain.priority_fee_percentile: expected integer 1-100, got 0');
    expect(bad).toContain('chain.max_priority_fee_lamports: expected integer 0-1000000000, got -1');
    expect(errorsOf('[chain]\npriority_fee = -5\n')[0]).toMatch(/^chain\.priority_fee: expected "auto"/);
  });
});

describe('resolvePriorityFee', () => {
  let server: Server;
  let url: string;
  let fees: number[] = [];
  let failing = false;
  const seen: unknown[][] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const call = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
        if (failing) {
          res.writeHead(503, { 'content-type': 'text/html' }).end('<html>down</html>');
          return;
        }
        if (call.method !== 'getRecentPrioritizationFees') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'no' } }));
          return;
        }
        seen.push((call.params?.[0] as unknown[]) ?? []);
        const result = fees.map((f, i) => ({ slot: 100 + i, prioritizationFee: f }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  const keys = Array.from({ length: 200 }, () => Keypair.generate().publicKey);
  const auto: PriorityFeePolicy = { mode: 'auto', maxLamports: 100_000n };

  it('takes the percentile of the recent fees over at most 128 writable keys, raises per round, caps', async () => {
    const conn = new Connection(url, { disableRetryOnRateLimit: true });
    fees = [0, 0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000];
    expect(await resolvePriorityFee(conn, auto, keys, 0, 20_000)).toBe(700n);
    expect(seen.at(-1)).toHaveLength(128);
    expect(seen.at(-1)?.[0]).toBe(keys[0]?.toBase58());
    expect(await resolvePriorityFee(conn, { ...auto, percentile: 100 }, keys, 0, 20_000)).toBe(1_000n);
    expect(await resolvePriorityFee(conn, auto, keys, 1, 20_000)).toBe(1_050n);
    expect(await resolvePriorityFee(conn, auto, keys, 2, 20_000)).toBe(1_575n);
    // Capped: 20,000 CU × price ≤ 10 lamports → 500 µlamports/CU.
    expect(await resolvePriorityFee(conn, { ...auto, maxLamports: 10n }, keys, 2, 20_000)).toBe(500n);
    // No fees seen (or all zero): the floor, 1 unless configured.
    fees = [];
    expect(await resolvePriorityFee(new Connection(url), auto, keys.slice(0, 2), 0, 20_000)).toBe(1n);
    fees = [0, 0, 0];
    expect(await resolvePriorityFee(conn, { ...auto, microLamports: 50n }, keys, 0, 20_000)).toBe(50n);
    // Fixed: the configured price, raised and capped the same way, no lookup.
    const before = seen.length;
    const fixed: PriorityFeePolicy = { mode: 'fixed', microLamports: 10_000n, maxLamports: 100_000n };
    expect(await resolvePriorityFee(conn, fixed, keys, 0, 20_000)).toBe(10_000n);
    expect(await resolvePriorityFee(conn, fixed, keys, 1, 20_000)).toBe(15_000n);
    expect(await resolvePriorityFee(conn, { ...fixed, microLamports: 0n }, keys, 3, 20_000)).toBe(0n);
    expect(seen.length).toBe(before);
  });

  it('falls back to the last price this connection saw, or the floor, and never throws', async () => {
    const conn = new Connection(url, { disableRetryOnRateLimit: true });
    fees = [4_000];
    expect(await resolvePriorityFee(conn, auto, keys, 0, 20_000)).toBe(4_000n);
    failing = true;
    try {
      expect(await resolvePriorityFee(conn, auto, keys, 0, 20_000)).toBe(4_000n);
      expect(await resolvePriorityFee(conn, auto, keys, 1, 20_000)).toBe(6_000n);
      const fresh = new Connection(url, { disableRetryOnRateLimit: true });
      expect(await resolvePriorityFee(fresh, { ...auto, microLamports: 25n }, keys, 0, 20_000)).toBe(25n);
      const nowhere = new Connection('http://127.0.0.1:1', { disableRetryOnRateLimit: true });
      expect(await resolvePriorityFee(nowhere, auto, keys, 0, 20_000)).toBe(1n);
    } finally {
      failing = false;
    }
  });

  it('asks about the fee payer and every writable account once', () => {
    const payer = Keypair.generate().publicKey;
    const ix = sendMail(0n);
    const w = writableKeysOf([ix, ix], payer);
    expect(w[0]?.equals(payer)).toBe(true);
    expect(w.map((k) => k.toBase58())).toEqual([
      payer.toBase58(),
      ...ix.keys.filter((k) => k.isWritable).map((k) => k.pubkey.toBase58()),
    ]);
  });
});
