// The SendMail path under congestion (docs/inbound.md "Fees and compute
// limits"; docs/devnet.md "Fidelity mode", min-fee): a real devnet whose
// fidelity mode drops every transaction priced under 10,000 µlamports/CU and
// answers getRecentPrioritizationFees around that level, real Redis under a
// random prefix. With `priority_fee = "auto"` (the default) every message is
// delivered, alone and batched, each landed transaction carrying a
// SetComputeUnitPrice at or above the minimum and a SetComputeUnitLimit far
// below 200,000 per instruction, and paying (meta.fee) more than the
// 5,000-lamport signature fee and no more than the cap above it. With a fixed
// price of 0, or a cap (`max_priority_fee_lamports`) below what the
// congestion needs, nothing lands, nothing is doubled, and the submit stage
// gives the job back with a plain error (an attempt spent) after its
// re-signs, each signing proven expired and searched first.
import { randomBytes } from 'node:crypto';
import {
  ComputeBudgetProgram,
  Connection,
  type PublicKey,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  budgetedUnitLimit,
  DEFAULT_MAX_PRIORITY_FEE_LAMPORTS,
  maxPriceFor,
  type PriorityFeePolicy,
  priorityFeeLamports,
  priorityFeePolicyOf,
  raiseForRound,
  resolvePriorityFee,
} from '../../chain/client/compute-budget.ts';
import { decodeEmail, emailAddress, getMailbox } from '../../chain/client/index.ts';
import { PendingError } from '../../delivery/errors.ts';
import { SendMailBatcher } from '../../delivery/sendmail/batch.ts';
import { SignatureWatch } from '../../delivery/sendmail/signature-watch.ts';
import { type SubmitDeps, type SubmitInput, submitSendMail } from '../../delivery/stages/submit.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type MailChain, prepareMailChain } from '../support/mail-chain.ts';

type Submitted = NonNullable<StageResults['submit']>;
const MIN_FEE = 10_000;
const SIGNATURE_FEE = 5000;
const DEFAULT_CU = 200_000;

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefixes: string[] = [];
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) close();
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length) await redis.del(...keys);
  }
});
afterAll(() => redis.disconnect());

/** A devnet prepared for mail, then congested (switched on once set up: its helpers pay no priority fee). */
async function congested(wallets: number) {
  const chain = await startTestChain({ slotMs: 40 });
  const mail = await prepareMailChain(chain, 'mail.test');
  const rcpts = await Promise.all(
    Array.from({ length: wallets }, async () => (await mail.mailbox()).publicKey.toBase58()),
  );
  chain.devnet.setFidelity({ minPriorityFeeMicroLamports: MIN_FEE });
  chain.devnet.resetFidelityStats();
  return { chain, mail, rcpts };
}

/** One deployment's Redis prefix: its worker processes share the recipients' leases. */
function deployment(): string {
  const lockPrefix = `sptest-congest-${randomBytes(6).toString('hex')}`;
  prefixes.push(lockPrefix);
  return lockPrefix;
}

/** A worker process's submit deps: its own Connection (so its own fee book), poller and, with `batch`, batcher. */
function worker(
  chain: TestChain,
  mail: MailChain,
  lockPrefix: string,
  opts: { batch?: boolean; priorityFee?: PriorityFeePolicy; maxResigns?: number },
): SubmitDeps {
  const connection = new Connection(chain.devnet.rpcUrl, { commitment: 'confirmed' });
  const watch = new SignatureWatch(connection);
  const base = { connection, programId: chain.programId, authority: mail.authority };
  const batcher = opts.batch
    ? new SendMailBatcher({
        ...base,
        redis,
        lockPrefix,
        watch,
        pipelined: true,
        maxPerTx: 4,
        lingerMs: 50,
        priorityFee: opts.priorityFee,
      })
    : undefined;
  closers.push(() => {
    batcher?.close();
    watch.close();
  });
  return {
    ...base,
    redis,
    lockPrefix,
    pipelined: true,
    batcher,
    watch,
    priorityFee: opts.priorityFee,
    expiryGapMs: 300,
    maxResigns: opts.maxResigns,
  };
}

interface TestJob {
  input: SubmitInput;
  cid: string;
  saved: Submitted[];
}

async function newJob(wallet: string, from: string): Promise<TestJob> {
  const saved: Submitted[] = [];
  const cid = await computeCid(randomBytes(64));
  return {
    cid,
    saved,
    input: {
      wallet,
      envelopeFrom: from,
      localDomains: ['mail.test'],
      cid,
      checkpoint: async (s) => {
        saved.push(s);
      },
    },
  };
}

/** One attempt as the pipeline runs it: a PendingError looks again (no attempt spent); anything else ends it. */
async function attempt(deps: SubmitDeps, job: TestJob): Promise<Submitted | Error> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      return await submitSendMail(deps, { ...job.input, previous: job.saved.at(-1) });
    } catch (err) {
      if (err instanceof PendingError && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, err.retryAfterMs));
        continue;
      }
      return err instanceof Error ? err : new Error(String(err));
    }
  }
}

async function inboxCids(chain: TestChain, wallet: string): Promise<string[]> {
  const mailbox = await getMailbox(chain.connection, chain.programId, wallet, 'confirmed');
  const count = Number(mailbox?.mailCount ?? 0n);
  const addresses = Array.from(
    { length: count },
    (_, i) => emailAddress(chain.programId, wallet, BigInt(i))[0],
  );
  const infos = addresses.length
    ? await chain.connection.getMultipleAccountsInfo(addresses, 'confirmed')
    : [];
  return infos.map((info) => (info ? decodeEmail(new Uint8Array(info.data)).cid : '(none)'));
}

/** The compute-budget instructions of a transaction: its limit and price (0 when it sets none). */
function budgetOf(ixs: TransactionInstruction[]): {
  unitLimit: number | undefined;
  price: bigint;
  others: TransactionInstruction[];
} {
  let unitLimit: number | undefined;
  let price = 0n;
  const others: TransactionInstruction[] = [];
  for (const ix of ixs) {
    if (!ix.programId.equals(ComputeBudgetProgram.programId)) {
      others.push(ix);
      continue;
    }
    // SetComputeUnitLimit: tag 2, u32 units; SetComputeUnitPrice: tag 3, u64 µlamports.
    if (ix.data[0] === 2) unitLimit = ix.data.readUInt32LE(1);
    else if (ix.data[0] === 3) price = ix.data.readBigUInt64LE(1);
  }
  return { unitLimit, price, others };
}

/** The landed transaction as getTransaction answers: its instructions and its fee. */
async function landed(
  conn: Connection,
  signature: string,
): Promise<{ ixs: TransactionInstruction[]; fee: number; err: unknown }> {
  const tx = await conn.getTransaction(signature, {
    commitment: 'confirmed',
    maxSupportedTransactionVersion: 0,
  });
  if (!tx?.meta) throw new Error(`${signature} has not landed`);
  const message = tx.transaction.message;
  const keys: PublicKey[] = message.staticAccountKeys;
  const ixs = message.compiledInstructions.map(
    (ci) =>
      ({
        programId: keys[ci.programIdIndex] as PublicKey,
        keys: ci.accountKeyIndexes.map((k) => ({ pubkey: keys[k] as PublicKey })),
        data: Buffer.from(ci.data),
      }) as unknown as TransactionInstruction,
  );
  return { ixs, fee: tx.meta.fee, err: tx.meta.err };
}

const count = (list: string[], x: string) => list.filter((y) => y === x).length;

describe('SendMail under congestion (min priority fee 10,000 µlamports/CU)', () => {
  it('auto (the default): every message lands, alone and batched, priced above the minimum, sized far below 200,000 CU, paying within the cap', async () => {
    const { chain, mail, rcpts } = await congested(3);
    // `[chain]` as an operator leaves it: priority_fee = "auto", max_priority_fee_lamports = 100,000.
    const configured = priorityFeePolicyOf({
      priority_fee: 'auto',
      max_priority_fee_lamports: Number(DEFAULT_MAX_PRIORITY_FEE_LAMPORTS),
    });
    const lockPrefix = deployment();
    const single = worker(chain, mail, lockPrefix, {});
    const batched = worker(chain, mail, lockPrefix, { batch: true, priorityFee: configured });
    // Each worker has seen the market once, as a running process has: a lookup that then times
    // out under load (5 s) falls back to that price, not to the floor the congestion drops.
    for (const w of [single, batched])
      expect(
        await resolvePriorityFee(w.connection, configured, [mail.authority.publicKey], 0, 200_000),
      ).toBeGreaterThanOrEqual(BigInt(MIN_FEE));
    const jobs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => newJob(rcpts[i % 3] as string, `busy${i}@remote.example`)),
    );
    const results = await Promise.all(jobs.map((j, i) => attempt(i % 2 ? batched : single, j)));
    for (const r of results) expect(r).not.toBeInstanceOf(Error);
    const inbox = (await Promise.all(rcpts.map((w) => inboxCids(chain, w)))).flat();
    for (const j of jobs) expect(count(inbox, j.cid)).toBe(1);
    expect(inbox).toHaveLength(jobs.length);

    const signatures = new Set(results.map((r) => (r as Submitted).signature));
    const roundOf = new Map(jobs.flatMap((j) => j.saved.map((s) => [s.signature, s.round] as const)));
    const byStage = new Map<string, number>();
    for (const signature of signatures) {
      const { ixs, fee, err } = await landed(chain.connection, signature);
      expect(err).toBeNull();
      const { unitLimit, price, others } = budgetOf(ixs);
      byStage.set(signature, others.length);
      // Priced from getRecentPrioritizationFees (75th percentile of 0.75–1.5 × the minimum).
      expect(price).toBeGreaterThanOrEqual(BigInt(MIN_FEE));
      // (×1.5 for each earlier signing of its job proven expired, if a slow start let one expire.)
      expect(price).toBeLessThanOrEqual(
        raiseForRound(BigInt(MIN_FEE * 1.5), (roundOf.get(signature) ?? 1) - 1),
      );
      // Sized from the SendMails' measured use: the two budget instructions' 150 CU each on top.
      expect(unitLimit).toBe(budgetedUnitLimit(others, 1n));
      expect(unitLimit as number).toBeLessThan((DEFAULT_CU / 10) * others.length);
      // Charged what the runtime charges, above the signature fee and within the cap above it.
      const priority = priorityFeeLamports(unitLimit as number, price);
      expect(fee).toBe(SIGNATURE_FEE + Number(priority));
      expect(fee).toBeGreaterThan(SIGNATURE_FEE);
      expect(fee - SIGNATURE_FEE).toBeLessThanOrEqual(Number(DEFAULT_MAX_PRIORITY_FEE_LAMPORTS));
    }
    // Both shapes landed: a transaction of one SendMail and one of several.
    expect([...byStage.values()].some((n) => n === 1)).toBe(true);
    expect([...byStage.values()].some((n) => n > 1)).toBe(true);
    // Every signing landed: none was priced under the minimum.
    expect(chain.devnet.fidelityStats().droppedLowFee).toBe(0);
  }, 120_000);

  it('a fixed priority_fee of 0: nothing lands, nothing twice; the attempt ends after its re-signs, each proven expired first', async () => {
    const { chain, mail, rcpts } = await congested(2);
    const zero = priorityFeePolicyOf({ priority_fee: 0, max_priority_fee_lamports: 100_000 });
    const lockPrefix = deployment();
    const single = worker(chain, mail, lockPrefix, { priorityFee: zero, maxResigns: 2 });
    const batched = worker(chain, mail, lockPrefix, { batch: true, priorityFee: zero, maxResigns: 2 });
    const a = rcpts[0] as string;
    const b = rcpts[1] as string;
    const alone = await newJob(a, 'alone@remote.example');
    const together = await Promise.all([newJob(b, 'one@remote.example'), newJob(b, 'two@remote.example')]);
    const results = await Promise.all([attempt(single, alone), ...together.map((j) => attempt(batched, j))]);
    // The submit stage gives up the attempt with a plain error (BullMQ spends an attempt and
    // retries with backoff): not a PendingError, not a permanent refusal.
    for (const r of results) {
      expect(r).toBeInstanceOf(Error);
      expect(r).not.toBeInstanceOf(PendingError);
      expect((r as Error).message).toMatch(/^SendMail for \S+ expired 2 times in a row; will retry$/);
    }
    // Signed twice each (the first and one re-sign), every signing checkpointed before it went out.
    for (const j of [alone, ...together]) {
      expect(j.saved).toHaveLength(2);
      expect(new Set(j.saved.map((s) => s.signature)).size).toBe(2);
      expect(j.saved.map((s) => s.round)).toEqual([1, 2]);
      // Nothing landed, so the re-sign is built at the index first signed (the proof's search starts there).
      const first = j.saved[0] as Submitted;
      expect(j.saved.map((s) => s.index)).toEqual([first.index, first.index]);
      expect(j.saved.map((s) => s.since)).toEqual([first.index, first.index]);
      for (const s of j.saved) {
        const tx = Transaction.from(Buffer.from(s.tx, 'base64'));
        const { unitLimit, price, others } = budgetOf(tx.instructions);
        // 0 (×1.5 on the re-sign is still 0): no SetComputeUnitPrice at all, only the limit.
        expect(price).toBe(0n);
        expect(tx.instructions).toHaveLength(1 + others.length);
        expect(unitLimit as number).toBeLessThan((DEFAULT_CU / 10) * others.length);
      }
    }
    // The two to one recipient first went out together, at indices 0 and 1.
    expect(together[0]?.saved[0]?.signature).toBe(together[1]?.saved[0]?.signature);
    expect(together[0]?.saved[0]?.batch?.size).toBe(2);
    expect(together.map((j) => j.saved[0]?.index).sort()).toEqual(['0', '1']);
    // Nothing landed: no Email, mail_count 0, no status for any signing; each was dropped for its fee.
    expect(await inboxCids(chain, a)).toEqual([]);
    expect(await inboxCids(chain, b)).toEqual([]);
    const all = [...new Set([alone, ...together].flatMap((j) => j.saved.map((s) => s.signature)))];
    expect(all.length).toBeGreaterThanOrEqual(4);
    const { value } = await chain.connection.getSignatureStatuses(all, { searchTransactionHistory: true });
    expect(value).toEqual(all.map(() => null));
    expect(chain.devnet.fidelityStats().droppedLowFee).toBeGreaterThanOrEqual(all.length);
  }, 120_000);

  it('a cap below what the congestion needs: the price is cut to the cap, nothing lands, nothing twice; a cap above it lands', async () => {
    const { chain, mail, rcpts } = await congested(1);
    const wallet = rcpts[0] as string;
    // A relayed SendMail asks for ~12,200 CU: 10,000 µlamports/CU costs ~123 lamports; 50 caps it at ~4,090.
    const tight = priorityFeePolicyOf({ priority_fee: 'auto', max_priority_fee_lamports: 50 });
    const lockPrefix = deployment();
    const deps = worker(chain, mail, lockPrefix, { priorityFee: tight, maxResigns: 2 });
    const job = await newJob(wallet, 'capped@remote.example');
    const result = await attempt(deps, job);
    expect(result).toBeInstanceOf(Error);
    expect(result).not.toBeInstanceOf(PendingError);
    expect((result as Error).message).toBe(`SendMail for ${wallet} expired 2 times in a row; will retry`);
    expect(job.saved).toHaveLength(2);
    for (const s of job.saved) {
      const { unitLimit, price, others } = budgetOf(
        Transaction.from(Buffer.from(s.tx, 'base64')).instructions,
      );
      expect(others).toHaveLength(1);
      // Auto would ask ≥ 10,000 (and ×1.5 on the re-sign); the cap holds both signings at the same price.
      expect(price).toBe(maxPriceFor(unitLimit as number, 50n));
      expect(price).toBeLessThan(BigInt(MIN_FEE));
      expect(priorityFeeLamports(unitLimit as number, price)).toBeLessThanOrEqual(50n);
    }
    expect(await inboxCids(chain, wallet)).toEqual([]);
    expect(chain.devnet.fidelityStats().droppedLowFee).toBeGreaterThanOrEqual(2);

    // The same job under a cap that covers the congestion: its next attempt proves the last signing
    // expired, finds no Email, re-signs at the market price and lands once.
    const roomy = worker(chain, mail, lockPrefix, {
      priorityFee: priorityFeePolicyOf({ priority_fee: 'auto', max_priority_fee_lamports: 1000 }),
    });
    const delivered = await attempt(roomy, job);
    expect(delivered).not.toBeInstanceOf(Error);
    expect(await inboxCids(chain, wallet)).toEqual([job.cid]);
    const { ixs, fee } = await landed(chain.connection, (delivered as Submitted).signature);
    const { price } = budgetOf(ixs);
    expect(price).toBeGreaterThanOrEqual(BigInt(MIN_FEE));
    expect(fee - SIGNATURE_FEE).toBeLessThanOrEqual(1000);
    expect((delivered as Submitted).round).toBe(3);
  }, 120_000);
});
