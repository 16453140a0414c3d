// SendMail, signed by the domain authority. Exactly once: the signed
// transaction and its signature are checkpointed in the job before it is
// sent, sent with `maxRetries: 0` and the same bytes re-sent about every 2 s
// (chain/client/rebroadcast.ts through the status poller) until confirmed or
// expired. A new transaction (a re-sign, at a new index) is built only once
// the recorded one is proven not to have landed (settle() below,
// docs/inbound.md "Exactly once"): its status missing in a batch with the
// block height past its lastValidBlockHeight and answered from a bank at or
// past that height's slot, twice, `expiryGapMs` apart; and then no Email
// account of this recipient from the job's first checkpointed index to the
// current mail_count (read at `confirmed`, at or past that slot) holding
// this CID from this sender and from_hash. The CID is a fresh idempotency
// key per sealing. An Email found is the delivery: it is recorded and
// nothing is re-signed. The same settle() runs for a send that expired
// while this attempt watched it, for a batch's jobs, and for a job retried
// after its worker died (the checkpoint is all it needs).
// Sends to one recipient are serialized by a wallet-keyed lease
// (src/core/limits/lease.ts, swept with the account), because the Email
// account's address depends on the mailbox's mail_count at send time.
// Pipelined (the default, `[chain] pipeline_sendmail`): mail_count is read
// at `processed` and the lease is released once the send is processed, so
// the next send to the same recipient builds on it without waiting a slot
// for confirmation; the job itself still waits for `confirmed`. If a
// processed send is dropped (a skipped block), a later send built on it
// fails on chain (its Email address no longer matches) and is rebuilt by
// its retry, as is the dropped one: a fee is lost, never mail.
// Batched (`[chain] sendmail_batch_max` > 1): sends go through the worker
// process's SendMailBatcher (../sendmail/batch.ts), several per transaction;
// a batch's retry resends its bytes only when the batch was marked sent, and
// a job whose batch failed on chain because of another message is sent
// alone here.
import { type Connection, type Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import type { PriorityFeePolicy } from '../../chain/client/compute-budget.ts';
import {
  decodeEmail,
  decodeMailbox,
  emailAddress,
  fromHash,
  getMailbox,
  mailboxAddress,
  parseMailProgramError,
  sendMailInstruction,
} from '../../chain/client/index.ts';
import { sendSigned } from '../../chain/client/rebroadcast.ts';
import { relayDomainOf } from '../../chain/client/relay.ts';
import { readAccountsSince } from '../../chain/client/rpc.ts';
import type { StageResults } from '../../src/contracts/inbound-jobs.ts';
import { acquireWalletLease } from '../../src/core/limits/lease.ts';
import { ExpiredError, PendingError, PermanentDeliveryError, UnprovenExpiryError } from '../errors.ts';
import { feeBookOf } from '../priority-fee.ts';
import {
  batchMarkKey,
  instructionOf,
  notOurDomain,
  ownRefusal,
  PERMANENT,
  SendAloneError,
  type SendMailBatcher,
} from '../sendmail/batch.ts';
import { type SignatureState, SignatureWatch, settledAt } from '../sendmail/signature-watch.ts';

export interface SubmitDeps {
  connection: Connection;
  programId: string;
  authority: Keypair;
  redis: Redis;
  lockPrefix: string;
  /** Expiry of a recipient's SendMail lease (renewed while held; a crashed holder frees it this late). */
  lockMs?: number;
  /** How long to wait for confirmation before giving the job back for a retry. */
  confirmTimeoutMs?: number;
  /** Hold the recipient's lease only until the send is processed (see the header). */
  pipelined?: boolean;
  /** The process's batcher: new sends go through it, several per transaction. */
  batcher?: SendMailBatcher;
  /** The process's shared status poller (one per call when absent). */
  watch?: SignatureWatch;
  /** The gap between the two "expired" observations a re-sign needs (default 3 s). */
  expiryGapMs?: number;
  /** Re-signs within one attempt before the job is given back to BullMQ (default 3). */
  maxResigns?: number;
  /** `[chain] priority_fee` & co. (delivery/priority-fee.ts; auto, 100,000 lamports at most, when absent). */
  priorityFee?: PriorityFeePolicy;
  /**
   * How many copies' intents in the store name this signature (delivery/pipeline.ts):
   * a batch every one of whose jobs recorded it durably may have been sent
   * even when its `sent` mark is gone from Redis, so it is resent, never abandoned.
   */
  batchRecorded?: (signature: string) => Promise<number>;
  sleep?: (ms: number) => Promise<void>;
}

export interface SubmitInput {
  wallet: string;
  envelopeFrom: string;
  /**
   * The server's local domains: the SendMail names the one whose MailDomain
   * the recipient's mailbox belongs to, read when mail_count is (RelayNotAllowed
   * on chain through any other; refused here, unsent, when it is none of them).
   */
  localDomains: readonly string[];
  cid: string;
  /** How many transactions this job signed before (raises the priority fee of the next). */
  round?: number;
  previous?: StageResults['submit'];
  /** Persists the checkpoint into the job before the transaction is sent. */
  checkpoint(submit: NonNullable<StageResults['submit']>): Promise<void>;
}

type Submitted = NonNullable<StageResults['submit']>;

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Default gap between the two "expired" observations before a re-sign. */
export const EXPIRY_GAP_MS = 3000;

export async function submitSendMail(deps: SubmitDeps, input: SubmitInput): Promise<Submitted> {
  const sleep = deps.sleep ?? defaultSleep;
  const watch = deps.watch ?? new SignatureWatch(deps.connection);
  if (input.previous?.confirmed) return input.previous;
  let prev = input.previous;
  // The newest record this call checkpointed: what an expiry seen here is settled from.
  const last: { rec?: Submitted } = {};
  // Read through a function: the checkpoint callback writes it behind the compiler's back.
  const lastRecord = (): Submitted | undefined => last.rec;
  const record: SubmitInput = {
    ...input,
    checkpoint: async (s) => {
      // Every signing of this job keeps the lowest index any of them was built at (the search starts there).
      const since = [prev?.since, prev?.index, s.index]
        .filter((x): x is string => x !== undefined && x !== '')
        .reduce((a, b) => (BigInt(a) <= BigInt(b) ? a : b));
      const rec: Submitted = { ...s, since, round: (prev?.round ?? 0) + 1 };
      await input.checkpoint(rec);
      last.rec = rec;
    },
  };
  const maxResigns = deps.maxResigns ?? 3;
  for (let resign = 0; ; resign++) {
    let alone = false;
    if (prev) {
      const outcome = await settle(deps, watch, input, prev, sleep);
      if (outcome.kind === 'done') return outcome.submit;
      // A batch that failed because of another message is not batched again.
      alone = outcome.alone;
      if (resign >= maxResigns)
        throw new Error(`SendMail for ${input.wallet} expired ${resign} times in a row; will retry`);
    }
    last.rec = undefined;
    try {
      const sent = await sendNew(deps, watch, { ...record, round: prev?.round ?? 0 }, alone, sleep);
      // The batcher answers with its own record: the job's bookkeeping rides along.
      const rec = lastRecord();
      return rec?.signature === sent.signature ? { ...rec, ...sent, confirmed: true } : sent;
    } catch (err) {
      // Expired while watched here: settled (proven, searched) before anything is signed again.
      const rec = lastRecord();
      if (!(err instanceof ExpiredError) || rec?.signature !== err.signature) throw err;
      prev = rec;
    }
  }
}

async function sendNew(
  deps: SubmitDeps,
  watch: SignatureWatch,
  input: SubmitInput,
  alone: boolean,
  sleep: (ms: number) => Promise<void>,
): Promise<Submitted> {
  if (deps.batcher && !alone) {
    try {
      return await deps.batcher.send(input);
    } catch (err) {
      if (!(err instanceof SendAloneError)) throw err;
    }
  }
  return sendAlone(deps, watch, input, sleep);
}

type Settled = { kind: 'done'; submit: Submitted } | { kind: 'rebuild'; alone: boolean };

/**
 * Where the checkpointed send stands, driven to an end: landed (done), an
 * Email with this job's CID found (done, that account recorded), or proven
 * not landed (rebuild). Still valid: the same bytes are sent again and
 * watched. Throws when the chain refused this job's own message for good,
 * and PendingError while nothing is proven yet.
 */
async function settle(
  deps: SubmitDeps,
  watch: SignatureWatch,
  input: SubmitInput,
  prev: Submitted,
  sleep: (ms: number) => Promise<void>,
): Promise<Settled> {
  const done = (): Settled => ({ kind: 'done', submit: { ...prev, confirmed: true } });
  let state = await watch.check(prev.signature, prev.lastValidBlockHeight);
  if (state.kind === 'pending' && prev.batch && prev.batch.size > 1) {
    // Other jobs' messages ride in these bytes: resend only a batch that was marked sent;
    // one that was not is marked abandoned, so its sender never sends it (../sendmail/batch.ts).
    // Abandoned bytes were never sent and never will be: nothing to prove.
    // A batch whose every job recorded it in the store (its mark lost with Redis) may have been sent: resent.
    const key = batchMarkKey(deps.lockPrefix, prev.signature);
    const mark = await deps.redis.get(key);
    if (mark === 'abandoned') return { kind: 'rebuild', alone: false };
    if (mark !== 'sent') {
      const recorded = deps.batchRecorded ? await deps.batchRecorded(prev.signature) : 0;
      if (recorded < prev.batch.size) {
        const won = await deps.redis.set(key, 'abandoned', 'EX', 3600, 'NX');
        if (won === 'OK' || (await deps.redis.get(key)) === 'abandoned')
          return { kind: 'rebuild', alone: false };
      }
    }
  }
  if (state.kind === 'pending' || state.kind === 'processed') {
    // Same bytes again (harmless if they already reached a node), re-sent while watched.
    const wire = Buffer.from(prev.tx, 'base64');
    await sendSigned(deps.connection, wire, { skipPreflight: true }).catch(() => {});
    try {
      state = await watchUntil(deps, watch, prev, 'confirmed', sleep, wire);
    } catch (err) {
      if (!(err instanceof ExpiredError)) throw err;
      state = { kind: 'expired', heightSlot: 0, passedSlot: 0 };
    }
  }
  if (state.kind === 'landed') return done();
  if (state.kind === 'failed') {
    // Final: a signature that landed with an error can never land again.
    const refused = ownRefusal(state.err, instructionOf(prev), deps.programId);
    if (refused) throw refused;
    return { kind: 'rebuild', alone: prev.batch !== undefined };
  }
  // Expired as far as one read can tell: two observations seconds apart.
  const proof = await watch.provedExpired(prev.signature, prev.lastValidBlockHeight, {
    gapMs: deps.expiryGapMs ?? EXPIRY_GAP_MS,
    sleep,
  });
  if (proof.kind === 'landed') return done();
  if (proof.kind === 'failed') {
    const refused = ownRefusal(proof.err, instructionOf(prev), deps.programId);
    if (refused) throw refused;
    return { kind: 'rebuild', alone: prev.batch !== undefined };
  }
  if (proof.kind !== 'expired') throw new UnprovenExpiryError(prev.signature, 1000);
  // Then the effect itself: an Email of this recipient with this CID, from this sender.
  const found = await findDelivered(deps, input, prev, proof.passedSlot);
  if (found) {
    return {
      kind: 'done',
      submit: { ...prev, index: found.index.toString(), emailAddress: found.address, confirmed: true },
    };
  }
  return { kind: 'rebuild', alone: false };
}

/**
 * Where a checkpointed, unconfirmed send stands when its job fails for good
 * (delivery/pipeline.ts), read without sending anything: `landed` (its
 * status, or an Email with this CID), `unlanded` (landed with an error, or
 * proven expired and no Email with this CID: the message is not recorded
 * and cannot be by this signature), else `unproven` (it may still land).
 */
export async function finalOutcome(
  deps: Pick<SubmitDeps, 'connection' | 'programId' | 'authority' | 'watch' | 'expiryGapMs' | 'sleep'>,
  input: Pick<SubmitInput, 'wallet' | 'cid' | 'envelopeFrom'>,
  prev: Submitted,
): Promise<'landed' | 'unlanded' | 'unproven'> {
  const watch = deps.watch ?? new SignatureWatch(deps.connection);
  const proof = await watch.provedExpired(prev.signature, prev.lastValidBlockHeight, {
    gapMs: deps.expiryGapMs ?? EXPIRY_GAP_MS,
    sleep: deps.sleep,
  });
  if (proof.kind === 'landed') return 'landed';
  if (proof.kind === 'failed') return 'unlanded';
  if (proof.kind !== 'expired') return 'unproven';
  return (await findDelivered(deps, input, prev, proof.passedSlot)) ? 'landed' : 'unlanded';
}

/**
 * The Email account holding this job's message, if one exists: the
 * recipient's Email accounts from the lowest index the job ever signed at
 * to the current mail_count, read at `confirmed` (what the pipeline counts
 * as delivered) from a bank at or past `minContextSlot`, in
 * getMultipleAccounts calls of 100.
 */
export async function findDelivered(
  deps: Pick<SubmitDeps, 'connection' | 'programId' | 'authority'>,
  input: Pick<SubmitInput, 'wallet' | 'cid' | 'envelopeFrom'>,
  prev: Pick<Submitted, 'index' | 'since'>,
  minContextSlot: number,
): Promise<{ index: bigint; address: string } | null> {
  const [box] = await readAccountsSince(
    deps.connection,
    [mailboxAddress(deps.programId, input.wallet)[0]],
    'confirmed',
    minContextSlot,
  );
  if (!box || box.owner !== deps.programId) return null;
  const count = decodeMailbox(box.data).mailCount;
  const first = BigInt(prev.since || prev.index || '0');
  if (first >= count) return null;
  const indices: bigint[] = [];
  for (let i = first; i < count; i++) indices.push(i);
  const addresses = indices.map((i) => emailAddress(deps.programId, input.wallet, i)[0]);
  const accounts = await readAccountsSince(deps.connection, addresses, 'confirmed', minContextSlot);
  const wallet = new PublicKey(input.wallet);
  const hash = Buffer.from(fromHash(input.envelopeFrom));
  for (const [j, account] of accounts.entries()) {
    if (!account || account.owner !== deps.programId) continue;
    let email: ReturnType<typeof decodeEmail>;
    try {
      email = decodeEmail(account.data);
    } catch {
      continue;
    }
    if (
      email.cid === input.cid &&
      email.sender.equals(deps.authority.publicKey) &&
      email.recipient.equals(wallet) &&
      hash.equals(Buffer.from(email.fromHash))
    )
      return { index: indices[j] as bigint, address: (addresses[j] as PublicKey).toBase58() };
  }
  return null;
}

/** One SendMail in its own transaction, under the recipient's lease. */
async function sendAlone(
  deps: SubmitDeps,
  watch: SignatureWatch,
  input: SubmitInput,
  sleep: (ms: number) => Promise<void>,
): Promise<Submitted> {
  // Held (and kept alive) while this send reads mail_count and until it is processed (pipelined) or confirmed.
  const lease = await acquireWalletLease(deps.redis, deps.lockPrefix, input.wallet, 'sendmail', {
    ttlMs: deps.lockMs ?? 15_000,
    // Waiting long here would hold a worker slot that other recipients' mail could use.
    waitMs: 750,
    retryMs: 25,
    sleep,
  });
  if (!lease)
    throw new PendingError(`recipient ${input.wallet} is busy`, 400 + Math.floor(Math.random() * 600));
  const pipelined = deps.pipelined ?? false;
  let submit: Submitted;
  let raw: Buffer;
  try {
    const mailbox = await getMailbox(
      deps.connection,
      deps.programId,
      input.wallet,
      pipelined ? 'processed' : 'confirmed',
    );
    if (!mailbox) throw new PermanentDeliveryError('NoMailbox', `wallet ${input.wallet} has no mailbox`);
    const domain = relayDomainOf(deps.programId, mailbox, input.localDomains);
    if (domain === null) throw notOurDomain(input.wallet, mailbox.domain.toBase58());
    const index = mailbox.mailCount;
    const ix = sendMailInstruction({
      programId: deps.programId,
      sender: deps.authority.publicKey,
      recipient: input.wallet,
      index,
      fromHash: fromHash(input.envelopeFrom),
      cid: input.cid,
      domain,
    });
    const { budget } = await feeBookOf(deps.connection, deps.priorityFee).budget(
      [ix],
      deps.authority.publicKey,
      input.round ?? 0,
    );
    const { blockhash, lastValidBlockHeight } = await deps.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: deps.authority.publicKey, blockhash, lastValidBlockHeight }).add(
      ...budget,
      ix,
    );
    tx.sign(deps.authority);
    raw = tx.serialize({ verifySignatures: false });
    submit = {
      signature: bs58.encode(tx.signature ?? new Uint8Array()),
      ixOffset: budget.length,
      index: index.toString(),
      emailAddress: emailAddress(deps.programId, input.wallet, index)[0].toBase58(),
      lastValidBlockHeight,
      tx: raw.toString('base64'),
    };
    await input.checkpoint(submit);
    try {
      await sendSigned(deps.connection, raw, {
        preflightCommitment: pipelined ? 'processed' : 'confirmed',
      });
    } catch (err) {
      const program = parseMailProgramError(err, deps.programId);
      if (program && PERMANENT.has(program.name)) {
        throw new PermanentDeliveryError(program.name, `the chain refused SendMail: ${program.name}`);
      }
      throw err;
    }
    await waitFor(deps, watch, submit, pipelined ? 'processed' : 'confirmed', sleep, raw);
  } finally {
    // Releases only our own lease (it may have expired and been taken by another worker).
    await lease.release().catch(() => false);
  }
  if (pipelined) await waitFor(deps, watch, submit, 'confirmed', sleep, raw);
  return { ...submit, confirmed: true };
}

/**
 * The first state that settles waiting for `target` (landed, processed for
 * `processed`, failed); ExpiredError when not seen before the blockhash
 * expired; PendingError after the confirm timeout. `wire` is re-sent about
 * every 2 s meanwhile.
 */
async function watchUntil(
  deps: SubmitDeps,
  watch: SignatureWatch,
  prev: Submitted,
  target: 'processed' | 'confirmed',
  sleep: (ms: number) => Promise<void>,
  wire: Uint8Array,
): Promise<SignatureState> {
  const done = settledAt(target);
  const timeoutMs = deps.confirmTimeoutMs ?? 60_000;
  const notYet = () => new PendingError(`SendMail ${prev.signature} not ${target} yet`);
  let state: SignatureState;
  if (deps.watch) {
    // The process's poller asks about every waiting signature in one call (and rebroadcasts).
    state = await watch.wait(prev.signature, prev.lastValidBlockHeight, done, {
      fast: target === 'processed',
      timeoutMs,
      onTimeout: notYet,
      wire,
    });
  } else {
    const deadline = Date.now() + timeoutMs;
    watch.rebroadcast.track(prev.signature, wire, prev.lastValidBlockHeight);
    try {
      for (;;) {
        state = await watch.check(prev.signature, prev.lastValidBlockHeight);
        if (done(state)) break;
        if (Date.now() >= deadline) throw notYet();
        await watch.rebroadcast.tick();
        await sleep(watch.intervalMs(target === 'processed'));
      }
    } finally {
      watch.rebroadcast.untrack(prev.signature);
    }
  }
  if (state.kind === 'expired') throw new ExpiredError(prev.signature);
  return state;
}

/** Waits until the send reaches `target` (processed, or landed at confirmed); throws when it failed or expired. */
async function waitFor(
  deps: SubmitDeps,
  watch: SignatureWatch,
  prev: Submitted,
  target: 'processed' | 'confirmed',
  sleep: (ms: number) => Promise<void>,
  wire: Uint8Array,
): Promise<void> {
  const state = await watchUntil(deps, watch, prev, target, sleep, wire);
  if (state.kind === 'failed') {
    const refused = ownRefusal(state.err, instructionOf(prev), deps.programId);
    if (refused) throw refused;
    throw new Error(`SendMail ${prev.signature} failed on chain; will rebuild`);
  }
}
