// SendMail, signed by the domain authority. Crash safety: the signed
// transaction and its signature are checkpointed in the job before it is
// sent; a retry first asks the chain whether that signature landed and, while
// its blockhash is still valid, resends the very same bytes (the chain
// ignores duplicates), so a crash can never create two Email accounts.
// Sends to one recipient are serialized by a wallet-keyed lease
// (src/limits/lease.ts, swept with the account), because the Email
// account's address depends on the mailbox's mail_count at send time.
// Pipelined (the default, `[chain] pipeline_sendmail`): mail_count is read
// at `processed` and the lease is released once the send is processed, so
// the next send to the same recipient builds on it without waiting a slot
// for confirmation; the job itself still waits for `confirmed`. If a
// processed send is dropped (a skipped block), a later send built on it
// fails on chain (its Email address no longer matches) and is rebuilt by
// its retry, as is the dropped one: a fee is lost, never mail.
// Batched (`[chain] sendmail_batch_max` > 1): sends go through the worker
// process's SendMailBatcher (sendmail-batch.ts), several per transaction;
// a batch's retry resends its bytes only when the batch was marked sent, and
// a job whose batch failed on chain because of another message is sent
// alone here.
import { type Connection, type Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Redis } from 'ioredis';
import {
  emailAddress,
  fromHash,
  getMailbox,
  parseMailProgramError,
  sendMailInstruction,
} from '../../chain/index.ts';
import { relayDomainOf } from '../../chain/relay.ts';
import { acquireWalletLease } from '../../src/limits/lease.ts';
import { PendingError, PermanentDeliveryError } from '../errors.ts';
import type { StageResults } from '../jobs.ts';
import {
  batchMarkKey,
  notOurDomain,
  ownRefusal,
  PERMANENT,
  SendAloneError,
  type SendMailBatcher,
} from './sendmail-batch.ts';
import { type SignatureState, SignatureWatch, settledAt } from './signature-watch.ts';

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
  previous?: StageResults['submit'];
  /** Persists the checkpoint into the job before the transaction is sent. */
  checkpoint(submit: NonNullable<StageResults['submit']>): Promise<void>;
}

type Submitted = NonNullable<StageResults['submit']>;

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function submitSendMail(deps: SubmitDeps, input: SubmitInput): Promise<Submitted> {
  const sleep = deps.sleep ?? defaultSleep;
  const watch = deps.watch ?? new SignatureWatch(deps.connection);
  let alone = false;
  if (input.previous?.confirmed) return input.previous;
  if (input.previous) {
    const prev = input.previous;
    const outcome = await recheck(deps, watch, prev);
    if (outcome === 'landed') return { ...prev, confirmed: true };
    if (outcome === 'pending' || outcome === 'processed') {
      // Same bytes again: harmless if it already reached the node.
      await deps.connection
        .sendRawTransaction(Buffer.from(prev.tx, 'base64'), { skipPreflight: true })
        .catch(() => {});
      await waitFor(deps, watch, prev, 'confirmed', sleep);
      return { ...prev, confirmed: true };
    }
    // 'abandoned', 'expired' or 'failed': build a new transaction below; a
    // batch that failed because of another message is not batched again.
    alone = outcome === 'failed' && prev.batch !== undefined;
  }
  if (deps.batcher && !alone) {
    try {
      return await deps.batcher.send(input);
    } catch (err) {
      if (!(err instanceof SendAloneError)) throw err;
    }
  }
  return sendAlone(deps, watch, input, sleep);
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
    const { blockhash, lastValidBlockHeight } = await deps.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: deps.authority.publicKey, blockhash, lastValidBlockHeight }).add(
      sendMailInstruction({
        programId: deps.programId,
        sender: deps.authority.publicKey,
        recipient: input.wallet,
        index,
        fromHash: fromHash(input.envelopeFrom),
        cid: input.cid,
        domain,
      }),
    );
    tx.sign(deps.authority);
    const raw = tx.serialize({ verifySignatures: false });
    submit = {
      signature: bs58.encode(tx.signature ?? new Uint8Array()),
      index: index.toString(),
      emailAddress: emailAddress(deps.programId, input.wallet, index)[0].toBase58(),
      lastValidBlockHeight,
      tx: raw.toString('base64'),
    };
    await input.checkpoint(submit);
    try {
      await deps.connection.sendRawTransaction(raw, {
        preflightCommitment: pipelined ? 'processed' : 'confirmed',
      });
    } catch (err) {
      const program = parseMailProgramError(err, deps.programId);
      if (program && PERMANENT.has(program.name)) {
        throw new PermanentDeliveryError(program.name, `the chain refused SendMail: ${program.name}`);
      }
      throw err;
    }
    await waitFor(deps, watch, submit, pipelined ? 'processed' : 'confirmed', sleep);
  } finally {
    // Releases only our own lease (it may have expired and been taken by another worker).
    await lease.release().catch(() => false);
  }
  if (pipelined) await waitFor(deps, watch, submit, 'confirmed', sleep);
  return { ...submit, confirmed: true };
}

type Recheck = 'landed' | 'processed' | 'pending' | 'expired' | 'failed' | 'abandoned';

/** Where the checkpointed send stands; throws when the chain refused this job's own message for good. */
async function recheck(deps: SubmitDeps, watch: SignatureWatch, prev: Submitted): Promise<Recheck> {
  const state = await watch.check(prev.signature, prev.lastValidBlockHeight);
  if (state.kind === 'failed') {
    const refused = ownRefusal(state.err, prev.batch?.position ?? 0, deps.programId);
    if (refused) throw refused;
    return 'failed';
  }
  if (state.kind === 'pending' && prev.batch && prev.batch.size > 1) {
    // Other jobs' messages ride in these bytes: resend only a batch that was marked sent;
    // one that was not is marked abandoned, so its sender never sends it (sendmail-batch.ts).
    const key = batchMarkKey(deps.lockPrefix, prev.signature);
    const won = await deps.redis.set(key, 'abandoned', 'EX', 3600, 'NX');
    if (won === 'OK') return 'abandoned';
    if ((await deps.redis.get(key)) === 'abandoned') return 'abandoned';
  }
  return state.kind;
}

/** Waits until the send reaches `target` (processed, or landed at confirmed); throws when it failed or expired. */
async function waitFor(
  deps: SubmitDeps,
  watch: SignatureWatch,
  prev: Submitted,
  target: 'processed' | 'confirmed',
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  const done = settledAt(target);
  const timeoutMs = deps.confirmTimeoutMs ?? 60_000;
  const notYet = () => new PendingError(`SendMail ${prev.signature} not ${target} yet`);
  let state: SignatureState;
  if (deps.watch) {
    // The process's poller asks about every waiting signature in one call.
    state = await watch.wait(prev.signature, prev.lastValidBlockHeight, done, {
      fast: target === 'processed',
      timeoutMs,
      onTimeout: notYet,
    });
  } else {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      state = await watch.check(prev.signature, prev.lastValidBlockHeight);
      if (done(state)) break;
      if (Date.now() >= deadline) throw notYet();
      await sleep(target === 'processed' ? 10 : 50);
    }
  }
  if (state.kind === 'failed') {
    const refused = ownRefusal(state.err, prev.batch?.position ?? 0, deps.programId);
    if (refused) throw refused;
    throw new Error(`SendMail ${prev.signature} failed on chain; will rebuild`);
  }
  if (state.kind === 'expired')
    throw new Error(`SendMail ${prev.signature} expired before landing; will rebuild`);
}
