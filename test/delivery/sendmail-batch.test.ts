// Batched SendMail (delivery/sendmail/batch.ts, signed by
// delivery/sendmail/legacy-tx.ts) against a real devnet
// and real Redis: a burst to one wallet lands in few transactions with
// consecutive indices and exactly one Email per message; a batch with one
// refused recipient delivers the others and refuses only that one; a
// process that dies after its jobs checkpointed a batch (before or after the
// send) neither loses nor doubles a message when the jobs are retried.
import { randomBytes } from 'node:crypto';
import { Keypair, type PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  decodeEmail,
  emailAddress,
  fromHash,
  getMailbox,
  sendMailInstruction,
} from '../../chain/client/index.ts';
import { PermanentDeliveryError } from '../../delivery/errors.ts';
import { batchMarkKey, SendMailBatcher } from '../../delivery/sendmail/batch.ts';
import { keyFileOf, signLegacy } from '../../delivery/sendmail/legacy-tx.ts';
import { SignatureWatch } from '../../delivery/sendmail/signature-watch.ts';
import { type SubmitDeps, type SubmitInput, submitSendMail } from '../../delivery/stages/submit.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import { computeCid } from '../../src/mail/cid.ts';
import { startTestChain, type TestChain } from '../support/devnet.ts';
import { type MailChain, prepareMailChain } from '../support/mail-chain.ts';

type Submitted = NonNullable<StageResults['submit']>;
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
const prefixes: string[] = [];
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  for (const p of prefixes.splice(0)) {
    const keys = await redis.keys(`${p}:*`);
    if (keys.length) await redis.del(...keys);
  }
});
afterAll(() => redis.disconnect());

// One devnet per test (test/support/devnet.ts stops it after each); a second
// "process" in a test joins the first one's chain.
let current: { chain: TestChain; mail: MailChain } | undefined;
afterEach(() => {
  current = undefined;
});
async function chainOnce() {
  current ??= await (async () => {
    const chain = await startTestChain();
    return { chain, mail: await prepareMailChain(chain, 'mail.test') };
  })();
  return current;
}

/** A "worker process": its own status poller and batcher, sharing Redis and the chain. */
async function workerProcess(opts: { lingerMs?: number; maxPerTx?: number } = {}) {
  const { chain, mail } = await chainOnce();
  const prefix = `sptest-batch-${randomBytes(6).toString('hex')}`;
  prefixes.push(prefix);
  const watch = new SignatureWatch(chain.connection);
  const base = { connection: chain.connection, programId: chain.programId, authority: mail.authority };
  const batcher = new SendMailBatcher({
    ...base,
    redis,
    lockPrefix: prefix,
    watch,
    pipelined: true,
    maxPerTx: opts.maxPerTx ?? 8,
    lingerMs: opts.lingerMs ?? 5,
  });
  closers.push(() => {
    batcher.close();
    watch.close();
  });
  const deps: SubmitDeps = { ...base, redis, lockPrefix: prefix, pipelined: true, batcher, watch };
  return { chain, mail, deps, prefix };
}

/** One delivery's submit input; its checkpoints are collected in `saved`. */
async function job(wallet: string, from: string, saved: Submitted[] = []) {
  const cid = await computeCid(randomBytes(64));
  const input: SubmitInput = {
    wallet,
    envelopeFrom: from,
    localDomains: ['mail.test'],
    cid,
    checkpoint: async (s) => {
      saved.push(s);
    },
  };
  return { input, cid, saved };
}

/** The Email accounts of `wallet` at indices [0, count): their cids, in index order. */
async function inboxCids(chain: TestChain, wallet: string): Promise<string[]> {
  const mailbox = await getMailbox(chain.connection, chain.programId, wallet, 'confirmed');
  const count = Number(mailbox?.mailCount ?? 0n);
  const addresses = Array.from(
    { length: count },
    (_, i) => emailAddress(chain.programId, wallet, BigInt(i))[0],
  );
  const infos = await chain.connection.getMultipleAccountsInfo(addresses, 'confirmed');
  return infos.map((info) => {
    if (!info) throw new Error('missing Email account');
    return decodeEmail(new Uint8Array(info.data)).cid;
  });
}

describe('signLegacy', () => {
  it('writes a transaction web3.js reads back with the same instructions and a valid signature', async () => {
    const authority = Keypair.generate();
    const programId = Keypair.generate().publicKey.toBase58();
    const wallets = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    const cid = await computeCid(randomBytes(64));
    const ixs = [0, 1, 2].map((i) =>
      sendMailInstruction({
        programId,
        sender: authority.publicKey,
        recipient: wallets[i % 2] as PublicKey,
        index: BigInt(i),
        fromHash: fromHash(`s${i}@remote.example`),
        cid,
        domain: 'mail.test',
      }),
    );
    const blockhash = Keypair.generate().publicKey.toBase58();
    const { raw, signature } = signLegacy(keyFileOf(authority.secretKey), ixs, blockhash);
    const tx = Transaction.from(raw);
    expect(tx.verifySignatures()).toBe(true);
    expect(bs58.encode(tx.signature ?? new Uint8Array())).toBe(signature);
    expect(tx.recentBlockhash).toBe(blockhash);
    expect(tx.feePayer?.equals(authority.publicKey)).toBe(true);
    expect(tx.instructions).toHaveLength(3);
    tx.instructions.forEach((ix, i) => {
      const want = ixs[i] as TransactionInstruction;
      expect(ix.programId.equals(want.programId)).toBe(true);
      expect(Buffer.from(ix.data).equals(Buffer.from(want.data))).toBe(true);
      expect(ix.keys.map((k) => [k.pubkey.toBase58(), k.isSigner, k.isWritable])).toEqual(
        want.keys.map((k) => [k.pubkey.toBase58(), k.isSigner, k.isWritable]),
      );
    });
    // The same size web3.js writes for the same instructions.
    const ref = new Transaction({ feePayer: authority.publicKey, blockhash, lastValidBlockHeight: 0 }).add(
      ...ixs,
    );
    ref.sign(authority);
    expect(raw.length).toBe(ref.serialize().length);
  });
});

describe('batched SendMail', () => {
  it('a burst to one wallet lands in few transactions with consecutive indices, one Email each', async () => {
    const { chain, mail, deps } = await workerProcess();
    const wallet = (await mail.mailbox()).publicKey.toBase58();
    const jobs = await Promise.all(
      Array.from({ length: 24 }, (_, i) => job(wallet, `s${i % 5}@remote.example`)),
    );
    const results = await Promise.all(jobs.map((j) => submitSendMail(deps, j.input)));
    expect(results.every((r) => r.confirmed)).toBe(true);
    const indices = results.map((r) => Number(r.index)).sort((a, b) => a - b);
    expect(indices).toEqual(Array.from({ length: 24 }, (_, i) => i));
    const signatures = new Set(results.map((r) => r.signature));
    // Packed several per transaction (the packet limit allows a few SendMails each).
    expect(signatures.size).toBeLessThanOrEqual(12);
    expect(results.some((r) => (r.batch?.size ?? 1) > 1)).toBe(true);
    // Each message exactly once, at the index its job recorded.
    const cids = await inboxCids(chain, wallet);
    expect(cids).toHaveLength(24);
    results.forEach((r, i) => {
      expect(cids[Number(r.index)]).toBe(jobs[i]?.cid);
    });
  }, 120_000);

  it('a batch with one refused recipient delivers the others and refuses only that one', async () => {
    // A long wait gathers all three into one flush (and one transaction: three fit the packet).
    const { chain, mail, deps } = await workerProcess({ lingerMs: 300 });
    const open = (await mail.mailbox()).publicKey.toBase58();
    const strict = (await mail.mailbox({ postage: 1_000_000n })).publicKey.toBase58();
    const good = await Promise.all([0, 1].map((i) => job(open, `friend${i}@remote.example`)));
    const bad = await job(strict, 'stranger@remote.example');
    const outcomes = await Promise.allSettled([
      ...good.map((j) => submitSendMail(deps, j.input)),
      submitSendMail(deps, bad.input),
    ]);
    const refused = outcomes[2];
    expect(refused?.status).toBe('rejected');
    const err = (refused as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(PermanentDeliveryError);
    expect((err as PermanentDeliveryError).code).toBe('PostageRequired');
    // The refused message had been checkpointed inside a shared batch.
    expect(bad.saved[0]?.batch?.size).toBeGreaterThan(1);
    for (const [i, o] of outcomes.slice(0, 2).entries()) {
      expect(o.status).toBe('fulfilled');
      const r = (o as PromiseFulfilledResult<Submitted>).value;
      expect(r.confirmed).toBe(true);
      // Sent again on its own after the shared batch failed.
      expect(good[i]?.saved.length).toBeGreaterThanOrEqual(2);
      expect(r.signature).not.toBe(bad.saved[0]?.signature);
    }
    expect((await inboxCids(chain, open)).sort()).toEqual(good.map((j) => j.cid).sort());
    expect(await inboxCids(chain, strict)).toEqual([]);
  }, 120_000);

  it('jobs of a batch that died after checkpointing, before the send, are rebuilt once', async () => {
    const first = await workerProcess();
    const wallet = (await first.mail.mailbox()).publicKey.toBase58();
    // Three from different senders fill one packet with the compute-budget instructions.
    const jobs = await Promise.all([0, 1, 2].map((i) => job(wallet, `d${i}@remote.example`)));
    // The process "dies" while the last job's checkpoint is being written: it never sends.
    let recorded = 0;
    const dying = jobs.map((j, i) =>
      submitSendMail(first.deps, {
        ...j.input,
        checkpoint: async (s) => {
          j.saved.push(s);
          recorded++;
          if (i === 2) await new Promise(() => {});
        },
      }).catch(() => undefined),
    );
    while (recorded < 3) await new Promise((r) => setTimeout(r, 5));
    void dying;
    const batchSig = jobs[0]?.saved[0]?.signature as string;
    expect(jobs.every((j) => j.saved[0]?.signature === batchSig)).toBe(true);
    expect(jobs[0]?.saved[0]?.batch?.size).toBe(3);
    // Another process retries every job from its checkpoint, as a real retry
    // does: after the chain has moved past the blockhash the batch was built on
    // (rebuilt within the same slot, the same messages would sign to the same bytes).
    const seen = (await first.chain.connection.getLatestBlockhash('confirmed')).blockhash;
    while ((await first.chain.connection.getLatestBlockhash('confirmed')).blockhash === seen)
      await new Promise((r) => setTimeout(r, 20));
    const second = await workerProcess();
    const deps = { ...second.deps, lockPrefix: first.prefix };
    const retried = await Promise.all(
      jobs.map((j) => submitSendMail(deps, { ...j.input, previous: j.saved[0] })),
    );
    expect(await redis.get(batchMarkKey(first.prefix, batchSig))).toBe('abandoned');
    expect(retried.every((r) => r.confirmed && r.signature !== batchSig)).toBe(true);
    const cids = await inboxCids(first.chain, wallet);
    expect(cids.sort()).toEqual(jobs.map((j) => j.cid).sort());
  }, 120_000);

  it('jobs of a batch that was sent before its process died are not sent again', async () => {
    const { chain, mail, deps, prefix } = await workerProcess();
    const wallet = (await mail.mailbox()).publicKey.toBase58();
    const jobs = await Promise.all([0, 1, 2].map((i) => job(wallet, `e${i}@remote.example`)));
    const sent = await Promise.all(jobs.map((j) => submitSendMail(deps, j.input)));
    const batchSig = sent[0]?.signature as string;
    expect(sent.every((s) => s.signature === batchSig)).toBe(true);
    expect(await redis.get(batchMarkKey(prefix, batchSig))).toBe('sent');
    // The jobs' last records were written before the send; a retry starts from them.
    const again = await Promise.all(
      jobs.map((j) =>
        submitSendMail(deps, {
          ...j.input,
          previous: { ...(j.saved.at(-1) as Submitted), confirmed: false },
        }),
      ),
    );
    expect(again.map((a) => a.signature)).toEqual(sent.map((s) => s.signature));
    const cids = await inboxCids(chain, wallet);
    expect(cids.sort()).toEqual(jobs.map((j) => j.cid).sort());
  }, 120_000);
});
