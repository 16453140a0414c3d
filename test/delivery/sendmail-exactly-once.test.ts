// Exactly once (docs/inbound.md "Exactly once") against a real devnet behind
// a hostile JSON-RPC proxy on a loopback port, with real Redis: a status
// read that lags past blockhash expiry (the landed SendMail's status hidden,
// as a lagging provider node or a history lookup it cannot answer does)
// never yields two Email accounts for one CID — for a single send, a
// batched send and a job retried after its worker died after sending; and
// with 60 % of sends silently dropped, rebroadcast delivers nearly every
// message with its first signature (inside one blockhash lifetime) and
// none twice.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ComputeBudgetProgram, Connection, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { computeUnitLimit } from '../../chain/client/compute-budget.ts';
import { decodeEmail, emailAddress, getMailbox } from '../../chain/client/index.ts';
import { closeEmailAccount } from '../../delivery/cleanup.ts';
import { PendingError } from '../../delivery/errors.ts';
import { SendMailBatcher } from '../../delivery/sendmail/batch.ts';
import { SignatureWatch } from '../../delivery/sendmail/signature-watch.ts';
import { type SubmitDeps, type SubmitInput, submitSendMail } from '../../delivery/stages/submit.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type MailChain, prepareMailChain } from '../support/mail-chain.ts';

type Submitted = NonNullable<StageResults['submit']>;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefixes: string[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length) await redis.del(...keys);
  }
});
afterAll(() => redis.disconnect());

interface RpcCall {
  jsonrpc: string;
  id: unknown;
  method: string;
  params?: unknown[];
}

/**
 * A JSON-RPC proxy in front of the devnet. `hide(sig)`: that signature's
 * status answers null (the rest of the answer, context slot included, as the
 * node gave it). `dropRate`: that share of sendTransaction calls is answered
 * with the signature and never forwarded. `dead`: every request fails.
 */
interface Proxy {
  url: string;
  connection: Connection;
  /** Signatures of every sendTransaction that came through, in order (dropped ones too). */
  sent: string[];
  hidden: Set<string>;
  /** Decides at its first send whether a signature's status stays hidden. */
  hideNew: boolean;
  dropRate: number;
  dropped: number;
  dead: boolean;
  /** Goes dead the moment a send has been forwarded (a worker whose node vanished right after its send). */
  dieAfterSend: boolean;
}

async function startProxy(target: string): Promise<Proxy> {
  const proxy: Proxy = {
    url: '',
    connection: undefined as unknown as Connection,
    sent: [],
    hidden: new Set(),
    hideNew: false,
    dropRate: 0,
    dropped: 0,
    dead: false,
    dieAfterSend: false,
  };
  const one = async (call: RpcCall): Promise<unknown | undefined> => {
    if (call.method === 'sendTransaction') {
      const wire = Buffer.from(String(call.params?.[0]), 'base64');
      const signature = bs58.encode(wire.subarray(1, 65));
      if (!proxy.sent.includes(signature)) {
        proxy.sent.push(signature);
        if (proxy.hideNew) proxy.hidden.add(signature);
      }
      if (Math.random() < proxy.dropRate) {
        proxy.dropped++;
        return { jsonrpc: '2.0', id: call.id, result: signature };
      }
    }
    return undefined;
  };
  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  const rewrite = (call: RpcCall, answer: { result?: { value?: unknown[] } }) => {
    if (call.method !== 'getSignatureStatuses' || !answer.result?.value) return answer;
    const sigs = (call.params?.[0] ?? []) as string[];
    answer.result.value = answer.result.value.map((v, i) => (proxy.hidden.has(sigs[i] as string) ? null : v));
    return answer;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (proxy.dead) {
          res.destroy();
          return;
        }
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcCall | RpcCall[];
          const calls = Array.isArray(body) ? body : [body];
          const local = await Promise.all(calls.map(one));
          const remote = calls.filter((_, i) => local[i] === undefined);
          const answers = remote.length
            ? ((await forward(remote)) as { id: unknown; result?: { value?: unknown[] } }[])
            : [];
          const out = calls.map((c, i) => {
            if (local[i] !== undefined) return local[i];
            const a = answers.find((x) => x.id === c.id) ?? answers[remote.indexOf(c)];
            return rewrite(c, a as { result?: { value?: unknown[] } });
          });
          // Set before the answer goes out: nothing after this send can reach the node.
          if (proxy.dieAfterSend && calls.some((c) => c.method === 'sendTransaction')) proxy.dead = true;
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(Array.isArray(body) ? out : out[0]));
        } catch (err) {
          res.statusCode = 502;
          res.end(String(err));
        }
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.connection = new Connection(proxy.url, { commitment: 'confirmed' });
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return proxy;
}

async function setup(opts: { slotMs?: number } = {}) {
  const chain = await startTestChain({ slotMs: opts.slotMs ?? 40 });
  const mail = await prepareMailChain(chain, 'mail.test');
  const proxy = await startProxy(chain.devnet.rpcUrl);
  return { chain, mail, proxy };
}

function prefix(): string {
  const p = `sptest-once-${randomBytes(6).toString('hex')}`;
  prefixes.push(p);
  return p;
}

/** A "worker process" talking to the chain through `connection`: its own status poller (and batcher). */
function worker(
  chain: TestChain,
  mail: MailChain,
  connection: Connection,
  opts: { lockPrefix: string; batch?: boolean; confirmTimeoutMs?: number },
): SubmitDeps {
  const watch = new SignatureWatch(connection);
  const base = { connection, programId: chain.programId, authority: mail.authority };
  const batcher = opts.batch
    ? new SendMailBatcher({
        ...base,
        redis,
        lockPrefix: opts.lockPrefix,
        watch,
        pipelined: true,
        maxPerTx: 4,
        lingerMs: 50,
        confirmTimeoutMs: opts.confirmTimeoutMs,
      })
    : undefined;
  closers.push(() => {
    batcher?.close();
    watch.close();
  });
  return {
    ...base,
    redis,
    lockPrefix: opts.lockPrefix,
    pipelined: true,
    batcher,
    watch,
    confirmTimeoutMs: opts.confirmTimeoutMs,
    // Two "expired" observations 1 s apart (3 s by default) keep the test short.
    expiryGapMs: 1000,
  } as SubmitDeps;
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

/**
 * The job as BullMQ runs it (delivery/pipeline.ts): an attempt, and on
 * failure another attempt from the last checkpoint (the job data) until
 * confirmed or out of attempts; a PendingError looks again after its delay
 * without spending an attempt.
 */
async function runJob(deps: SubmitDeps, job: TestJob, attempts = 6): Promise<Submitted | Error> {
  let last: unknown;
  const deadline = Date.now() + 100_000;
  for (let i = 0; i < attempts && Date.now() < deadline; ) {
    try {
      return await submitSendMail(deps, { ...job.input, previous: job.saved.at(-1) });
    } catch (err) {
      last = err;
      if (err instanceof PendingError) {
        await new Promise((r) => setTimeout(r, err.retryAfterMs));
        continue;
      }
      i++;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return last instanceof Error ? last : new Error(String(last));
}

/** Every Email account of `wallet` (index order): its cid. */
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

/** Waits until the confirmed block height is past `height`. */
async function pastHeight(conn: Connection, height: number): Promise<void> {
  while ((await conn.getBlockHeight('confirmed')) <= height) await new Promise((r) => setTimeout(r, 50));
}

const count = (list: string[], x: string) => list.filter((y) => y === x).length;

describe('exactly once under a lagging status read', () => {
  it('a single send whose status stays hidden past its blockhash expiry is recorded, not sent again', async () => {
    const { chain, mail, proxy } = await setup();
    const wallet = (await mail.mailbox()).publicKey.toBase58();
    const deps = worker(chain, mail, proxy.connection, { lockPrefix: prefix() });
    proxy.hideNew = true;
    const job = await newJob(wallet, 'lagging@remote.example');
    const result = await runJob(deps, job);
    const cids = await inboxCids(chain, wallet);
    // One Email for the CID, whatever the status reads said.
    expect(count(cids, job.cid)).toBe(1);
    expect(cids).toHaveLength(1);
    expect(result).not.toBeInstanceOf(Error);
    const r = result as Submitted;
    expect(r.confirmed).toBe(true);
    expect(r.index).toBe('0');
    expect(r.emailAddress).toBe(emailAddress(chain.programId, wallet, 0n)[0].toBase58());
    // Signed once: the hidden transaction was found through its Email account.
    expect(proxy.sent).toHaveLength(1);
  }, 120_000);

  it('a batched send whose status stays hidden past expiry: every message once', async () => {
    const { chain, mail, proxy } = await setup();
    const a = (await mail.mailbox()).publicKey.toBase58();
    const b = (await mail.mailbox()).publicKey.toBase58();
    const deps = worker(chain, mail, proxy.connection, { lockPrefix: prefix(), batch: true });
    proxy.hideNew = true;
    const jobs = await Promise.all([
      newJob(a, 'one@remote.example'),
      newJob(a, 'two@remote.example'),
      newJob(b, 'three@remote.example'),
    ]);
    const results = await Promise.all(jobs.map((j) => runJob(deps, j)));
    // They went out together (one batch) and that batch's status was never shown.
    expect(jobs[0]?.saved[0]?.batch?.size).toBeGreaterThan(1);
    const cidsA = await inboxCids(chain, a);
    const cidsB = await inboxCids(chain, b);
    expect([...cidsA].sort()).toEqual([jobs[0]?.cid, jobs[1]?.cid].sort());
    expect(cidsB).toEqual([jobs[2]?.cid]);
    for (const r of results) {
      expect(r).not.toBeInstanceOf(Error);
      expect((r as Submitted).confirmed).toBe(true);
    }
    // Each job recorded the account that holds its own CID.
    const all = [...cidsA.map((c, i) => [a, i, c] as const), ...cidsB.map((c, i) => [b, i, c] as const)];
    for (const [i, j] of jobs.entries()) {
      const [w, index] = all.find(([, , c]) => c === j.cid) ?? [];
      expect((results[i] as Submitted).emailAddress).toBe(
        emailAddress(chain.programId, w as string, BigInt(index as number))[0].toBase58(),
      );
    }
  }, 120_000);

  it('a job retried after its worker died right after sending: once', async () => {
    const { chain, mail, proxy } = await setup();
    const wallet = (await mail.mailbox()).publicKey.toBase58();
    const lockPrefix = prefix();
    // The first worker's own way to the chain; it "dies" (every request fails) once its send went out.
    const dying = await startProxy(chain.devnet.rpcUrl);
    dying.dieAfterSend = true;
    const first = worker(chain, mail, dying.connection, { lockPrefix, confirmTimeoutMs: 1500 });
    const job = await newJob(wallet, 'crash@remote.example');
    const attempt = submitSendMail(first, job.input).then(
      () => 'done',
      () => 'died',
    );
    expect(await attempt).toBe('died');
    expect(dying.sent).toHaveLength(1);
    const checkpoint = job.saved.at(-1) as Submitted;
    expect(checkpoint.signature).toBe(dying.sent[0]);
    // BullMQ retries the job on another worker, whose RPC node never shows that signature.
    proxy.hidden.add(checkpoint.signature);
    await pastHeight(chain.connection, checkpoint.lastValidBlockHeight);
    const second = worker(chain, mail, proxy.connection, { lockPrefix });
    const result = await runJob(second, job);
    const cids = await inboxCids(chain, wallet);
    expect(cids).toEqual([job.cid]);
    expect(result).not.toBeInstanceOf(Error);
    expect((result as Submitted).signature).toBe(checkpoint.signature);
    expect(proxy.sent).toHaveLength(0);
  }, 120_000);
});

describe('DeleteMail under a lagging status read', () => {
  it('a DeleteMail whose status stays hidden past expiry is found closed, not signed again; a retry from its checkpoint too', async () => {
    const { chain, mail, proxy } = await setup();
    const wallet = (await mail.mailbox()).publicKey.toBase58();
    const direct = worker(chain, mail, chain.connection, { lockPrefix: prefix() });
    const jobs = await Promise.all([newJob(wallet, 'a@remote.example'), newJob(wallet, 'b@remote.example')]);
    const published = [];
    for (const j of jobs) published.push((await runJob(direct, j)) as Submitted);
    proxy.hideNew = true;
    const watch = new SignatureWatch(proxy.connection);
    closers.push(() => watch.close());
    const deps = {
      connection: proxy.connection,
      programId: chain.programId,
      authority: mail.authority,
      watch,
      expiryGapMs: 1000,
    };
    // Watched through to expiry in one attempt.
    const first = { wallet, emailAddress: published[0]?.emailAddress as string, messageId: 'm1' };
    const saved: unknown[] = [];
    expect(await closeEmailAccount(deps, first, async (sent) => void saved.push(sent))).toBe('closed');
    expect(proxy.sent).toHaveLength(1);
    expect(saved).toHaveLength(1);
    // A worker that died after sending: the retry settles the checkpoint.
    const second = { wallet, emailAddress: published[1]?.emailAddress as string, messageId: 'm2' };
    const dying = await startProxy(chain.devnet.rpcUrl);
    dying.dieAfterSend = true;
    const dyingWatch = new SignatureWatch(dying.connection);
    closers.push(() => dyingWatch.close());
    let sent: NonNullable<Parameters<typeof closeEmailAccount>[1]['sent']> | undefined;
    const attempt = closeEmailAccount(
      { ...deps, connection: dying.connection, watch: dyingWatch, confirmTimeoutMs: 1500 },
      second,
      async (s) => {
        sent = s;
      },
    ).then(
      () => 'done',
      () => 'died',
    );
    expect(await attempt).toBe('died');
    expect(dying.sent).toHaveLength(1);
    proxy.hidden.add(sent?.signature as string);
    await pastHeight(chain.connection, sent?.lastValidBlockHeight as number);
    expect(await closeEmailAccount(deps, { ...second, sent })).toBe('closed');
    expect(proxy.sent).toHaveLength(1);
    const infos = await chain.connection.getMultipleAccountsInfo(
      published.map((p) => new PublicKey(p.emailAddress)),
      'confirmed',
    );
    expect(infos).toEqual([null, null]);
  }, 120_000);
});

describe('rebroadcast under dropped sends', () => {
  it('60 % of sends dropped: every message delivered, nearly all with their first signature, none twice', async () => {
    // 80 ms slots: a blockhash lives 150 slots (12 s), six rebroadcasts of 2 s.
    const { chain, mail, proxy } = await setup({ slotMs: 80 });
    const wallets = await Promise.all([0, 1, 2].map(async () => (await mail.mailbox()).publicKey.toBase58()));
    const deps = worker(chain, mail, proxy.connection, { lockPrefix: prefix() });
    proxy.dropRate = 0.6;
    const jobs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => newJob(wallets[i % 3] as string, `drop${i}@remote.example`)),
    );
    const started = Date.now();
    const results = await Promise.all(jobs.map((j) => runJob(deps, j)));
    const elapsed = Date.now() - started;
    expect(proxy.dropped).toBeGreaterThan(0);
    for (const r of results) expect(r).not.toBeInstanceOf(Error);
    const inbox = (await Promise.all(wallets.map((w) => inboxCids(chain, w)))).flat();
    for (const j of jobs) expect(count(inbox, j.cid)).toBe(1);
    expect(inbox).toHaveLength(12);
    // Mostly inside one blockhash lifetime: delivered by the bytes first signed.
    const firstTry = jobs.filter((j, i) => (results[i] as Submitted).signature === j.saved[0]?.signature);
    expect(firstTry.length).toBeGreaterThanOrEqual(9);
    expect(elapsed).toBeLessThan(60_000);
  }, 150_000);
});

describe('against the fidelity devnet', () => {
  it('statuses lagging 200 slots for half the signatures and 60 % of sends dropped: every message once', async () => {
    // The measured case: hidden past blockhash expiry (150 slots), p = 0.5, plus drops.
    const chain = await startTestChain({ slotMs: 40 });
    const mail = await prepareMailChain(chain, 'mail.test');
    const wallets = await Promise.all([0, 1, 2].map(async () => (await mail.mailbox()).publicKey.toBase58()));
    // Switched on once the chain is set up (its helpers confirm by a single status read).
    chain.devnet.setFidelity({ statusLagSlots: 200, statusLagProbability: 0.5, dropRate: 0.6 });
    const single = worker(chain, mail, chain.connection, { lockPrefix: prefix() });
    const batched = worker(chain, mail, chain.connection, { lockPrefix: prefix(), batch: true });
    const jobs = await Promise.all(
      Array.from({ length: 16 }, (_, i) => newJob(wallets[i % 3] as string, `fid${i}@remote.example`)),
    );
    const results = await Promise.all(jobs.map((j, i) => runJob(i % 2 ? batched : single, j)));
    expect(chain.devnet.fidelityStats().hiddenStatuses).toBeGreaterThan(0);
    expect(chain.devnet.fidelityStats().dropped).toBeGreaterThan(0);
    const inbox = (await Promise.all(wallets.map((w) => inboxCids(chain, w)))).flat();
    // Never twice (checked first), and every one delivered.
    expect(jobs.filter((j) => count(inbox, j.cid) > 1).length).toBe(0);
    for (const r of results) expect(r).not.toBeInstanceOf(Error);
    for (const j of jobs) expect(count(inbox, j.cid)).toBe(1);
    expect(inbox).toHaveLength(jobs.length);
  }, 150_000);
});

describe('compute budget in the pipeline', () => {
  it('every batch carries SetComputeUnitLimit and SetComputeUnitPrice and fits 1232 bytes', async () => {
    const { chain, mail } = await setup();
    const wallets = await Promise.all(
      Array.from({ length: 6 }, async () => (await mail.mailbox()).publicKey.toBase58()),
    );
    const deps = worker(chain, mail, chain.connection, { lockPrefix: prefix(), batch: true });
    // Every message from its own sender (a frombox key each): the most keys per SendMail.
    const jobs = await Promise.all(
      Array.from({ length: 18 }, (_, i) => newJob(wallets[i % 6] as string, `budget${i}@remote.example`)),
    );
    const results = await Promise.all(jobs.map((j) => runJob(deps, j)));
    for (const r of results) expect(r).not.toBeInstanceOf(Error);
    const txs = new Map<string, Buffer>();
    for (const j of jobs) for (const s of j.saved) txs.set(s.signature, Buffer.from(s.tx, 'base64'));
    expect([...txs.values()].some((raw) => Transaction.from(raw).instructions.length > 3)).toBe(true);
    for (const raw of txs.values()) {
      expect(raw.length).toBeLessThanOrEqual(1232);
      const tx = Transaction.from(raw);
      const [limit, price, ...sends] = tx.instructions;
      expect(limit?.programId.equals(ComputeBudgetProgram.programId)).toBe(true);
      expect(price?.programId.equals(ComputeBudgetProgram.programId)).toBe(true);
      // SetComputeUnitLimit (tag 2, u32 units): sized from the SendMails, far below 200,000 each.
      expect(limit?.data[0]).toBe(2);
      const units = limit?.data.readUInt32LE(1) ?? 0;
      expect(units).toBe(computeUnitLimit(sends) + 2 * 150);
      expect(units).toBeLessThan(20_000 * sends.length);
      // SetComputeUnitPrice (tag 3, u64 µlamports): auto, at least the floor of 1.
      expect(price?.data[0]).toBe(3);
      expect(price?.data.readBigUInt64LE(1)).toBeGreaterThanOrEqual(1n);
    }
    const inbox = (await Promise.all(wallets.map((w) => inboxCids(chain, w)))).flat();
    expect(inbox.sort()).toEqual(jobs.map((j) => j.cid).sort());
  }, 120_000);
});
